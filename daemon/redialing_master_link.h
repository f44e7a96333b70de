#pragma once

// A MasterLink over gRPC that dials the master afresh when it stays
// unreachable.
//
// Why: with Debian's gRPC 1.51 a channel whose master went away reconnects
// only after several seconds (about 7 to 9 s measured on loopback, although
// rpc::GrpcChannelOptions caps the reconnect backoff at 1 s), so a node
// would reach a master that starts late, or restarts, long after it is up.
// A new channel connects at its first call. This link forwards every call
// to an rpc::GrpcMasterLink and, when a call fails with UNAVAILABLE and the
// current channel is older than `redial_interval`, replaces it with a new
// one for the next call. Other failures (TIMEOUT, NODE_NOT_FOUND, ...)
// leave the channel alone.
//
// Thread safety: thread-safe. A call in flight keeps using the channel it
// started on; the swap only affects later calls.

#include <chrono>
#include <memory>
#include <span>
#include <string>

#include "absl/base/thread_annotations.h"
#include "core/master_link.h"
#include "core/mutex.h"
#include "rpc/grpc_channel_options.h"

namespace mooncake_tier::daemon {

class RedialingMasterLink final : public MasterLink {
 public:
  // INVALID_ARGUMENT as rpc::GrpcMasterLink::Create. `redial_interval`:
  // the least time between two new channels.
  static Result<std::unique_ptr<RedialingMasterLink>> Create(
      rpc::GrpcChannelOptions options,
      Duration redial_interval = std::chrono::seconds(1));
  ~RedialingMasterLink() override;

  Result<NodeId> RegisterNode(
      const NodeSpec& spec,
      std::span<const SsdInventoryEntry> inventory) override;
  Result<HeartbeatReply> Heartbeat(NodeId node, uint32_t max_tasks) override;
  Status NotifyOffloadSuccess(NodeId node, TaskId task) override;
  Status NotifyOffloadFailure(NodeId node, TaskId task,
                              const Status& cause) override;
  Status ReportSsdCorruption(NodeId node,
                             std::span<const std::string> keys) override;
  Result<ReplicaDescriptor> PromotionAllocStart(NodeId node,
                                                TaskId task) override;
  Status NotifyPromotionSuccess(NodeId node, TaskId task) override;
  Status NotifyPromotionFailure(NodeId node, TaskId task,
                                const Status& cause) override;
  Result<NodeView> GetNode(NodeId node) override;

  // New channels made so far (for tests and logs).
  uint64_t redials() const;

 private:
  RedialingMasterLink(rpc::GrpcChannelOptions options, Duration interval,
                      std::shared_ptr<MasterLink> link);
  std::shared_ptr<MasterLink> Current() const;
  // Replaces the channel when `status` says the master is unreachable.
  void AfterCall(const Status& status);

  template <typename R, typename Call>
  R Forward(Call call) {
    R result = call(*Current());
    AfterCall(StatusOf(result));
    return result;
  }
  static const Status& StatusOf(const Status& s) { return s; }
  template <typename T>
  static Status StatusOf(const Result<T>& r) {
    return r.status();
  }

  const rpc::GrpcChannelOptions options_;
  const Duration interval_;
  mutable Mutex mu_;
  std::shared_ptr<MasterLink> link_ ABSL_GUARDED_BY(mu_);
  TimePoint dialed_at_ ABSL_GUARDED_BY(mu_);
  uint64_t redials_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace mooncake_tier::daemon
