#pragma once

// One UCP worker and the thread that drives it.
//
// The worker runs in UCS_THREAD_MODE_SERIALIZED: every call on it, and on
// the endpoints, keys and requests made from it, happens with the owner's
// mutex held (`mu`, given at creation). The progress thread takes the same
// mutex around each round of ucp_worker_progress, so UCX callbacks
// (completions, active messages, endpoint errors) run with it held too.
// Between rounds the thread sleeps on the worker's event descriptor; a
// thread that issues operations calls Signal() to wake it.
//
// Thread safety: Signal() and address() from any thread; handle() only with
// the owner's mutex held; Stop() and destruction from the owner only.

#include <ucp/api/ucp.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "base/mutex.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

// Registers `callback` (called with `arg`) for the active messages `id`
// of `worker`, whole messages only. `what` names the handler in the error.
// REQUIRES: the worker's mutex held.
Status SetAmHandler(ucp_worker_h worker, unsigned id,
                    ucp_am_recv_callback_t callback, void* arg,
                    std::string_view what);

// An endpoint of `worker` to the worker at `address`, with peer error
// handling: `on_error(arg, ep, status)` runs from progress (under the
// worker's mutex) when the peer fails. `what` names the peer in the error.
// REQUIRES: the worker's mutex held.
Result<ucp_ep_h> ConnectPeer(ucp_worker_h worker, const std::string& address,
                             ucp_err_handler_cb_t on_error, void* arg,
                             std::string_view what);

class UcxWorker {
 public:
  // Runs after each progress round on the progress thread, with `mu` held;
  // returns true when it issued operations that need progress right away.
  using AfterProgress = std::function<bool()>;

  // Creates the worker on `context` and starts its progress thread.
  // `mu` and `context` must outlive the worker.
  static Result<std::unique_ptr<UcxWorker>> Create(
      ucp_context_h context, Mutex* mu, AfterProgress after_progress = {});
  // The same worker with no progress thread: its callers drive it (with
  // `mu` held), sleeping on event_fd() between rounds.
  static Result<std::unique_ptr<UcxWorker>> CreateDriven(ucp_context_h context,
                                                         Mutex* mu);
  // Stops the thread and destroys the worker. REQUIRES: the owner has closed
  // its endpoints and released its keys and requests.
  ~UcxWorker();

  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  ucp_worker_h handle() const { return worker_; }
  // The worker address peers pass to ucp_ep_create (opaque bytes).
  const std::string& address() const { return address_; }
  // Readable when the worker has events, once armed (ucp_worker_arm).
  int event_fd() const { return event_fd_; }

  // Wakes the progress thread: call after issuing operations.
  void Signal();

  // Joins the progress thread; idempotent. Afterwards nothing drives the
  // worker unless the owner calls ProgressOnce.
  void Stop();

  // One progress round on the caller's thread. REQUIRES: `mu` held and the
  // progress thread stopped.
  void ProgressOnce();

 private:
  UcxWorker(ucp_worker_h worker, int event_fd, std::string address, Mutex* mu);
  void Run();

  ucp_worker_h const worker_;
  const int event_fd_;
  const std::string address_;
  Mutex* const mu_;
  AfterProgress after_progress_;  // set before the thread starts
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace mooncake_tier
