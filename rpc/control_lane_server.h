#pragma once

// The master's end of the control lane (docs/design/control-path.md): a
// UCX worker whose active messages carry the hot client calls (Exists,
// GetReplicaList, ProbePrefix) beside gRPC, for a fraction
// of a gRPC call's cost.
//
// Each request is served on the worker's progress thread, inside the
// active-message callback: MasterService::ServeLaneCall runs the call
// through the same handler, leader check and recorder as gRPC (so a
// standby answers NOT_LEADER and the client goes back to gRPC). Only calls
// that never wait are carried, so the thread is never held by one. The
// answer goes back on the endpoint the request came in on, without waiting;
// the progress thread reaps sent answers. UCX cannot cancel a send, so an
// answer a client does not take stays until its endpoint fails; the
// options bound those per client and in all, and past a bound an answer is
// dropped (counted) and its caller times out. An answer too large for the
// lane answers NOT_APPLICABLE (the client asks over gRPC). A request that
// does not decode is dropped (counted); one whose method the lane does not
// carry, or whose payload does not parse, is answered so; none changes
// anything.
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
#include "absl/container/flat_hash_map.h"
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
  // Answers not yet taken by their clients, at most, in all and per client
  // (per endpoint); past a limit an answer is dropped and its caller times
  // out. Defaults: 4096 answers and 256 MiB in all, 64 answers and 16 MiB
  // per client. REQUIRES: positive; per client at least one message
  // (kMaxControlLaneBytes).
  size_t max_unsent_replies = 4096;
  size_t max_unsent_bytes = 256u << 20;
  size_t max_unsent_replies_per_client = 64;
  size_t max_unsent_bytes_per_client = 16u << 20;
};

struct ControlLaneServerStats {
  uint64_t calls = 0;            // answered, whatever the outcome
  uint64_t malformed = 0;        // requests that did not decode
  uint64_t replies_dropped = 0;  // over a limit, or failed to send
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
  struct Outgoing {
    std::unique_ptr<std::string> payload;
    void* request = nullptr;
    ucp_ep_h ep = nullptr;
  };
  // What one client (endpoint) has not taken yet.
  struct Backlog {
    size_t replies = 0;
    size_t bytes = 0;
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
  absl::flat_hash_map<ucp_ep_h, Backlog> backlog_ ABSL_GUARDED_BY(mu_);
  size_t unsent_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  ControlLaneServerStats stats_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<UcxWorker> worker_;
};

}  // namespace mooncake_tier::rpc
