#pragma once

// The object stripes: key -> ObjectMeta. Keys hash onto a power-of-two
// number of stripes, each with its own mutex, so unrelated keys never
// contend (the leveldb ShardedLRUCache layout).
//
// A layout, not an interface: only the ObjectIndex (core/object_index.h)
// locks a stripe or reaches into one; the rest of the master goes through
// the index, which keeps the lock order (docs/design/core.md).
//
// Thread safety: the stripe maps are guarded by their stripe's mutex.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "core/group_record.h"
#include "core/hashed_key.h"
#include "protocol/types.h"

namespace mooncake_tier {

struct ObjectMeta {
  uint64_t size = 0;
  absl::InlinedVector<Replica, 2> replicas;
  // Group membership: the record shared with the group (its id, size and
  // whether it is complete), null for an object that is its own unit; the
  // member's index in `group_index`.
  GroupRef group;
  uint32_t group_index = 0;
  uint32_t leases = 0;    // see lease_deadline (fills the padding here)
  ClientId put_owner;     // client of the put in progress, if any
  TimePoint put_started;  // when the current DRAM put started
  // Readers' leases: `leases` readers hold the object (protected from
  // eviction and non-forced removal) until they release it or until
  // lease_deadline, the safety net for readers that never release. The
  // readers of one lease period share `lease_id` (unique in the master's
  // life), so a release from an earlier period never ends a later one.
  TimePoint lease_deadline;
  uint64_t lease_id = 0;
  // Until when readers may use the DRAM location they were given from
  // their location caches (MasterConfig::location_grant): a DRAM copy
  // released before then keeps its range out of use until then.
  TimePoint read_grant_until;
  TimePoint last_access;  // recency for eviction
  // When its SSD copy was written, or last given another turn by the SSD
  // tier's eviction (EvictionUnit::inserted).
  TimePoint disk_since;
  bool hard_pin = false;
  // A promotion's DRAM copy was committed and nobody has read the object
  // from DRAM since: its first DRAM read counts the promotion useful.
  bool promoted_unread = false;

  // The membership as a value (null: not a member).
  std::optional<GroupSpec> group_spec() const;
  // Whether the object carries exactly `spec` (both null: not a member).
  bool HasGroup(const std::optional<GroupSpec>& spec) const;
  // A member of a complete group: readable under all_or_nothing. No lock
  // beyond the object's stripe (the record's flag is atomic).
  bool GroupReadable() const { return group != nullptr && group->IsComplete(); }

  Replica* Find(ReplicaId id);
  Replica* FindTier(Tier tier, ReplicaState state);
  Replica* FindDisk(NodeId node);
  const Replica* FindDisk(NodeId node) const {
    return const_cast<ObjectMeta*>(this)->FindDisk(node);
  }
  bool HasComplete(Tier tier) const;
  bool HasComplete() const;
  // A put in flight: a processing DRAM replica that is not a promotion's
  // staged copy.
  bool PutInFlight() const {
    return const_cast<ObjectMeta*>(this)->StagedPut() != nullptr;
  }
  // The DRAM replica of the put in flight, or null.
  Replica* StagedPut() {
    for (Replica& r : replicas) {
      if (r.desc.tier == Tier::kMemory &&
          r.desc.state == ReplicaState::kProcessing && r.staged_by == 0) {
        return &r;
      }
    }
    return nullptr;
  }
  bool AnyPinned() const;
  bool Leased(TimePoint now) const {
    return leases > 0 && lease_deadline > now;
  }
  // For a refusal because of a lease: "; the lease ends within 9.8 s at the
  // latest (sooner when the reader releases it)". REQUIRES: Leased(now).
  std::string LeaseEndsNote(TimePoint now) const;
  // Removes a replica by id; returns it if it was there.
  std::optional<Replica> Erase(ReplicaId id);
};

class ObjectTable {
 public:
  struct Shard {
    mutable Mutex mu;
    absl::flat_hash_map<std::string, ObjectMeta> objects ABSL_GUARDED_BY(mu);
    // Keys with a put in progress, for the put-timeout sweep.
    absl::flat_hash_map<std::string, TimePoint> pending_puts
        ABSL_GUARDED_BY(mu);
  };

  // REQUIRES: shard_count is a power of two.
  explicit ObjectTable(uint32_t shard_count);

  uint32_t shard_count() const { return static_cast<uint32_t>(shards_.size()); }
  uint32_t ShardIndex(std::string_view key) const;
  uint32_t ShardIndex(const HashedKey& key) const {
    return StripeOf(key.hash, shards_.size());
  }
  Shard& ShardFor(std::string_view key) { return *shards_[ShardIndex(key)]; }
  Shard& ShardFor(const HashedKey& key) { return *shards_[ShardIndex(key)]; }
  Shard& shard(uint32_t index) { return *shards_[index]; }
  const Shard& ShardFor(std::string_view key) const {
    return *shards_[ShardIndex(key)];
  }
  const Shard& ShardFor(const HashedKey& key) const {
    return *shards_[ShardIndex(key)];
  }
  const Shard& shard(uint32_t index) const { return *shards_[index]; }

  // Objects in all shards; takes each shard lock in turn.
  size_t Size() const;

 private:
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace mooncake_tier
