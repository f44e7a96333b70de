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
  for (uint32_t s = 0; s < objects_.shard_count(); ++s) {
    Shard& shard = objects_.shard(s);
    MutexLock lock(&shard.mu);
    for (const auto& [key, started] : shard.pending_puts) {
      if (now - started < config_.put_timeout) continue;
      auto it = shard.objects.find(key);
      stalled.emplace_back(key, it == shard.objects.end()
                                    ? std::nullopt
                                    : it->second.group_spec());
    }
  }
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

uint64_t Master::EvictMemoryLocked(Shard& shard, ObjectMap::iterator it) {
  ObjectMeta& meta = it->second;
  Replica* memory = meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
  if (memory == nullptr) return 0;
  if (Offloads() && !meta.HasComplete(Tier::kLocalDisk) &&
      NodeHasSsd(memory->desc.node)) {
    // Write to SSD first; the DRAM copy goes when the node reports success
    // (under write_through too: this object's own offload failed).
    const bool queued = QueueOffloadLocked(shard, it->first, meta, *memory,
                                           OffloadIntent::kMove)
                            .ok();
    return queued ? meta.size : 0;
  }
  return DropMemoryCopyLocked(shard, it);
}

uint64_t Master::DropMemoryCopyLocked(Shard& shard, ObjectMap::iterator it) {
  ObjectMeta& meta = it->second;
  Replica* memory = meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
  if (memory == nullptr) return 0;
  const uint64_t size = meta.size;
  const Replica dropped = *memory;
  meta.Erase(dropped.desc.id);
  ReleaseReplicaLocked(shard, it->first, dropped, /*node_alive=*/true);
  counters_.evicted_memory_objects.fetch_add(1, std::memory_order_relaxed);
  counters_.evicted_memory_bytes.fetch_add(size, std::memory_order_relaxed);
  if (meta.replicas.empty()) {
    counters_.objects_evicted.fetch_add(1, std::memory_order_relaxed);
  }
  EraseIfEmptyLocked(shard, it);
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
    usage.used += tasks_.OffloadBytesOf(node.id).all;
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
  for (uint32_t s = 0; s < objects_.shard_count(); ++s) {
    Shard& shard = objects_.shard(s);
    MutexLock lock(&shard.mu);
    for (auto& [key, meta] : shard.objects) {
      if (evictable(meta) != nullptr) planner.Add(meta.last_access, meta.size);
    }
  }
  PlanGroups(planner, Tier::kLocalDisk, node);
  const TimePoint cutoff = planner.Cutoff(need);

  uint64_t dropped = 0;
  for (uint32_t s = 0; s < objects_.shard_count() && dropped < need; ++s) {
    Shard& shard = objects_.shard(s);
    MutexLock lock(&shard.mu);
    for (auto it = shard.objects.begin();
         it != shard.objects.end() && dropped < need;) {
      auto current = it++;
      ObjectMeta& meta = current->second;
      if (meta.last_access > cutoff) continue;
      Replica* disk = evictable(meta);
      if (disk == nullptr) continue;
      const Replica replica = *disk;
      meta.Erase(replica.desc.id);
      ReleaseReplicaLocked(shard, current->first, replica, /*node_alive=*/true);
      dropped += replica.desc.size;
      counters_.evicted_disk_objects.fetch_add(1, std::memory_order_relaxed);
      counters_.evicted_disk_bytes.fetch_add(replica.desc.size,
                                             std::memory_order_relaxed);
      if (meta.replicas.empty()) {
        counters_.objects_evicted.fetch_add(1, std::memory_order_relaxed);
      }
      EraseIfEmptyLocked(shard, current);
    }
  }
  if (dropped < need) {
    dropped += EvictGroups(Tier::kLocalDisk, node, cutoff, need - dropped);
  }
  return dropped;
}

}  // namespace mooncake_tier
