#pragma once

// JSON renderings of engine values for the admin API, one function per
// type, shared by the handlers so a node or a task reads the same in every
// route. Ages and remaining times are relative to `now` (the engine's
// clock), in milliseconds.
//
// Thread safety: pure functions.

#include <optional>

#include "admin_server/admin_facade.h"
#include "nlohmann/json.hpp"

namespace mooncake_tier::admin {

int64_t Millis(Duration d);

nlohmann::json GroupSpecJson(const std::optional<GroupSpec>& group);
// `memory`: the node's DRAM as the last memory round saw it, if known.
nlohmann::json NodeJson(const NodeView& node, TimePoint now,
                        uint64_t pending_tasks,
                        const NodeMemoryView* memory = nullptr);
// DRAM by how it is held (free, clean, dirty, writeback, ...), bytes.
nlohmann::json MemoryHeldJson(const MemoryBreakdown& bytes);
nlohmann::json TaskJson(const Task& task, TimePoint now);
nlohmann::json ObjectJson(const std::string& key, const ObjectDescription& d,
                          TimePoint now);
nlohmann::json GroupJson(const GroupDescription& group);
nlohmann::json GroupStatusJson(const GroupStatus& status);
nlohmann::json PromotionOptionsJson(const PromotionOptions& options);
nlohmann::json ConfigJson(const MasterConfig& config);
nlohmann::json StatusJson(const MasterStats& stats);
// {"cluster","role","term","leader","leader_admin","failovers",
//  "recovering","nodes_expected","nodes_registered","in_sync"}.
nlohmann::json ClusterRoleJson(const ClusterRole& role);

}  // namespace mooncake_tier::admin
