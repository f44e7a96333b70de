#include "admin_server/master_admin_facade.h"

#include <utility>

namespace mooncake_tier::admin {
namespace {

Status NotLeader() {
  return Status(ErrorReason::kNotLeader,
                "this master does not lead its cluster now");
}

}  // namespace

MasterAdminFacade::MasterAdminFacade(MasterAdmin* master, const Clock* clock)
    : master_([master] {
        return std::shared_ptr<MasterAdmin>(master, [](MasterAdmin*) {});
      }),
      clock_(clock) {}

MasterAdminFacade::MasterAdminFacade(MasterSource master,
                                     std::function<ClusterRole()> role,
                                     const Clock* clock)
    : master_(std::move(master)), role_(std::move(role)), clock_(clock) {}

std::optional<ClusterRole> MasterAdminFacade::Role() const {
  if (!role_) return std::nullopt;
  return role_();
}

TimePoint MasterAdminFacade::Now() const { return clock_->Now(); }
MasterStats MasterAdminFacade::Stats() const {
  return With([](MasterAdmin& m) { return m.GetStats(); }, MasterStats{});
}
std::vector<NodeView> MasterAdminFacade::Nodes() const {
  return With([](MasterAdmin& m) { return m.ListNodes(); },
              std::vector<NodeView>{});
}
std::vector<NodeMemoryView> MasterAdminFacade::Memory() const {
  return With([](MasterAdmin& m) { return m.MemoryByNode(); },
              std::vector<NodeMemoryView>{});
}
std::vector<Task> MasterAdminFacade::Tasks(TaskKind kind) const {
  return With([kind](MasterAdmin& m) { return m.ListTasks(kind); },
              std::vector<Task>{});
}
Result<ObjectDescription> MasterAdminFacade::DescribeObject(
    const std::string& key) const {
  return With(
      [&](MasterAdmin& m) -> Result<ObjectDescription> {
        return m.DescribeObject(key);
      },
      Result<ObjectDescription>(NotLeader()));
}
Result<std::vector<TaskId>> MasterAdminFacade::PromoteObject(
    const std::string& key) {
  return With(
      [&](MasterAdmin& m) -> Result<std::vector<TaskId>> {
        return m.PromoteObject(key);
      },
      Result<std::vector<TaskId>>(NotLeader()));
}
Result<std::vector<TaskId>> MasterAdminFacade::PromoteGroup(
    const std::string& group_id) {
  return With(
      [&](MasterAdmin& m) -> Result<std::vector<TaskId>> {
        return m.PromoteGroup(group_id);
      },
      Result<std::vector<TaskId>>(NotLeader()));
}
Result<EvictionOutcome> MasterAdminFacade::EvictObject(const std::string& key) {
  return With(
      [&](MasterAdmin& m) -> Result<EvictionOutcome> {
        return m.EvictObject(key);
      },
      Result<EvictionOutcome>(NotLeader()));
}
Result<EvictionOutcome> MasterAdminFacade::EvictGroup(
    const std::string& group_id) {
  return With(
      [&](MasterAdmin& m) -> Result<EvictionOutcome> {
        return m.EvictGroup(group_id);
      },
      Result<EvictionOutcome>(NotLeader()));
}
Result<RuntimeConfigUpdate> MasterAdminFacade::UpdateConfig(
    const RuntimeConfigChange& change, const PromotionEdit& edit_promotion) {
  return With(
      [&](MasterAdmin& m) -> Result<RuntimeConfigUpdate> {
        return m.UpdateRuntimeConfig(change, edit_promotion);
      },
      Result<RuntimeConfigUpdate>(NotLeader()));
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
  return With(
      [&](MasterAdmin& m) -> Result<GroupDescription> {
        return std::move(m.GetGroup({&group_id, 1})[0]);
      },
      Result<GroupDescription>(NotLeader()));
}

Result<GroupPage> MasterAdminFacade::ListGroups(
    std::optional<GroupState> filter, size_t limit,
    const std::string& cursor) const {
  return With(
      [&](MasterAdmin& m) -> Result<GroupPage> {
        return m.ListGroups(filter, limit, cursor);
      },
      Result<GroupPage>(NotLeader()));
}

MasterConfig MasterAdminFacade::Config() const {
  return With([](MasterAdmin& m) { return m.config(); }, MasterConfig{});
}

Status MasterAdminFacade::RemoveObject(const std::string& key, bool force) {
  return With(
      [&](MasterAdmin& m) -> Status {
        return m.Remove({&key, 1}, RemoveOptions{force})[0];
      },
      NotLeader());
}

Status MasterAdminFacade::RemoveGroup(const std::string& group_id, bool force) {
  return With(
      [&](MasterAdmin& m) -> Status {
        return m.RemoveGroup({&group_id, 1}, RemoveOptions{force})[0];
      },
      NotLeader());
}

}  // namespace mooncake_tier::admin
