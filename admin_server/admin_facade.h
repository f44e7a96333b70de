#pragma once

// The one interface admin handlers call: a narrow, read-mostly view of the
// engine plus the operator actions of ARCHITECTURE.md section 8. Handlers
// parse a request, make one call here and render the answer; they hold no
// engine lock and see only copies, so rendering a big list never stalls
// the data path.
//
// Reads here never grant leases nor count as accesses.
//
// An engine may lack an operation (a read-only or older engine, say):
// Supports() says so and the handler answers 501 NOT_IMPLEMENTED without
// calling it. Calling an unsupported operation anyway returns UNAVAILABLE.
//
// Thread safety: implementations are thread-safe; the admin server calls
// them from its worker threads concurrently.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "core/group_table.h"
#include "core/master_config.h"
#include "core/master_stats.h"
#include "core/master_views.h"
#include "core/node_registry.h"
#include "core/promotion_options.h"
#include "core/task_table.h"
#include "mooncake_tier/status.h"
#include "protocol/messages.h"

namespace mooncake_tier::admin {

enum class FacadeOp : uint8_t {
  kListGroups,        // ListGroups
  kEvictObject,       // EvictObject
  kEvictGroup,        // EvictGroup
  kSetRuntimeConfig,  // UpdateConfig with knobs other than promotion's
};
std::string_view FacadeOpName(FacadeOp op);

// What a forced eviction did (core/master.h).
using EvictionOutcome = ForcedEviction;
// Run-time knobs other than promotion's; unset fields stay as they are
// (core/master_config.h).
using RuntimeConfigChange = ::mooncake_tier::RuntimeConfigChange;
using RuntimeConfigUpdate = ::mooncake_tier::RuntimeConfigUpdate;
// Edits promotion options in place; an error leaves them unchanged.

// A master's place in a high-availability cluster (daemon/ha_master.h).
struct ClusterRole {
  std::string cluster;
  bool leader = false;
  uint64_t term = 0;         // this master's while it leads, else the leader's
  std::string leader_rpc;    // the leader's gRPC address ("" unknown)
  std::string leader_admin;  // its admin address ("" unknown)
  uint64_t failovers = 0;
  bool recovering = false;
  size_t nodes_expected = 0;
  size_t nodes_registered = 0;
  bool in_sync = false;
};

class AdminFacade {
 public:
  virtual ~AdminFacade() = default;

  // The master's role in its cluster; nullopt for a lone master. A standby
  // holds no data: the admin server answers its data and mutating routes
  // with 421 naming the leader, and /api/v1/status with the role alone.
  virtual std::optional<ClusterRole> Role() const { return std::nullopt; }

  virtual bool Supports(FacadeOp op) const = 0;
  // The engine's clock, for ages (heartbeats, tasks, leases).
  virtual TimePoint Now() const = 0;

  // ---- Reads ----
  virtual MasterStats Stats() const = 0;
  virtual std::vector<NodeView> Nodes() const = 0;
  // Every node's DRAM as the last memory round saw it.
  virtual std::vector<NodeMemoryView> Memory() const = 0;
  virtual std::vector<Task> Tasks(TaskKind kind) const = 0;
  // OBJECT_NOT_FOUND / INVALID_KEY. No lease, no access.
  virtual Result<ObjectDescription> DescribeObject(
      const std::string& key) const = 0;
  // GROUP_NOT_FOUND / INVALID_GROUP.
  virtual Result<GroupDescription> DescribeGroup(
      const std::string& group_id) const = 0;
  // Up to `limit` groups after `cursor` in id order, in state `filter` if
  // given.
  virtual Result<GroupPage> ListGroups(std::optional<GroupState> filter,
                                       size_t limit,
                                       const std::string& cursor) const = 0;
  // The effective configuration (promotion knobs as they are now).
  virtual MasterConfig Config() const = 0;

  // ---- Operator actions ----
  // Follows the group remove policy. OBJECT_LEASED unless `force`.
  virtual Status RemoveObject(const std::string& key, bool force) = 0;
  virtual Status RemoveGroup(const std::string& group_id, bool force) = 0;
  // Forced promotion; the tasks queued. NOT_APPLICABLE, OBJECT_BUSY,
  // QUEUE_FULL as Master::PromoteObject.
  virtual Result<std::vector<TaskId>> PromoteObject(const std::string& key) = 0;
  virtual Result<std::vector<TaskId>> PromoteGroup(
      const std::string& group_id) = 0;
  // Forced eviction from DRAM (offloading first when offload is on), as
  // Master::EvictObject / EvictGroup: OBJECT_NOT_FOUND / GROUP_NOT_FOUND,
  // NOT_APPLICABLE, OBJECT_BUSY, OBJECT_LEASED, QUEUE_FULL.
  virtual Result<EvictionOutcome> EvictObject(const std::string& key) = 0;
  virtual Result<EvictionOutcome> EvictGroup(const std::string& group_id) = 0;
  // Changes run-time knobs in one step, as Master::UpdateRuntimeConfig:
  // `change`, then `edit_promotion` (when set) applied to the promotion
  // options as they are at that moment, so concurrent partial changes
  // never undo each other. All or nothing: INVALID_ARGUMENT (or the edit's
  // error) and nothing changes. Returns the configuration before and
  // after. A non-empty `change` needs Supports(kSetRuntimeConfig).
  virtual Result<RuntimeConfigUpdate> UpdateConfig(
      const RuntimeConfigChange& change,
      const PromotionEdit& edit_promotion) = 0;
};

}  // namespace mooncake_tier::admin
