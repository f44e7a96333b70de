#pragma once

// MasterApi and MasterLink onto a Master in the same process: what the
// embedded cluster, the standalone daemon's node and tests use instead of
// gRPC. The interfaces themselves are in protocol/.
//
// Thread safety: as the Master's methods.

#include <span>
#include <string>
#include <vector>

#include "core/master.h"
#include "protocol/master_api.h"
#include "protocol/master_link.h"

namespace mooncake_tier {

class LocalMasterApi final : public MasterApi {
 public:
  explicit LocalMasterApi(Master* master) : master_(master) {}
  // Waits for room as the master's put_wait_timeout says.
  std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests) override {
    return master_->PutStart(
        requests, master_->clock()->Now() + master_->put_wait_timeout());
  }
  std::vector<Status> PutEnd(const ClientId& client,
                             std::span<const std::string> keys) override {
    return master_->PutEnd(client, keys);
  }
  std::vector<Status> PutRevoke(const ClientId& client,
                                std::span<const std::string> keys) override {
    return master_->PutRevoke(client, keys);
  }
  std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys) override {
    return master_->GetReplicaList(keys);
  }
  Status ReleaseLeases(std::span<const LeaseRelease> releases) override {
    master_->ReleaseLeases(releases);
    return Status::Ok();
  }
  std::vector<Result<ExistsInfo>> Exists(
      std::span<const std::string> keys) override {
    return master_->Exists(keys);
  }
  std::vector<Status> Remove(std::span<const std::string> keys,
                             RemoveOptions options) override {
    return master_->Remove(keys, options);
  }
  std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) override {
    return master_->GetGroup(group_ids);
  }
  std::vector<Status> RemoveGroup(std::span<const std::string> group_ids,
                                  RemoveOptions options) override {
    return master_->RemoveGroup(group_ids, options);
  }
  Result<NodeView> GetNode(NodeId node) override {
    return master_->FindNode(node);
  }

 private:
  Master* const master_;
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
  Status Heartbeat(NodeId node, const std::optional<SsdReport>& ssd) override {
    return master_->Heartbeat(node, ssd);
  }
  Result<NodeTasks> PullTasks(NodeId node, uint32_t max_tasks,
                              Duration wait) override {
    return master_->PullTasks(node, max_tasks, master_->clock()->Now() + wait);
  }
  void InterruptPull(NodeId node) override { master_->InterruptPull(node); }
  Status DeregisterNode(NodeId node) override {
    return master_->DeregisterNode(node);
  }
  // Task reports reach the master as the node's batches.
  std::vector<Status> NotifyOffloadSuccess(
      NodeId node, std::span<const TaskId> tasks) override {
    return master_->NotifyOffloadSuccess(node, tasks);
  }
  std::vector<Status> NotifyOffloadFailure(
      NodeId node, std::span<const TaskFailure> failures) override {
    return master_->NotifyOffloadFailure(node, failures);
  }
  Status ReportSsdCorruption(NodeId node,
                             std::span<const std::string> keys) override {
    master_->ReportSsdCorruption(node, keys);
    return Status::Ok();
  }
  std::vector<Result<ReplicaDescriptor>> PromotionAllocStart(
      NodeId node, std::span<const TaskId> tasks) override {
    return master_->PromotionAllocStart(node, tasks);
  }
  std::vector<Status> NotifyPromotionSuccess(
      NodeId node, std::span<const TaskId> tasks) override {
    return master_->NotifyPromotionSuccess(node, tasks);
  }
  std::vector<Status> NotifyPromotionFailure(
      NodeId node, std::span<const TaskFailure> failures) override {
    return master_->NotifyPromotionFailure(node, failures);
  }
  Result<NodeView> GetNode(NodeId node) override {
    return master_->FindNode(node);
  }

 private:
  Master* const master_;
};

}  // namespace mooncake_tier
