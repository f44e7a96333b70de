#include "admin_server/master_admin_facade.h"


namespace mooncake_tier::admin {

TimePoint MasterAdminFacade::Now() const { return clock_->Now(); }
MasterStats MasterAdminFacade::Stats() const { return master_->GetStats(); }
std::vector<NodeView> MasterAdminFacade::Nodes() const {
  return master_->ListNodes();
}
std::vector<NodeMemoryView> MasterAdminFacade::Memory() const {
  return master_->MemoryByNode();
}
std::vector<Task> MasterAdminFacade::Tasks(TaskKind kind) const {
  return master_->ListTasks(kind);
}
Result<ObjectDescription> MasterAdminFacade::DescribeObject(
    const std::string& key) const {
  return master_->DescribeObject(key);
}
Result<std::vector<TaskId>> MasterAdminFacade::PromoteObject(
    const std::string& key) {
  return master_->PromoteObject(key);
}
Result<std::vector<TaskId>> MasterAdminFacade::PromoteGroup(
    const std::string& group_id) {
  return master_->PromoteGroup(group_id);
}
Result<EvictionOutcome> MasterAdminFacade::EvictObject(const std::string& key) {
  return master_->EvictObject(key);
}
Result<EvictionOutcome> MasterAdminFacade::EvictGroup(
    const std::string& group_id) {
  return master_->EvictGroup(group_id);
}
Result<RuntimeConfigUpdate> MasterAdminFacade::UpdateConfig(
    const RuntimeConfigChange& change, const PromotionEdit& edit_promotion) {
  return master_->UpdateRuntimeConfig(change, edit_promotion);
}

bool MasterAdminFacade::Supports(FacadeOp op) const {
  switch (op) {
    case FacadeOp::kListGroups:
    case FacadeOp::kEvictObject:
    case FacadeOp::kEvictGroup:
    case FacadeOp::kSetRuntimeConfig:
      return true;
  }
  return false;
}

Result<GroupDescription> MasterAdminFacade::DescribeGroup(
    const std::string& group_id) const {
  return std::move(master_->GetGroup({&group_id, 1})[0]);
}

Result<GroupPage> MasterAdminFacade::ListGroups(
    std::optional<GroupState> filter, size_t limit,
    const std::string& cursor) const {
  return master_->ListGroups(filter, limit, cursor);
}

MasterConfig MasterAdminFacade::Config() const { return master_->config(); }

Status MasterAdminFacade::RemoveObject(const std::string& key, bool force) {
  return master_->Remove({&key, 1}, RemoveOptions{force})[0];
}

Status MasterAdminFacade::RemoveGroup(const std::string& group_id, bool force) {
  return master_->RemoveGroup({&group_id, 1}, RemoveOptions{force})[0];
}

}  // namespace mooncake_tier::admin
