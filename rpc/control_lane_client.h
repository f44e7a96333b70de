#pragma once

// A client's end of the master's control lane
// (docs/design/control-path.md): one UCX endpoint to the lane's worker,
// over which Call sends a request and waits for its answer.
//
// There is no progress thread: a caller drives the worker itself while it
// waits. It polls for up to `spin` (an answer on the lane normally takes
// tens of microseconds, less than a thread's wake-up costs here), then
// sleeps on the worker's event descriptor in slices of at most 1 ms, so a
// slow master costs no CPU. Several callers may wait at once; whichever
// progresses the worker hands each answer to its caller.
//
// Failures: a call on a lane that is not connected, or whose endpoint
// fails (before or while waiting), answers UNAVAILABLE and leaves the lane
// disconnected until the next Connect; one not answered within its timeout
// answers TIMEOUT (its send is cancelled; a late answer is dropped). The
// master's own verdict (NOT_LEADER, INVALID_ARGUMENT, ...) comes back as
// the call's status.
//
// Thread safety: thread-safe; destruction while no call runs.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "mooncake_tier/status.h"
#include "transport/ucx_context.h"
#include "transport/ucx_worker.h"

namespace mooncake_tier::rpc {

struct ControlLaneClientStats {
  uint64_t calls = 0;         // sent
  uint64_t timeouts = 0;      // not answered in time
  uint64_t failures = 0;      // endpoint failures seen
  uint64_t late_replies = 0;  // answers to calls that had given up
  uint64_t malformed_replies = 0;
};

class ControlLaneClient {
 public:
  // `transports` as UCX_TLS spells them; empty keeps UCX's configuration.
  static Result<std::unique_ptr<ControlLaneClient>> Create(
      const std::string& transports,
      Duration spin = std::chrono::microseconds(200));
  ~ControlLaneClient();

  ControlLaneClient(const ControlLaneClient&) = delete;
  ControlLaneClient& operator=(const ControlLaneClient&) = delete;

  // Opens an endpoint to the lane at `address` (a worker address from
  // GetControlLane), closing any previous one: its waiting calls fail
  // UNAVAILABLE. UNAVAILABLE when UCX cannot reach the address.
  Status Connect(const std::string& address);
  // Closes the endpoint; waiting calls fail UNAVAILABLE.
  void Disconnect();
  // Whether an endpoint is open and has not failed.
  bool connected() const;

  // Sends one call of `method` (a MasterMethod) with `request` (the
  // serialized request of its gRPC twin) and returns the serialized
  // response, or the call's status (see the class comment).
  Result<std::string> Call(uint32_t method, std::string_view request,
                           Duration timeout);

  ControlLaneClientStats stats() const;

 private:
  struct Pending {
    bool done = false;
    Status status;
    std::string payload;
  };
  // A send given up on while in flight: its buffer lives until UCX is done.
  struct Abandoned {
    std::unique_ptr<std::string> message;
    void* request = nullptr;
  };

  ControlLaneClient(std::unique_ptr<UcxContext> context, Duration spin);
  ucp_worker_h worker() const { return worker_->handle(); }
  static ucs_status_t OnReply(void* arg, const void* header,
                              size_t header_length, void* data, size_t length,
                              const ucp_am_recv_param_t* param);
  static void OnError(void* arg, ucp_ep_h ep, ucs_status_t status);
  // Fails every waiting call with `why` and closes the endpoint.
  void FailAll(const Status& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CloseEndpoint() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReapAbandoned() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<UcxContext> context_;
  const Duration spin_;
  mutable Mutex mu_;
  // Driven by callers, under mu_; destroyed before mu_ and context_.
  std::unique_ptr<UcxWorker> worker_;
  ucp_ep_h ep_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, Pending*> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<Abandoned> abandoned_ ABSL_GUARDED_BY(mu_);
  ControlLaneClientStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier::rpc
