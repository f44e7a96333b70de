#pragma once

// Vocabulary types shared by the client API and the engine. Plain values.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mooncake_tier {

// Keys are 1..kMaxKeyBytes bytes and contain no NUL byte.
inline constexpr size_t kMaxKeyBytes = 1024;
// Group ids follow the same rules as keys but are shorter.
inline constexpr size_t kMaxGroupIdBytes = 256;

enum class Tier : uint8_t {
  kMemory = 0,     // L1: DRAM segments, read over RDMA.
  kLocalDisk = 1,  // L2: a node's SSD store.
};
std::string_view TierName(Tier tier);  // "memory" | "local_disk"

enum class ReplicaState : uint8_t {
  kProcessing = 0,  // being written; never served
  kComplete = 1,
};
std::string_view ReplicaStateName(ReplicaState state);

// Membership of an object in a group: objects that are one logical unit (K
// and V of a token block, per-rank pieces of a pipeline-parallel block).
struct GroupSpec {
  std::string group_id;
  uint32_t group_size = 0;   // members the group expects; > 0
  uint32_t group_index = 0;  // < group_size, unique within the group
  friend bool operator==(const GroupSpec&, const GroupSpec&) = default;
};

enum class GroupState : uint8_t {
  kFilling = 0,
  kComplete = 1,
  kBroken = 2,
  kExpired = 3,
};
std::string_view GroupStateName(GroupState state);

struct PutOptions {
  std::optional<GroupSpec> group;
  // Node name to place the DRAM replica on; empty lets the store choose.
  std::string preferred_node;
  // A hard-pinned object is never evicted from DRAM.
  bool hard_pin = false;
};

struct GroupStatus {
  std::string group_id;
  GroupState state = GroupState::kFilling;
  uint32_t expected = 0;
  uint32_t present = 0;  // members whose put completed
};

struct GroupMemberInfo {
  uint32_t index = 0;
  std::string key;
  bool present = false;     // the member's put completed
  std::vector<Tier> tiers;  // tiers holding a complete copy, DRAM first
};

// A group with its members, as GetGroup reports it.
struct GroupInfo {
  GroupStatus status;
  // For a broken group: "removed", "node_lost" or "corrupt"; else empty.
  std::string break_cause;
  std::vector<GroupMemberInfo> members;
};

// Answer of an existence probe. Probes never extend leases.
struct ExistsInfo {
  bool exists = false;  // a complete replica exists
  uint64_t size = 0;
  std::optional<GroupStatus> group;
};

struct RemoveOptions {
  // Remove even while a reader holds a lease.
  bool force = false;
};

}  // namespace mooncake_tier
