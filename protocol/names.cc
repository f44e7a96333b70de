// String forms of the engine's enums: the names operators see in the admin
// API, the CLI and metric labels. Never rename one.

#include "protocol/task.h"
#include "protocol/types.h"

namespace mooncake_tier {

std::string_view TierName(Tier tier) {
  return tier == Tier::kMemory ? "memory" : "local_disk";
}

std::string_view ReplicaStateName(ReplicaState state) {
  return state == ReplicaState::kProcessing ? "processing" : "complete";
}

std::string_view GroupStateName(GroupState state) {
  switch (state) {
    case GroupState::kFilling:
      return "filling";
    case GroupState::kComplete:
      return "complete";
    case GroupState::kBroken:
      return "broken";
    case GroupState::kExpired:
      return "expired";
  }
  return "unknown";
}

std::string_view NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kAlive:
      return "alive";
    case NodeState::kSuspect:
      return "suspect";
    case NodeState::kDead:
      return "dead";
  }
  return "unknown";
}

std::string_view OffloadModeName(OffloadMode mode) {
  switch (mode) {
    case OffloadMode::kOff:
      return "off";
    case OffloadMode::kWriteThrough:
      return "write_through";
    case OffloadMode::kOnEvict:
      return "on_evict";
  }
  return "unknown";
}

std::optional<OffloadMode> ParseOffloadMode(std::string_view name) {
  if (name == "off") return OffloadMode::kOff;
  if (name == "write_through") return OffloadMode::kWriteThrough;
  if (name == "on_evict") return OffloadMode::kOnEvict;
  return std::nullopt;
}

std::string_view GroupVisibilityName(GroupVisibility visibility) {
  return visibility == GroupVisibility::kAllOrNothing ? "all_or_nothing"
                                                      : "best_effort";
}

std::optional<GroupVisibility> ParseGroupVisibility(std::string_view name) {
  if (name == "all_or_nothing") return GroupVisibility::kAllOrNothing;
  if (name == "best_effort") return GroupVisibility::kBestEffort;
  return std::nullopt;
}

std::string_view GroupRemovePolicyName(GroupRemovePolicy policy) {
  return policy == GroupRemovePolicy::kGroup ? "group" : "member";
}

std::optional<GroupRemovePolicy> ParseGroupRemovePolicy(std::string_view name) {
  if (name == "group") return GroupRemovePolicy::kGroup;
  if (name == "member") return GroupRemovePolicy::kMember;
  return std::nullopt;
}

std::string_view TaskKindName(TaskKind kind) {
  return kind == TaskKind::kOffload ? "offload" : "promotion";
}

std::string_view BreakCauseName(BreakCause cause) {
  switch (cause) {
    case BreakCause::kRemoved:
      return "removed";
    case BreakCause::kNodeLost:
      return "node_lost";
    case BreakCause::kCorrupt:
      return "corrupt";
  }
  return "unknown";
}

std::string_view TaskStateName(TaskState state) {
  switch (state) {
    case TaskState::kQueued:
      return "queued";
    case TaskState::kDispatched:
      return "dispatched";
    case TaskState::kStaged:
      return "staged";
  }
  return "unknown";
}

}  // namespace mooncake_tier
