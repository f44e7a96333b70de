#pragma once

// AdminFacade over an in-process master, through its operators' interface
// (core/master_admin.h). The master has every operation: Supports() is
// true for all of them.
//
// Thread safety: thread-safe (the master is).

#include <functional>
#include <memory>
#include <type_traits>

#include "admin_server/admin_facade.h"
#include "base/clock.h"
#include "core/master_admin.h"

namespace mooncake_tier::admin {

class MasterAdminFacade final : public AdminFacade {
 public:
  // The master serving now; null when none does (a standby).
  using MasterSource = std::function<std::shared_ptr<MasterAdmin>()>;

  // `master` and `clock` (the master's) must outlive the facade.
  MasterAdminFacade(MasterAdmin* master, const Clock* clock);
  // A master of a high-availability cluster: each call goes to whichever
  // master `master` gives (NOT_LEADER, or an empty answer, when none);
  // Role() is `role`'s.
  MasterAdminFacade(MasterSource master, std::function<ClusterRole()> role,
                    const Clock* clock);

  std::optional<ClusterRole> Role() const override;
  bool Supports(FacadeOp op) const override;
  TimePoint Now() const override;
  MasterStats Stats() const override;
  std::vector<NodeView> Nodes() const override;
  std::vector<NodeMemoryView> Memory() const override;
  std::vector<Task> Tasks(TaskKind kind) const override;
  Result<ObjectDescription> DescribeObject(
      const std::string& key) const override;
  Result<GroupDescription> DescribeGroup(
      const std::string& group_id) const override;
  Result<GroupPage> ListGroups(std::optional<GroupState> filter, size_t limit,
                               const std::string& cursor) const override;
  MasterConfig Config() const override;
  Status RemoveObject(const std::string& key, bool force) override;
  Status RemoveGroup(const std::string& group_id, bool force) override;
  Result<std::vector<TaskId>> PromoteObject(const std::string& key) override;
  Result<std::vector<TaskId>> PromoteGroup(
      const std::string& group_id) override;
  Result<EvictionOutcome> EvictObject(const std::string& key) override;
  Result<EvictionOutcome> EvictGroup(const std::string& group_id) override;
  Result<RuntimeConfigUpdate> UpdateConfig(
      const RuntimeConfigChange& change,
      const PromotionEdit& edit_promotion) override;

 private:
  // `fn(master)` on the master serving now, else `none`.
  template <typename Fn, typename R = std::invoke_result_t<Fn, MasterAdmin&>>
  R With(Fn&& fn, R none) const {
    std::shared_ptr<MasterAdmin> master = master_();
    return master ? fn(*master) : std::move(none);
  }

  const MasterSource master_;
  const std::function<ClusterRole()> role_;  // null: a lone master
  const Clock* const clock_;
};

}  // namespace mooncake_tier::admin
