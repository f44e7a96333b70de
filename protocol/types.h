#pragma once

// Identifiers and plain records of the engine's data model (ARCHITECTURE.md
// section 3). Values only; the tables that own them hold the locks.

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"
#include "mooncake_tier/types.h"

namespace mooncake_tier {

// Node ids name one registration (incarnation) of a node; a node that
// re-registers gets a new id. 0 is never a valid id.
using NodeId = uint64_t;
inline constexpr NodeId kNoNode = 0;
using ReplicaId = uint64_t;
using TaskId = uint64_t;
// Opaque identity of a client, used to make a repeated PutStart idempotent.
using ClientId = std::string;

// Why a group became broken.
enum class BreakCause : uint8_t {
  kRemoved = 0,   // a member was removed (group_remove_policy = member)
  kNodeLost = 1,  // a member's last replica went with its node
  kCorrupt = 2,   // a member's SSD record was found corrupt
};
// "removed" | "node_lost" | "corrupt"
std::string_view BreakCauseName(BreakCause cause);

// Where a replica's bytes are, and what a reader may do with them.
struct ReplicaDescriptor {
  ReplicaId id = 0;
  Tier tier = Tier::kMemory;
  ReplicaState state = ReplicaState::kProcessing;
  // A PutStart's grant only (0 elsewhere): the client may start writing
  // into the range for this many milliseconds after it sent the PutStart,
  // never later (MasterConfig::grant_window, plus what the put waited at
  // the master for room). Fits the padding before `node`: replicas cost no
  // more memory for it.
  uint32_t write_within_ms = 0;
  NodeId node = kNoNode;
  uint64_t offset = 0;  // memory: byte offset in the node's DRAM segment
  uint64_t size = 0;    // object size in bytes
};

static_assert(sizeof(ReplicaDescriptor) == 40,
              "the object table holds one per replica: keep it small");

// A replica as the object table keeps it: its descriptor plus pins.
struct Replica {
  ReplicaDescriptor desc;
  // Pins held by in-flight tasks. A replica with refcnt > 0 is never evicted
  // or freed; if its object is removed, the space is freed at the last unpin.
  uint32_t refcnt = 0;
  // A promotion's staged DRAM copy: the task that fills it (0 otherwise).
  // It is pinned by that task, invisible to readers until committed, and
  // unlike a put in flight it never blocks removal of the object.
  TaskId staged_by = 0;
};

enum class NodeState : uint8_t { kAlive = 0, kSuspect = 1, kDead = 2 };
std::string_view NodeStateName(NodeState state);

enum class OffloadMode : uint8_t {
  kOff = 0,           // eviction drops the DRAM copy
  kWriteThrough = 1,  // every completed put is also written to SSD
  kOnEvict = 2,       // eviction writes to SSD first, then drops DRAM
};
std::string_view OffloadModeName(OffloadMode mode);
std::optional<OffloadMode> ParseOffloadMode(std::string_view name);

// Whether a member of a group that is not complete may be read.
enum class GroupVisibility : uint8_t {
  kAllOrNothing = 0,  // GROUP_INCOMPLETE until the whole group is complete
  kBestEffort = 1,    // members readable alone; the state is reported
};
std::string_view GroupVisibilityName(GroupVisibility visibility);
std::optional<GroupVisibility> ParseGroupVisibility(std::string_view name);

// What removing one member of a group does.
enum class GroupRemovePolicy : uint8_t {
  kGroup = 0,   // removes every member
  kMember = 1,  // removes that member; the group turns broken
};
std::string_view GroupRemovePolicyName(GroupRemovePolicy policy);
std::optional<GroupRemovePolicy> ParseGroupRemovePolicy(std::string_view name);

enum class TaskKind : uint8_t { kOffload = 0, kPromotion = 1 };
std::string_view TaskKindName(TaskKind kind);

}  // namespace mooncake_tier
