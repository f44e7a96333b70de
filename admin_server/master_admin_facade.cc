#include "admin_server/master_admin_facade.h"

namespace mooncake_tier::admin {
namespace {

// What an unsupported call answers if a caller skips Supports().
Status Unsupported(FacadeOp op) {
  return Status(
      ErrorReason::kUnavailable,
      std::string(FacadeOpName(op)) + " is not supported by this master yet");
}

}  // namespace

bool MasterAdminFacade::Supports(FacadeOp op) const {
  // Each needs a Master call that does not exist yet: eviction of one key
  // or group, and setters for the knobs.
  switch (op) {
    case FacadeOp::kListGroups:
      return true;
    case FacadeOp::kEvictObject:
    case FacadeOp::kEvictGroup:
    case FacadeOp::kSetRuntimeConfig:
      return false;
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

MasterConfig MasterAdminFacade::Config() const {
  MasterConfig config = master_->config();
  config.promotion = master_->promotion_options();
  return config;
}

Status MasterAdminFacade::RemoveObject(const std::string& key, bool force) {
  return master_->Remove({&key, 1}, RemoveOptions{force})[0];
}

Status MasterAdminFacade::RemoveGroup(const std::string& group_id, bool force) {
  return master_->RemoveGroup({&group_id, 1}, RemoveOptions{force})[0];
}

Result<EvictionOutcome> MasterAdminFacade::EvictObject(const std::string&) {
  return Unsupported(FacadeOp::kEvictObject);
}

Result<EvictionOutcome> MasterAdminFacade::EvictGroup(const std::string&) {
  return Unsupported(FacadeOp::kEvictGroup);
}

Status MasterAdminFacade::SetRuntimeConfig(const RuntimeConfigChange&) {
  return Unsupported(FacadeOp::kSetRuntimeConfig);
}

}  // namespace mooncake_tier::admin
