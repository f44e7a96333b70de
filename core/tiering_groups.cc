// Tiering (core/tiering.h): eviction of groups as units. A group is one
// candidate: its bytes are the sum of its members', its recency the newest
// member access, and it is skipped whole when any member is leased, pinned,
// processing or in flight. A group leaves a tier in one step, or leaves the
// store whole.

#include "core/eviction_planner.h"
#include "core/eviction_policy.h"
#include "core/tiering.h"

namespace mooncake_tier {

Tiering::GroupUnit Tiering::InspectGroupLocked(const GroupSlot& entry,
                                               Tier tier, NodeId node,
                                               TimePoint now,
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
    unit.disk_since = std::max(unit.disk_since, meta.disk_since);
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

void Tiering::PlanGroups(EvictionPlanner& planner, const EvictionPolicy& policy,
                         NodeId node) {
  const TimePoint now = s_.clock->Now();
  s_.index.ForEachGroup(
      [&](GroupSlot& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role) {
        const GroupUnit unit =
            InspectGroupLocked(group, Tier::kLocalDisk, node, now);
        if (unit.evictable) {
          planner.Add(policy.Rank({unit.last_access, unit.disk_since}, now),
                      unit.bytes);
        }
      });
}

uint64_t Tiering::EvictGroups(const EvictionPolicy& policy, NodeId node,
                              TimePoint cutoff, uint64_t need) {
  const TimePoint now = s_.clock->Now();
  uint64_t freed = 0;
  s_.index.ForEachGroup(
      [&](GroupSlot& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role) {
        if (freed >= need && !policy.reinserts()) return false;
        const GroupUnit unit =
            InspectGroupLocked(group, Tier::kLocalDisk, node, now);
        if (!unit.evictable) return true;
        switch (policy.Sweep({unit.last_access, unit.disk_since}, cutoff)) {
          case SweepAction::kKeep:
            return true;
          case SweepAction::kReinsert:
            // The whole group takes another turn: every member enters
            // the order again together.
            group.ForEachMember(
                [&](ObjectSlot& member) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                    object_stripe_role) { member->disk_since = now; });
            s_.group_counters.groups_reinserted_disk.fetch_add(
                1, std::memory_order_relaxed);
            return true;
          case SweepAction::kEvict:
            if (freed >= need) return true;  // enough: the hand goes on
            break;
        }
        freed += unit.bytes;
        if (EvictGroupLocked(group, Tier::kLocalDisk, unit)) {
          group.Erase();  // the group left the store whole
        }
        return true;
      });
  return freed;
}

bool Tiering::EvictGroupLocked(GroupSlot& group, Tier tier,
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
                                s_.ReleaseReplicaLocked(meta, member.key(), r,
                                                        /*node_alive=*/true);
                                CountEviction(tier, r.desc.size);
                              }
                            });
    (tier == Tier::kMemory ? s_.group_counters.groups_evicted_memory
                           : s_.group_counters.groups_evicted_disk)
        .fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  // With offload on, members without an SSD copy are offloaded first (under
  // write_through, a member whose own offload failed gets another one); the
  // DRAM copies go together once every member is on SSD. While a member's
  // SSD is full the group stays as it is.
  if (tier == Tier::kMemory && s_.Offloads() &&
      (offloader_.GroupPausedLocked(group) ||
       offloader_.QueueGroupLocked(group, OffloadIntent::kGroupMove))) {
    return false;
  }
  // No tier holds the whole group afterwards: it leaves the store whole.
  group.ForEachMember([&](ObjectSlot& member) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                          object_stripe_role) {
    for (const Replica& r : member->replicas) {
      if (r.desc.tier == tier) CountEviction(tier, r.desc.size);
    }
    s_.counters.objects_evicted.fetch_add(1, std::memory_order_relaxed);
    s_.DropObjectLocked(member);
  });
  (tier == Tier::kMemory ? s_.group_counters.groups_evicted_memory
                         : s_.group_counters.groups_evicted_disk)
      .fetch_add(1, std::memory_order_relaxed);
  s_.group_counters.groups_collected.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void Tiering::CountEviction(Tier tier, uint64_t bytes) {
  if (tier == Tier::kMemory) {
    s_.counters.evicted_memory_objects.fetch_add(1, std::memory_order_relaxed);
    s_.counters.evicted_memory_bytes.fetch_add(bytes,
                                               std::memory_order_relaxed);
  } else {
    s_.counters.evicted_disk_objects.fetch_add(1, std::memory_order_relaxed);
    s_.counters.evicted_disk_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
}

}  // namespace mooncake_tier
