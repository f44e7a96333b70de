#pragma once

// Vocabulary types of the client API. Plain values, except
// SharedGroupStatus, a value with shared (reference-counted) state.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  friend bool operator==(const GroupStatus&, const GroupStatus&) = default;
};

// Whoever keeps a shared GroupStatus alive (the store's own record of the
// group, or a SharedGroupStatus's copy of a value). Opaque here.
class GroupStatusOwner;

// No status, or one immutable GroupStatus shared by every copy. Reads like
// std::optional<GroupStatus> (has_value, bool, *, ->, value, reset, ==
// compares the statuses). Why shared: every member of a complete group
// answers an existence probe with the same status, which the store keeps
// with the group, so a probe takes a reference instead of copying the group
// id into each answer. Made from a value, it holds its own copy.
// Thread safety: a value; copies may be made and dropped on any threads.
class SharedGroupStatus {
 public:
  SharedGroupStatus() noexcept = default;
  SharedGroupStatus(std::nullopt_t) noexcept {}         // NOLINT: as optional
  SharedGroupStatus(GroupStatus status);                // NOLINT: as optional
  SharedGroupStatus(std::optional<GroupStatus> status)  // NOLINT: as optional
      : SharedGroupStatus(status ? SharedGroupStatus(std::move(*status))
                                 : SharedGroupStatus()) {}
  // Shares `*status`, which `owner` keeps alive (takes one reference). For
  // the store's side, which makes owners.
  SharedGroupStatus(const GroupStatus* status,
                    const GroupStatusOwner* owner) noexcept
      : status_(status), owner_(owner) {
    if (owner_ != nullptr) Retain(owner_);
  }
  SharedGroupStatus(const SharedGroupStatus& other) noexcept
      : status_(other.status_), owner_(other.owner_) {
    if (owner_ != nullptr) Retain(owner_);
  }
  SharedGroupStatus(SharedGroupStatus&& other) noexcept
      : status_(std::exchange(other.status_, nullptr)),
        owner_(std::exchange(other.owner_, nullptr)) {}
  SharedGroupStatus& operator=(SharedGroupStatus other) noexcept {
    std::swap(status_, other.status_);
    std::swap(owner_, other.owner_);
    return *this;
  }
  ~SharedGroupStatus() {
    if (owner_ != nullptr) Release(owner_);
  }

  bool has_value() const noexcept { return status_ != nullptr; }
  explicit operator bool() const noexcept { return has_value(); }
  const GroupStatus& operator*() const { return *status_; }
  const GroupStatus* operator->() const { return status_; }
  // REQUIRES: has_value() (throws std::bad_optional_access otherwise).
  const GroupStatus& value() const {
    if (status_ == nullptr) throw std::bad_optional_access();
    return *status_;
  }
  void reset() noexcept { *this = SharedGroupStatus(); }
  operator std::optional<GroupStatus>() const {  // NOLINT: as optional
    return has_value() ? std::optional<GroupStatus>(*status_) : std::nullopt;
  }

  friend bool operator==(const SharedGroupStatus& a,
                         const SharedGroupStatus& b) {
    if (!a.has_value() || !b.has_value()) return a.has_value() == b.has_value();
    return a.status_ == b.status_ || *a.status_ == *b.status_;
  }
  friend bool operator==(const SharedGroupStatus& a, std::nullopt_t) {
    return !a.has_value();
  }

 private:
  // The owner's reference count, out of line (protocol/group_status.cc).
  static void Retain(const GroupStatusOwner* owner) noexcept;
  static void Release(const GroupStatusOwner* owner) noexcept;

  const GroupStatus* status_ = nullptr;
  const GroupStatusOwner* owner_ = nullptr;
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
  // The object's group, for a group member. Shared: answers for members of
  // one group may point at one status (no copy of the group id each).
  SharedGroupStatus group;
};

// Answer of a prefix probe: how many of the keys, taken in order from the
// first, could be read now (each object complete; a group member's group
// complete), and their bytes. Like existence probes, it grants no lease.
struct PrefixInfo {
  uint64_t length = 0;
  uint64_t bytes = 0;
  // Of `bytes`, those of keys with a DRAM copy now (the rest would be read
  // from SSD): how fast the prefix would load.
  uint64_t memory_bytes = 0;
};

struct RemoveOptions {
  // Remove even while a reader holds a lease.
  bool force = false;
};

}  // namespace mooncake_tier
