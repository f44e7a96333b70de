#include "core/local_master.h"

#include <algorithm>

#include "core/master.h"

namespace mooncake_tier {

// ---- LocalMasterApi ----

std::vector<Result<ReplicaDescriptor>> LocalMasterApi::PutStart(
    std::span<const PutStartRequest> requests) {
  return master_->PutStart(
      requests, master_->clock()->Now() + master_->put_wait_timeout());
}

std::vector<Result<ReplicaDescriptor>> LocalMasterApi::PutStartWithin(
    std::span<const PutStartRequest> requests, Duration max_wait) {
  const Duration wait =
      std::clamp(max_wait, Duration::zero(), master_->put_wait_timeout());
  return master_->PutStart(requests, master_->clock()->Now() + wait);
}

std::vector<Status> LocalMasterApi::PutEnd(const ClientId& client,
                                           std::span<const std::string> keys) {
  return master_->PutEnd(client, keys);
}

std::vector<Status> LocalMasterApi::PutRevoke(
    const ClientId& client, std::span<const std::string> keys) {
  return master_->PutRevoke(client, keys);
}

std::vector<Result<ObjectReplicas>> LocalMasterApi::GetReplicaList(
    std::span<const std::string> keys) {
  return master_->GetReplicaList(keys);
}

Result<size_t> LocalMasterApi::ReleaseLeases(
    std::span<const LeaseRelease> releases) {
  return master_->ReleaseLeases(releases);
}

std::vector<Result<ExistsInfo>> LocalMasterApi::Exists(
    std::span<const std::string> keys) {
  return master_->Exists(keys);
}

Result<PrefixInfo> LocalMasterApi::ProbePrefix(
    std::span<const std::string> keys) {
  return master_->ProbePrefix(keys);
}

std::vector<Status> LocalMasterApi::Remove(std::span<const std::string> keys,
                                           RemoveOptions options) {
  return master_->Remove(keys, options);
}

std::vector<Result<GroupDescription>> LocalMasterApi::GetGroup(
    std::span<const std::string> group_ids) {
  return master_->GetGroup(group_ids);
}

std::vector<Status> LocalMasterApi::RemoveGroup(
    std::span<const std::string> group_ids, RemoveOptions options) {
  return master_->RemoveGroup(group_ids, options);
}

Result<NodeView> LocalMasterApi::GetNode(NodeId node) {
  return master_->FindNode(node);
}

// ---- LocalMasterLink ----

Result<NodeId> LocalMasterLink::RegisterNode(
    const NodeSpec& spec, std::span<const SsdInventoryEntry> inventory,
    std::span<const DramEntry> dram) {
  return master_->RegisterNode(spec, inventory, dram);
}

Result<DirectoryChanges> LocalMasterLink::SyncDirectory(NodeId node,
                                                        uint64_t acked,
                                                        uint32_t max_changes,
                                                        Duration wait) {
  return master_->SyncDirectory(
      node, acked, max_changes,
      master_->clock()->Now() + std::max(wait, Duration::zero()));
}

Status LocalMasterLink::Heartbeat(NodeId node,
                                  const std::optional<SsdReport>& ssd) {
  return master_->Heartbeat(node, ssd);
}

Result<NodeTasks> LocalMasterLink::PullTasks(NodeId node, uint32_t max_tasks,
                                             Duration wait) {
  return master_->PullTasks(
      node, max_tasks,
      master_->clock()->Now() + std::max(wait, Duration::zero()));
}

void LocalMasterLink::InterruptPull(NodeId node) {
  master_->InterruptPull(node);
}

Status LocalMasterLink::DeregisterNode(NodeId node) {
  return master_->DeregisterNode(node);
}

std::vector<Status> LocalMasterLink::NotifyOffloadSuccess(
    NodeId node, std::span<const TaskId> tasks) {
  return master_->NotifyOffloadSuccess(node, tasks);
}

std::vector<Status> LocalMasterLink::NotifyOffloadFailure(
    NodeId node, std::span<const TaskFailure> failures) {
  return master_->NotifyOffloadFailure(node, failures);
}

Status LocalMasterLink::ReportSsdCorruption(NodeId node,
                                            std::span<const std::string> keys) {
  master_->ReportSsdCorruption(node, keys);
  return Status::Ok();
}

std::vector<Result<ReplicaDescriptor>> LocalMasterLink::PromotionAllocStart(
    NodeId node, std::span<const TaskId> tasks) {
  return master_->PromotionAllocStart(node, tasks);
}

std::vector<Status> LocalMasterLink::NotifyPromotionSuccess(
    NodeId node, std::span<const TaskId> tasks) {
  return master_->NotifyPromotionSuccess(node, tasks);
}

std::vector<Status> LocalMasterLink::NotifyPromotionFailure(
    NodeId node, std::span<const TaskFailure> failures) {
  return master_->NotifyPromotionFailure(node, failures);
}

Result<NodeView> LocalMasterLink::GetNode(NodeId node) {
  return master_->FindNode(node);
}

}  // namespace mooncake_tier
