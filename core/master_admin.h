#pragma once

// MasterAdmin: what operators ask of a master, as an interface: the views
// (stats, nodes, DRAM by node, tasks, an object, groups, the configuration)
// and the actions (remove, promote, evict, change the configuration). The
// admin API (admin_server/master_admin_facade.h) and the master's metrics
// (metrics/master_metrics.h) reach the master through it, so they include
// neither core/master.h nor its private parts. Master implements it; the
// meaning of each call is documented there (core/master.h).
//
// Thread safety: implementations are thread-safe.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/group_table.h"
#include "core/master_config.h"
#include "core/master_stats.h"
#include "core/master_views.h"
#include "core/promotion_options.h"
#include "mooncake_tier/status.h"
#include "protocol/messages.h"
#include "protocol/node.h"
#include "protocol/task.h"

namespace mooncake_tier {

class MasterAdmin {
 public:
  virtual ~MasterAdmin() = default;

  // ---- Views ----
  virtual MasterStats GetStats() const = 0;
  virtual std::vector<NodeView> ListNodes() const = 0;
  virtual std::vector<NodeMemoryView> MemoryByNode() const = 0;
  virtual std::vector<Task> ListTasks(TaskKind kind) const = 0;
  virtual Result<ObjectDescription> DescribeObject(
      std::string_view key) const = 0;
  virtual std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) const = 0;
  virtual GroupPage ListGroups(std::optional<GroupState> filter, size_t limit,
                               std::string_view cursor) const = 0;
  virtual MasterConfig config() const = 0;

  // ---- Actions ----
  virtual std::vector<Status> Remove(std::span<const std::string> keys,
                                     RemoveOptions options) = 0;
  virtual std::vector<Status> RemoveGroup(
      std::span<const std::string> group_ids, RemoveOptions options) = 0;
  virtual Result<std::vector<TaskId>> PromoteObject(const std::string& key) = 0;
  virtual Result<std::vector<TaskId>> PromoteGroup(
      const std::string& group_id) = 0;
  virtual Result<ForcedEviction> EvictObject(const std::string& key) = 0;
  virtual Result<ForcedEviction> EvictGroup(const std::string& group_id) = 0;
  virtual Result<RuntimeConfigUpdate> UpdateRuntimeConfig(
      const RuntimeConfigChange& change,
      const PromotionEdit& edit_promotion = nullptr) = 0;
};

}  // namespace mooncake_tier
