#pragma once

// AdminFacade over an in-process master, through its operators' interface
// (core/master_admin.h). The master has every operation: Supports() is
// true for all of them.
//
// Thread safety: thread-safe (the master is).

#include "admin_server/admin_facade.h"
#include "base/clock.h"
#include "core/master_admin.h"


namespace mooncake_tier::admin {

class MasterAdminFacade final : public AdminFacade {
 public:
  // `master` and `clock` (the master's) must outlive the facade.
  MasterAdminFacade(MasterAdmin* master, const Clock* clock)
      : master_(master), clock_(clock) {}

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
  MasterAdmin* const master_;
  const Clock* const clock_;
};

}  // namespace mooncake_tier::admin
