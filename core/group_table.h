#pragma once

// The sharded group index: group id -> GroupMeta, laid out like ObjectTable
// (power-of-two stripes chosen by the top bits of the id's hash, one mutex
// each), plus the group counters the Master owns.
//
// A layout, not an interface, for the master: only the ObjectIndex
// (core/object_index.h) locks a stripe or reaches into one, and keeps the
// lock order (docs/design/groups.md: a group stripe before object stripes,
// one group stripe at a time). Its own tests use it directly.
//
// Thread safety: the stripe maps are guarded by their stripe's mutex; Find,
// CountsByState, ListPage and Size lock internally and must be called with
// no group stripe held.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"
#include "core/group_meta.h"
#include "core/hashed_key.h"
#include "mooncake_tier/types.h"

namespace mooncake_tier {

// Groups per state, read stripe by stripe (not one atomic snapshot).
struct GroupStateCounts {
  uint64_t filling = 0;
  uint64_t complete = 0;
  uint64_t broken = 0;
  uint64_t expired = 0;

  uint64_t Of(GroupState state) const;
  uint64_t total() const { return filling + complete + broken + expired; }
};

// One page of a listing in ascending group id (byte) order.
struct GroupPage {
  std::vector<GroupStatus> groups;
  // Pass back to continue after the last group returned; empty when the
  // listing is done.
  std::string next_cursor;
};

// A group table entry's key: a view of the group's id, in the record of
// the group's current incarnation (the table keeps no copy of the id).
// GroupTable::Reserve points it there whenever a reservation may have made
// a new record; until then (an entry just made) it views the id being
// reserved. `id` is mutable so the view can move to a new record's equal
// bytes in place: hash and equality depend on the bytes only. The key
// keeps the id's hash, so that the table growing moves its entries without
// reading every id's bytes again (they are in the records, one cache miss
// each).
struct GroupKey {
  explicit GroupKey(std::string_view group_id)
      : GroupKey(HashedKey(group_id)) {}
  explicit GroupKey(const HashedKey& group_id)
      : id(group_id.key), hash(group_id.hash) {}
  mutable std::string_view id;
  size_t hash;  // HashKey(id)
};

// Hash and equality of group ids, whether GroupKey, std::string or either
// string_view (HashedKey::view() is absl's): HashKey, so a HashedKey's hash
// finds an entry. A GroupKey's is the HashKey it keeps.
struct GroupKeyView {
  static std::string_view Of(const GroupKey& id) { return id.id; }
  static std::string_view Of(const std::string& id) { return id; }
  static std::string_view Of(std::string_view id) { return id; }
  static std::string_view Of(absl::string_view id) {
    return std::string_view(id.data(), id.size());
  }
};
struct GroupKeyHash {
  using is_transparent = void;
  size_t operator()(const GroupKey& id) const { return id.hash; }
  template <typename Id>
  size_t operator()(const Id& id) const {
    return HashKey(GroupKeyView::Of(id));
  }
};
struct GroupKeyEq {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return GroupKeyView::Of(a) == GroupKeyView::Of(b);
  }
};

class GroupTable {
 public:
  using GroupMap =
      absl::flat_hash_map<GroupKey, GroupMeta, GroupKeyHash, GroupKeyEq>;
  struct Shard {
    mutable Mutex mu;
    GroupMap groups ABSL_GUARDED_BY(mu);
  };

  // REQUIRES: shard_count is a power of two.
  explicit GroupTable(uint32_t shard_count);

  uint32_t shard_count() const { return static_cast<uint32_t>(shards_.size()); }
  uint32_t ShardIndex(std::string_view id) const;
  uint32_t ShardIndex(const HashedKey& id) const {
    return StripeOf(id.hash, shards_.size());
  }
  Shard& ShardFor(std::string_view id) { return *shards_[ShardIndex(id)]; }
  Shard& ShardFor(const HashedKey& id) { return *shards_[ShardIndex(id)]; }
  Shard& shard(uint32_t index) { return *shards_[index]; }
  const Shard& ShardFor(std::string_view id) const {
    return *shards_[ShardIndex(id)];
  }
  const Shard& ShardFor(const HashedKey& id) const {
    return *shards_[ShardIndex(id)];
  }
  const Shard& shard(uint32_t index) const { return *shards_[index]; }

  // GroupMeta::Reserve on the entry `it` (made by
  // groups.try_emplace(spec.group_id) if the group was new), then keys the
  // entry by the id in the group's record. Every reservation goes through
  // here: one that starts a new incarnation replaces the record the key
  // viewed. REQUIRES: the lock of the entry's stripe.
  // (Inline: every member put comes through, and its Status is the
  // caller's to check.)
  static Status Reserve(GroupMap::iterator it, const GroupSpec& spec,
                        std::string_view key, TimePoint now, size_t id_hash = 0,
                        GroupMeta::Reservation* reservation = nullptr) {
    Status status = it->second.Reserve(spec, key, now, id_hash, reservation);
    if (status.ok()) it->first.id = it->second.record->group_id();
    return status;
  }

  // The group's status, or nullopt if there is no such group.
  std::optional<GroupStatus> Find(std::string_view id) const;
  std::optional<GroupStatus> Find(const HashedKey& id) const;

  // Groups per state; takes each stripe lock in turn.
  GroupStateCounts CountsByState() const;

  // Up to `limit` groups with an id greater than `cursor` (empty: from the
  // start), in ascending id order, only those in state `filter` if given.
  // The cursor is the last id of the previous page, so paging neither
  // repeats nor skips a group that exists for the whole listing, whatever
  // else is added or dropped in between. Each stripe is read under its own
  // lock; a page is not one atomic snapshot.
  // Cost: O(groups * log(limit)) time and O(limit) memory per page; there
  // is no ordered index, so each page scans every stripe. Meant for the
  // admin API, not the data path.
  // REQUIRES: limit > 0 (0 is treated as 1).
  GroupPage ListPage(std::optional<GroupState> filter, size_t limit,
                     std::string_view cursor) const;

  // Groups in all stripes; takes each stripe lock in turn.
  size_t Size() const;

 private:
  std::vector<std::unique_ptr<Shard>> shards_;
};

// Counters of group lifecycle events. The list is declared once; the live
// atomics, the snapshot and its visitor are generated from it.
#define MOONCAKE_TIER_GROUP_COUNTERS(X)                                      \
  X(groups_created)              /* first reservation of a new group */      \
  X(groups_completed)            /* filling -> complete */                   \
  X(groups_broken_removed)       /* broken by a member's removal */          \
  X(groups_broken_node_lost)     /* broken by a member lost with its node */ \
  X(groups_broken_corrupt)       /* broken by a corrupt SSD member */        \
  X(groups_expired)              /* filling past group_fill_timeout */       \
  X(groups_collected)            /* dropped from the table */                \
  X(groups_evicted_memory)       /* evicted from DRAM as one unit */         \
  X(groups_evicted_disk)         /* evicted from SSD as one unit */          \
  X(groups_reinserted_disk)      /* given another turn by clock eviction */  \
  X(groups_refused_filling_full) /* new groups refused: filling cap */

// A point-in-time copy of GroupCounters.
struct GroupCounterSnapshot {
#define MOONCAKE_TIER_GROUP_COUNTER_FIELD(name) uint64_t name = 0;
  MOONCAKE_TIER_GROUP_COUNTERS(MOONCAKE_TIER_GROUP_COUNTER_FIELD)
#undef MOONCAKE_TIER_GROUP_COUNTER_FIELD

  // Calls visitor(name, value) for every counter, in declaration order.
  template <typename Visitor>
  void VisitCounters(Visitor&& visitor) const {
#define MOONCAKE_TIER_GROUP_COUNTER_VISIT(name) \
  visitor(std::string_view(#name), name);
    MOONCAKE_TIER_GROUP_COUNTERS(MOONCAKE_TIER_GROUP_COUNTER_VISIT)
#undef MOONCAKE_TIER_GROUP_COUNTER_VISIT
  }
};

// Live counters, owned by the Master; relaxed atomics (monotonic, read for
// reporting only). Thread-safe.
struct GroupCounters {
#define MOONCAKE_TIER_GROUP_COUNTER_FIELD(name) std::atomic<uint64_t> name{0};
  MOONCAKE_TIER_GROUP_COUNTERS(MOONCAKE_TIER_GROUP_COUNTER_FIELD)
#undef MOONCAKE_TIER_GROUP_COUNTER_FIELD

  // The groups_broken_* counter of `cause`.
  std::atomic<uint64_t>& Broken(BreakCause cause);

  GroupCounterSnapshot Snapshot() const;
};

}  // namespace mooncake_tier
