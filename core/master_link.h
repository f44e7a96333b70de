#pragma once

// MasterLink: the calls a storage node makes to the master, as an interface
// with one implementation per way of reaching it. LocalMasterLink (below)
// calls a Master in the same process; rpc/grpc_master_link.h reaches a
// remote one. It lives in core, next to the Master it mirrors, so that
// node/ (which calls it) and rpc/ (which implements it) both depend on core
// alone. It names no transport and stays header-only.
//
// Thread safety: implementations are safe to call from many threads.

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/master.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

class MasterLink {
 public:
  virtual ~MasterLink() = default;
  virtual Result<NodeId> RegisterNode(
      const NodeSpec& spec, std::span<const SsdInventoryEntry> inventory) = 0;
  // Hands out at most `max_tasks` offload tasks.
  virtual Result<HeartbeatReply> Heartbeat(NodeId node, uint32_t max_tasks) = 0;
  // The node is stopping cleanly: the master drops it now rather than after
  // node_ttl (Master::DeregisterNode). NODE_NOT_FOUND when the master no
  // longer knows it.
  virtual Status DeregisterNode(NodeId node) = 0;
  virtual Status NotifyOffloadSuccess(NodeId node, TaskId task) = 0;
  virtual Status NotifyOffloadFailure(NodeId node, TaskId task,
                                      const Status& cause) = 0;
  virtual Status ReportSsdCorruption(NodeId node,
                                     std::span<const std::string> keys) = 0;
  // Promotion: stage DRAM for a task, then report how it went.
  virtual Result<ReplicaDescriptor> PromotionAllocStart(NodeId node,
                                                        TaskId task) = 0;
  virtual Status NotifyPromotionSuccess(NodeId node, TaskId task) = 0;
  virtual Status NotifyPromotionFailure(NodeId node, TaskId task,
                                        const Status& cause) = 0;
  // How to reach another node's segment (a promotion staged there).
  virtual Result<NodeView> GetNode(NodeId node) = 0;
};

// MasterLink onto a Master in the same process.
class LocalMasterLink final : public MasterLink {
 public:
  explicit LocalMasterLink(Master* master) : master_(master) {}
  Result<NodeId> RegisterNode(
      const NodeSpec& spec,
      std::span<const SsdInventoryEntry> inventory) override {
    return master_->RegisterNode(spec, inventory);
  }
  Result<HeartbeatReply> Heartbeat(NodeId node, uint32_t max_tasks) override {
    return master_->Heartbeat(node, max_tasks);
  }
  Status DeregisterNode(NodeId node) override {
    return master_->DeregisterNode(node);
  }
  Status NotifyOffloadSuccess(NodeId node, TaskId task) override {
    return master_->NotifyOffloadSuccess(node, task);
  }
  Status NotifyOffloadFailure(NodeId node, TaskId task,
                              const Status& cause) override {
    return master_->NotifyOffloadFailure(node, task, cause);
  }
  Status ReportSsdCorruption(NodeId node,
                             std::span<const std::string> keys) override {
    master_->ReportSsdCorruption(node, keys);
    return Status::Ok();
  }
  Result<ReplicaDescriptor> PromotionAllocStart(NodeId node,
                                                TaskId task) override {
    return master_->PromotionAllocStart(node, task);
  }
  Status NotifyPromotionSuccess(NodeId node, TaskId task) override {
    return master_->NotifyPromotionSuccess(node, task);
  }
  Status NotifyPromotionFailure(NodeId node, TaskId task,
                                const Status& cause) override {
    return master_->NotifyPromotionFailure(node, task, cause);
  }
  Result<NodeView> GetNode(NodeId node) override {
    return master_->FindNode(node);
  }

 private:
  Master* const master_;
};

}  // namespace mooncake_tier
