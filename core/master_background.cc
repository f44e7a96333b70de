// Master: the background steps (put timeouts, DRAM and SSD eviction).

#include <algorithm>
#include <cmath>

#include "core/eviction_planner.h"
#include "core/master.h"
#include "core/memory_round.h"

namespace mooncake_tier {

void Master::Tick() {
  ExpireNodes();
  ReapStalledPuts();
  ReapOffloadTasks();
  ReapPromotionTasks();
  SweepGroups();
  MemoryRound round;
  round.evict = true;
  round.write_back = true;
  RunMemoryRound(round);
  EvictSsd();
  PromoteProactively();
}

size_t Master::ReapStalledPuts() {
  // Collect first: a grouped member's revocation takes its group stripe,
  // which ranks before the object stripes.
  const TimePoint now = clock_->Now();
  std::vector<std::pair<std::string, std::optional<GroupSpec>>> stalled;
  index_.ForEachPendingPut(
      [&](const std::string& key, TimePoint started, const ObjectMeta* object) {
        if (now - started < config_.put_timeout) return;
        stalled.emplace_back(
            key, object == nullptr ? std::nullopt : object->group_spec());
      });
  size_t reaped = 0;
  for (const auto& [key, group] : stalled) {
    const Status s = group ? RevokeGrouped(key, *group, nullptr)
                           : RevokeStaged(key, std::nullopt, nullptr, nullptr);
    if (s.ok()) ++reaped;
  }
  return reaped;
}

bool Master::MemoryEvictable(const ObjectMeta& meta, TimePoint now) const {
  return !meta.hard_pin && meta.HasComplete(Tier::kMemory) &&
         !meta.PutInFlight() && !meta.AnyPinned() && !meta.Leased(now);
}

uint64_t Master::EvictMemoryLocked(ObjectSlot& object) {
  ObjectMeta& meta = *object;
  Replica* memory = meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
  if (memory == nullptr) return 0;
  if (Offloads() && !meta.HasComplete(Tier::kLocalDisk) &&
      NodeHasSsd(memory->desc.node)) {
    // Write to SSD first; the DRAM copy goes when the node reports success
    // (under write_through too: this object's own offload failed).
    const bool queued =
        QueueOffloadLocked(object.key(), meta, *memory, OffloadIntent::kMove)
            .ok();
    return queued ? meta.size : 0;
  }
  return DropMemoryCopyLocked(object);
}

uint64_t Master::DropMemoryCopyLocked(ObjectSlot& object) {
  ObjectMeta& meta = *object;
  Replica* memory = meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
  if (memory == nullptr) return 0;
  const uint64_t size = meta.size;
  const Replica dropped = *memory;
  meta.Erase(dropped.desc.id);
  ReleaseReplicaLocked(object.key(), dropped, /*node_alive=*/true);
  counters_.evicted_memory_objects.fetch_add(1, std::memory_order_relaxed);
  counters_.evicted_memory_bytes.fetch_add(size, std::memory_order_relaxed);
  if (meta.replicas.empty()) {
    counters_.objects_evicted.fetch_add(1, std::memory_order_relaxed);
  }
  object.EraseIfEmpty();
  return size;
}

uint64_t Master::EvictSsd() {
  MutexLock round(&eviction_mu_);
  uint64_t dropped = 0;
  for (const NodeView& node : nodes_.List()) {
    if (node.state == NodeState::kDead) continue;
    TierUsage usage = nodes_.SsdUsageOf(node.id);
    // Offloads on their way there land on it: room for them is made ahead,
    // so that no writeback fails for a full SSD.
    usage.used += lifecycle_.OffloadBytesOf(node.id).all;
    // A store about to refuse writes: its dead records past what its
    // capacity allows for take room as objects do, and eviction makes it
    // up, coldest first, which empties whole files that compaction then
    // deletes without copying. (Counted only then: compaction reclaims
    // them meanwhile, and evicting for them costs hits.)
    if (node.ssd_report && !SsdReportShowsRoom(*node.ssd_report)) {
      usage.used += SsdDeadBeyondAllowance(*node.ssd_report);
    }
    dropped += EvictSsdOf(node.id, usage);
  }
  return dropped;
}

uint64_t Master::EvictSsdOf(NodeId node, TierUsage usage) {
  const RuntimeKnobs::Watermarks marks = knobs_.ssd();
  // A node whose SSD refused writes for room is fuller than its objects
  // count (records deleted but not yet compacted away): once per refusal it
  // frees a ratio's worth beyond its watermark, which gives its compaction
  // whole files to reclaim.
  const uint64_t owed =
      nodes_.TakeSsdRoomOwed(node)
          ? static_cast<uint64_t>(marks.ratio *
                                  static_cast<double>(usage.capacity))
          : 0;
  const uint64_t need =
      std::max(BytesOverTarget(usage, marks.high, marks.ratio, 0), owed);
  if (need == 0) return 0;
  const TimePoint now = clock_->Now();
  const auto evictable = [&](ObjectMeta& meta) -> Replica* {
    Replica* disk = meta.FindDisk(node);
    if (meta.group || disk == nullptr || disk->refcnt > 0 || meta.Leased(now)) {
      return nullptr;  // groups are evicted as units below
    }
    return disk;
  };

  EvictionPlanner planner;
  index_.ForEachObject([&](ObjectSlot& object) {
    if (evictable(*object) != nullptr) {
      planner.Add(object->last_access, object->size);
    }
  });
  PlanGroups(planner, Tier::kLocalDisk, node);
  const TimePoint cutoff = planner.Cutoff(need);

  uint64_t dropped = 0;
  index_.ForEachObject([&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                           object_stripe_role) {
    if (dropped >= need) return false;
    ObjectMeta& meta = *object;
    if (meta.last_access > cutoff) return true;
    Replica* disk = evictable(meta);
    if (disk == nullptr) return true;
    const Replica replica = *disk;
    meta.Erase(replica.desc.id);
    ReleaseReplicaLocked(object.key(), replica, /*node_alive=*/true);
    dropped += replica.desc.size;
    counters_.evicted_disk_objects.fetch_add(1, std::memory_order_relaxed);
    counters_.evicted_disk_bytes.fetch_add(replica.desc.size,
                                           std::memory_order_relaxed);
    if (meta.replicas.empty()) {
      counters_.objects_evicted.fetch_add(1, std::memory_order_relaxed);
    }
    object.EraseIfEmpty();
    return true;
  });
  if (dropped < need) {
    dropped += EvictGroups(Tier::kLocalDisk, node, cutoff, need - dropped);
  }
  return dropped;
}

}  // namespace mooncake_tier
