#pragma once

// AdminFacade over an in-process core::Master. The master has every
// operation: Supports() is true for all of them.
//
// Thread safety: thread-safe (Master is).

#include "admin_server/admin_facade.h"
#include "base/clock.h"
#include "core/master.h"

namespace mooncake_tier::admin {

class MasterAdminFacade final : public AdminFacade {
 public:
  // `master` and `clock` (the master's) must outlive the facade.
  MasterAdminFacade(Master* master, const Clock* clock)
      : master_(master), clock_(clock) {}

  bool Supports(FacadeOp op) const override;
  TimePoint Now() const override { return clock_->Now(); }

  MasterStats Stats() const override { return master_->GetStats(); }
  std::vector<NodeView> Nodes() const override { return master_->ListNodes(); }
  std::vector<NodeMemoryView> Memory() const override {
    return master_->MemoryByNode();
  }
  std::vector<Task> Tasks(TaskKind kind) const override {
    return master_->ListTasks(kind);
  }
  Result<ObjectDescription> DescribeObject(
      const std::string& key) const override {
    return master_->DescribeObject(key);
  }
  Result<GroupDescription> DescribeGroup(
      const std::string& group_id) const override;
  Result<GroupPage> ListGroups(std::optional<GroupState> filter, size_t limit,
                               const std::string& cursor) const override;
  MasterConfig Config() const override;

  Status RemoveObject(const std::string& key, bool force) override;
  Status RemoveGroup(const std::string& group_id, bool force) override;
  Result<std::vector<TaskId>> PromoteObject(const std::string& key) override {
    return master_->PromoteObject(key);
  }
  Result<std::vector<TaskId>> PromoteGroup(
      const std::string& group_id) override {
    return master_->PromoteGroup(group_id);
  }
  Result<EvictionOutcome> EvictObject(const std::string& key) override {
    return master_->EvictObject(key);
  }
  Result<EvictionOutcome> EvictGroup(const std::string& group_id) override {
    return master_->EvictGroup(group_id);
  }
  Result<RuntimeConfigUpdate> UpdateConfig(
      const RuntimeConfigChange& change,
      const PromotionEdit& edit_promotion) override {
    return master_->UpdateRuntimeConfig(change, edit_promotion);
  }

 private:
  Master* const master_;
  const Clock* const clock_;
};

}  // namespace mooncake_tier::admin
