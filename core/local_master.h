#pragma once

// MasterApi and MasterLink onto a Master in the same process: what the
// embedded cluster, the standalone daemon's node, the gRPC service and
// tests use to reach a master without the network. The interfaces
// themselves are in protocol/; this header names Master only by a forward
// declaration, so its users do not include core/master.h.
//
// Thread safety: as the Master's methods.

#include <span>
#include <string>
#include <vector>

#include "protocol/master_api.h"
#include "protocol/master_link.h"

namespace mooncake_tier {

class Master;  // core/master.h

class LocalMasterApi final : public MasterApi {
 public:
  // `master` must outlive this.
  explicit LocalMasterApi(Master* master) : master_(master) {}
  // Waits for room as the master's put_wait_timeout says.
  std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests) override;
  std::vector<Result<ReplicaDescriptor>> PutStartWithin(
      std::span<const PutStartRequest> requests, Duration max_wait) override;
  std::vector<Status> PutEnd(const ClientId& client,
                             std::span<const std::string> keys) override;
  std::vector<Status> PutRevoke(const ClientId& client,
                                std::span<const std::string> keys) override;
  std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys) override;
  Result<size_t> ReleaseLeases(std::span<const LeaseRelease> releases) override;
  std::vector<Result<ExistsInfo>> Exists(
      std::span<const std::string> keys) override;
  Result<PrefixInfo> ProbePrefix(std::span<const std::string> keys) override;
  std::vector<Status> Remove(std::span<const std::string> keys,
                             RemoveOptions options) override;
  std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) override;
  std::vector<Status> RemoveGroup(std::span<const std::string> group_ids,
                                  RemoveOptions options) override;
  Result<NodeView> GetNode(NodeId node) override;

 private:
  Master* const master_;
};

// MasterLink onto a Master in the same process. Task reports reach the
// master as the node's batches.
class LocalMasterLink final : public MasterLink {
 public:
  // `master` must outlive this.
  explicit LocalMasterLink(Master* master) : master_(master) {}
  Result<NodeId> RegisterNode(const NodeSpec& spec,
                              std::span<const SsdInventoryEntry> inventory,
                              std::span<const DramEntry> dram) override;
  Result<DirectoryChanges> SyncDirectory(NodeId node, uint64_t acked,
                                         uint32_t max_changes,
                                         Duration wait) override;
  Status Heartbeat(NodeId node, const std::optional<SsdReport>& ssd) override;
  Result<NodeTasks> PullTasks(NodeId node, uint32_t max_tasks,
                              Duration wait) override;
  void InterruptPull(NodeId node) override;
  Status DeregisterNode(NodeId node) override;
  std::vector<Status> NotifyOffloadSuccess(
      NodeId node, std::span<const TaskId> tasks) override;
  std::vector<Status> NotifyOffloadFailure(
      NodeId node, std::span<const TaskFailure> failures) override;
  Status ReportSsdCorruption(NodeId node,
                             std::span<const std::string> keys) override;
  std::vector<Result<ReplicaDescriptor>> PromotionAllocStart(
      NodeId node, std::span<const TaskId> tasks) override;
  std::vector<Status> NotifyPromotionSuccess(
      NodeId node, std::span<const TaskId> tasks) override;
  std::vector<Status> NotifyPromotionFailure(
      NodeId node, std::span<const TaskFailure> failures) override;
  Result<NodeView> GetNode(NodeId node) override;

 private:
  Master* const master_;
};

}  // namespace mooncake_tier
