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

#include "node/master_link.h"
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
  Status NotifyOffloadSuccess(NodeId node, TaskId task) override;
  Status NotifyOffloadFailure(NodeId node, TaskId task,
                              const Status& cause) override;
  Status ReportSsdCorruption(NodeId node,
                             std::span<const std::string> keys) override;
  Result<NodeView> GetNode(NodeId node) override;

  // Promotion is not on the wire yet (the proto keeps room for it): these
  // return INTERNAL naming the call. Heartbeats over gRPC carry no
  // promotion tasks, so a node never gets to call them.
  Result<ReplicaDescriptor> PromotionAllocStart(NodeId node,
                                                TaskId task) override;
  Status NotifyPromotionSuccess(NodeId node, TaskId task) override;
  Status NotifyPromotionFailure(NodeId node, TaskId task,
                                const Status& cause) override;

  // Calls made, by MasterMethod.
  const CallRecorder& recorder() const;

 private:
  explicit GrpcMasterLink(std::unique_ptr<MasterStub> stub);
  std::unique_ptr<MasterStub> stub_;
};

}  // namespace mooncake_tier::rpc
