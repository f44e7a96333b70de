#include "admin_server/master_admin_facade.h"

namespace mooncake_tier::admin {

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
