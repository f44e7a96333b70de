#pragma once

// MasterLink over gRPC: what a storage node uses to reach a remote master.
// Every call has the deadline of GrpcChannelOptions; a master that is down
// or silent gives UNAVAILABLE or TIMEOUT within it, never a hang, so the
// heartbeat loop keeps its pace.
//
// Task times in heartbeat replies are translated to this process's clock.
//
// Thread safety: thread-safe.

#include <memory>
#include <span>
#include <string>

#include "core/master_link.h"
#include "rpc/call_recorder.h"
#include "rpc/grpc_channel_options.h"

namespace mooncake_tier::rpc {

class MasterStub;

class GrpcMasterLink final : public MasterLink {
 public:
  // INVALID_ARGUMENT for an empty target or a non-positive deadline.
  // Connects lazily.
  static Result<std::unique_ptr<GrpcMasterLink>> Create(
      GrpcChannelOptions options);
  ~GrpcMasterLink() override;

  Result<NodeId> RegisterNode(
      const NodeSpec& spec,
      std::span<const SsdInventoryEntry> inventory) override;
  Result<HeartbeatReply> Heartbeat(NodeId node, uint32_t max_tasks) override;
  // Bounded by the deadline like every call: a master that does not answer
  // gives UNAVAILABLE or TIMEOUT, and the node stops anyway.
  Status DeregisterNode(NodeId node) override;
  Status NotifyOffloadSuccess(NodeId node, TaskId task) override;
  Status NotifyOffloadFailure(NodeId node, TaskId task,
                              const Status& cause) override;
  Status ReportSsdCorruption(NodeId node,
                             std::span<const std::string> keys) override;
  // A reply whose staged replica is missing or not in memory is a
  // malformed reply (INTERNAL).
  Result<ReplicaDescriptor> PromotionAllocStart(NodeId node,
                                                TaskId task) override;
  Status NotifyPromotionSuccess(NodeId node, TaskId task) override;
  // An OK `cause` is refused (INVALID_ARGUMENT): a failure must say why.
  Status NotifyPromotionFailure(NodeId node, TaskId task,
                                const Status& cause) override;
  Result<NodeView> GetNode(NodeId node) override;

  // Calls made, by MasterMethod.
  const CallRecorder& recorder() const;

 private:
  explicit GrpcMasterLink(std::unique_ptr<MasterStub> stub);
  std::unique_ptr<MasterStub> stub_;
};

}  // namespace mooncake_tier::rpc
