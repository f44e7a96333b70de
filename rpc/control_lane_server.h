#pragma once

// The master's end of the control lane (docs/design/control-path.md): a
// UCX worker whose active messages carry the hot client calls (Exists,
// GetReplicaList, ProbePrefix, ReleaseLeases) beside gRPC, for a fraction
// of a gRPC call's cost.
//
// Each request is served on the worker's progress thread, inside the
// active-message callback: MasterService::ServeLaneCall runs the call
// through the same handler, leader check and recorder as gRPC (so a
// standby answers NOT_LEADER and the client goes back to gRPC). Only calls
// that never wait are carried, so the thread is never held by one. The
// answer goes back on the endpoint the request came in on, without waiting;
// the progress thread reaps sent answers and cancels one a client has not
// taken within `reply_timeout`. Past `max_unsent_replies` answers in
// flight, new answers are dropped (counted) and their callers time out.
// A malformed request is answered INVALID_ARGUMENT when its header names
// a request, else dropped (counted); it changes nothing.
//
// Creating the server publishes its address through the service's
// GetControlLane; destroying it withdraws the address, stops the thread
// and cancels what is in flight.
//
// Thread safety: stats() from any thread; destruction from one thread.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "mooncake_tier/status.h"
#include "rpc/master_service.h"
#include "transport/ucx_context.h"
#include "transport/ucx_worker.h"

namespace mooncake_tier::rpc {

struct ControlLaneServerOptions {
  // UCX transports as UCX_TLS spells them; empty keeps UCX's configuration.
  std::string transports;
  // An answer the client has not taken by then is cancelled. Default: 5 s.
  Duration reply_timeout = std::chrono::seconds(5);
  // Answers in flight at most. Default: 4096.
  size_t max_unsent_replies = 4096;
};

struct ControlLaneServerStats {
  uint64_t calls = 0;              // answered, whatever the outcome
  uint64_t malformed = 0;          // requests that did not decode
  uint64_t replies_dropped = 0;    // over the cap, or failed to send
  uint64_t replies_cancelled = 0;  // not taken within reply_timeout
};

class ControlLaneServer {
 public:
  // `service` must outlive the server.
  static Result<std::unique_ptr<ControlLaneServer>> Create(
      MasterService* service, ControlLaneServerOptions options = {});
  ~ControlLaneServer();

  ControlLaneServer(const ControlLaneServer&) = delete;
  ControlLaneServer& operator=(const ControlLaneServer&) = delete;

  // The worker address clients connect to (also what GetControlLane says).
  const std::string& address() const { return worker_->address(); }
  ControlLaneServerStats stats() const;

 private:
  using SteadyClock = std::chrono::steady_clock;
  struct Outgoing {
    std::unique_ptr<std::string> payload;
    void* request = nullptr;
    SteadyClock::time_point deadline;
  };

  ControlLaneServer(MasterService* service, ControlLaneServerOptions options);
  Status Init();
  static ucs_status_t OnRequest(void* arg, const void* header,
                                size_t header_length, void* data, size_t length,
                                const ucp_am_recv_param_t* param);
  void Serve(std::string_view message, ucp_ep_h reply_ep)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Reply(ucp_ep_h ep, std::string payload)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool AfterProgress() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  MasterService* const service_;
  const ControlLaneServerOptions options_;
  std::unique_ptr<UcxContext> context_;
  mutable Mutex mu_;
  std::vector<Outgoing> outgoing_ ABSL_GUARDED_BY(mu_);
  ControlLaneServerStats stats_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<UcxWorker> worker_;
};

}  // namespace mooncake_tier::rpc
