// Master: eviction of groups as units. A group is one candidate: its bytes
// are the sum of its members', its recency the newest member access, and
// it is skipped whole when any member is leased, pinned, processing or in
// flight. A group leaves a tier in one step, or leaves the store whole.

#include "core/eviction_planner.h"
#include "core/master.h"

namespace mooncake_tier {

Master::GroupUnit Master::InspectGroupLocked(const GroupSlot& entry, Tier tier,
                                             NodeId node, TimePoint now,
                                             bool memory_view) {
  const GroupMeta& group = *entry;
  GroupUnit unit;
  unit.filling = group.state == GroupState::kFilling;
  if (unit.filling && !memory_view) return unit;
  unit.evictable = !unit.filling;
  const auto add = [](auto& per_node, NodeId id, uint64_t bytes) {
    for (auto& [n, b] : per_node) {
      if (n == id) {
        b += bytes;
        return;
      }
    }
    per_node.emplace_back(id, bytes);
  };
  entry.ForEachMember([&](ObjectSlot& member) {
    const ObjectMeta& meta = *member;
    ++unit.members;
    unit.last_access = std::max(unit.last_access, meta.last_access);
    unit.hard_pinned |= meta.hard_pin;
    unit.in_flight |= meta.PutInFlight();
    unit.pinned |= meta.AnyPinned();
    unit.leased |= meta.Leased(now);
    const bool here = tier == Tier::kMemory ? meta.HasComplete(Tier::kMemory)
                                            : meta.FindDisk(node) != nullptr;
    if (here) unit.bytes += meta.size;
    const bool on_disk = meta.HasComplete(Tier::kLocalDisk);
    if (!on_disk) unit.all_on_disk = false;
    if (!meta.HasComplete(Tier::kMemory)) unit.all_in_memory = false;
    if (!memory_view) return;
    for (const Replica& r : meta.replicas) {
      if (r.desc.tier != Tier::kMemory) continue;
      if (r.desc.state == ReplicaState::kComplete) {
        add(unit.memory_bytes, r.desc.node, r.desc.size);
        if (!on_disk) unit.unwritten_nodes.push_back(r.desc.node);
      } else {
        add(unit.staged_bytes, r.desc.node, r.desc.size);
      }
    }
  });
  if (unit.in_flight || unit.pinned || unit.leased || unit.hard_pinned) {
    unit.evictable = false;
  }
  if (unit.bytes == 0 || unit.members == 0) unit.evictable = false;
  return unit;
}

void Master::PlanGroups(EvictionPlanner& planner, Tier tier, NodeId node) {
  const TimePoint now = clock_->Now();
  index_.ForEachGroup(
      [&](GroupSlot& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role) {
        const GroupUnit unit = InspectGroupLocked(group, tier, node, now);
        if (unit.evictable) planner.Add(unit.last_access, unit.bytes);
      });
}

uint64_t Master::EvictGroups(Tier tier, NodeId node, TimePoint cutoff,
                             uint64_t need) {
  const TimePoint now = clock_->Now();
  uint64_t freed = 0;
  index_.ForEachGroup(
      [&](GroupSlot& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role) {
        if (freed >= need) return false;
        const GroupUnit unit = InspectGroupLocked(group, tier, node, now);
        if (!unit.evictable || unit.last_access > cutoff) return true;
        freed += unit.bytes;
        if (EvictGroupLocked(group, tier, unit)) {
          group.Erase();  // the group left the store whole
        }
        return true;
      });
  return freed;
}

bool Master::EvictGroupLocked(GroupSlot& group, Tier tier,
                              const GroupUnit& unit) {
  // Another copy of every member exists: drop this tier's copies together.
  const bool other_tier_whole =
      tier == Tier::kMemory ? unit.all_on_disk : unit.all_in_memory;
  if (other_tier_whole) {
    group.ForEachMember([&](ObjectSlot& member)
                            ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
                              ObjectMeta& meta = *member;
                              for (size_t i = meta.replicas.size(); i-- > 0;) {
                                const Replica r = meta.replicas[i];
                                if (r.desc.tier != tier) continue;
                                meta.replicas.erase(meta.replicas.begin() + i);
                                ReleaseReplicaLocked(member.key(), r,
                                                     /*node_alive=*/true);
                                CountEviction(tier, r.desc.size);
                              }
                            });
    (tier == Tier::kMemory ? group_counters_.groups_evicted_memory
                           : group_counters_.groups_evicted_disk)
        .fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  // With offload on, members without an SSD copy are offloaded first (under
  // write_through, a member whose own offload failed gets another one); the
  // DRAM copies go together once every member is on SSD. While a member's
  // SSD is full the group stays as it is.
  if (tier == Tier::kMemory && Offloads() &&
      (GroupOffloadPausedLocked(group) ||
       QueueGroupOffloadLocked(group, OffloadIntent::kGroupMove))) {
    return false;
  }
  // No tier holds the whole group afterwards: it leaves the store whole.
  group.ForEachMember([&](ObjectSlot& member)
                          ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
                            for (const Replica& r : member->replicas) {
                              if (r.desc.tier == tier)
                                CountEviction(tier, r.desc.size);
                            }
                            counters_.objects_evicted.fetch_add(
                                1, std::memory_order_relaxed);
                            DropObjectLocked(member);
                          });
  (tier == Tier::kMemory ? group_counters_.groups_evicted_memory
                         : group_counters_.groups_evicted_disk)
      .fetch_add(1, std::memory_order_relaxed);
  group_counters_.groups_collected.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool Master::GroupOffloadPausedLocked(const GroupSlot& group) {
  bool paused = false;
  group.ForEachMember([&](ObjectSlot& member) {
    const Replica* memory =
        member->FindTier(Tier::kMemory, ReplicaState::kComplete);
    if (memory != nullptr && !member->HasComplete(Tier::kLocalDisk) &&
        OffloadsPausedFor(memory->desc.node)) {
      paused = true;
    }
  });
  return paused;
}

bool Master::QueueGroupOffloadLocked(GroupSlot& group, OffloadIntent intent,
                                     bool forced, std::vector<TaskId>* queued,
                                     Status* failed) {
  bool possible = true;
  group.ForEachMember([&](ObjectSlot& member) {
    const Replica* memory =
        member->FindTier(Tier::kMemory, ReplicaState::kComplete);
    if (!member->HasComplete(Tier::kLocalDisk) &&
        (memory == nullptr || !NodeHasSsd(memory->desc.node) ||
         OffloadsPausedFor(memory->desc.node))) {
      possible = false;
    }
  });
  if (!possible) return false;
  group.ForEachMember([&](ObjectSlot& member) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                          object_stripe_role) {
    ObjectMeta& meta = *member;
    if (meta.HasComplete(Tier::kLocalDisk)) return;
    Replica* memory = meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
    // Already on its way (a writeback before this eviction):
    // that task counts; a second one for the key would be
    // refused anyway.
    if (memory->refcnt > 0) return;
    Result<TaskId> task =
        QueueOffloadLocked(member.key(), meta, *memory, intent, forced);
    if (task.ok()) {
      if (queued != nullptr) queued->push_back(*task);
    } else if (failed != nullptr && failed->ok()) {
      *failed = task.status();
    }
  });
  return true;
}

void Master::CountEviction(Tier tier, uint64_t bytes) {
  if (tier == Tier::kMemory) {
    counters_.evicted_memory_objects.fetch_add(1, std::memory_order_relaxed);
    counters_.evicted_memory_bytes.fetch_add(bytes, std::memory_order_relaxed);
  } else {
    counters_.evicted_disk_objects.fetch_add(1, std::memory_order_relaxed);
    counters_.evicted_disk_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
}

}  // namespace mooncake_tier
