// Tiering (core/tiering.h): SSD eviction, per node, below its watermarks.

#include <algorithm>

#include "core/eviction_planner.h"
#include "core/eviction_policy.h"
#include "core/memory_round.h"
#include "core/tiering.h"

namespace mooncake_tier {
namespace {

// The SSD watermark and band of a policy that evicts out of the log's
// order (LRU): 90 % down to 85 %.
constexpr double kOutOfOrderFillCap = 0.90;
constexpr double kOutOfOrderRatio = 0.05;

}  // namespace

const EvictionPolicy& Tiering::SsdPolicy() const {
  return *ssd_policies_[static_cast<size_t>(s_.knobs.ssd_eviction_policy())];
}

uint64_t Tiering::EvictSsd() {
  MutexLock round(&eviction_mu_);
  uint64_t dropped = 0;
  for (const NodeView& node : s_.nodes.List()) {
    if (node.state == NodeState::kDead) continue;
    TierUsage usage = s_.nodes.SsdUsageOf(node.id);
    // Offloads on their way there land on it: room for them is made ahead,
    // so that no writeback fails for a full SSD.
    usage.used += s_.lifecycle.OffloadBytesOf(node.id).all;
    // A store about to refuse writes: its dead records past what its
    // capacity allows for take room as objects do, and eviction makes it
    // up, coldest first, which empties whole files that compaction then
    // deletes without copying. (Counted only then: compaction reclaims
    // them meanwhile, and evicting for them costs hits.)
    if (node.ssd_report && !SsdReportShowsRoom(*node.ssd_report)) {
      usage.used += SsdDeadBeyondAllowance(*node.ssd_report);
    }
    dropped += EvictSsdOf(node.id, usage,
                          node.ssd_report ? SsdFillCap(*node.ssd_report) : 1.0);
  }
  return dropped;
}

uint64_t Tiering::EvictSsdOf(NodeId node, TierUsage usage, double fill_cap) {
  RuntimeKnobs::Watermarks marks = s_.knobs.ssd();
  const EvictionPolicy& policy = SsdPolicy();
  // A small store's files are large for its size: eviction keeps room for
  // its dead records below the watermark an operator set (SsdFillCap). A
  // policy that evicts out of the log's order leaves dead records in every
  // file until compaction copies their live rest: it keeps the slack the
  // store ran with before it evicted in log order.
  if (!policy.evicts_in_entry_order()) {
    fill_cap = std::min(fill_cap, kOutOfOrderFillCap);
    marks.ratio = std::max(marks.ratio, kOutOfOrderRatio);
  }
  marks.high = std::max(std::min(marks.high, fill_cap), 2 * marks.ratio);
  // A node whose SSD refused writes for room is fuller than its objects
  // count (records deleted but not yet compacted away): once per refusal it
  // frees a ratio's worth beyond its watermark, which gives its compaction
  // whole files to reclaim.
  const uint64_t owed =
      s_.nodes.TakeSsdRoomOwed(node)
          ? static_cast<uint64_t>(marks.ratio *
                                  static_cast<double>(usage.capacity))
          : 0;
  const uint64_t need =
      std::max(BytesOverTarget(usage, marks.high, marks.ratio, 0), owed);
  if (need == 0) return 0;
  const TimePoint now = s_.clock->Now();
  const auto evictable = [&](ObjectMeta& meta) -> Replica* {
    Replica* disk = meta.FindDisk(node);
    if (meta.group || disk == nullptr || disk->refcnt > 0 || meta.Leased(now)) {
      return nullptr;  // groups are evicted as units below
    }
    return disk;
  };
  const auto unit_of = [](const ObjectMeta& meta) {
    return EvictionUnit{meta.last_access, meta.disk_since};
  };

  EvictionPlanner planner;
  s_.index.ForEachObject([&](ObjectSlot& object) {
    if (evictable(*object) != nullptr) {
      planner.Add(policy.Rank(unit_of(*object), now), object->size);
    }
  });
  PlanGroups(planner, policy, node);
  const TimePoint cutoff = planner.Cutoff(need);

  uint64_t dropped = 0;
  s_.index.ForEachObject([&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                             object_stripe_role) {
    if (dropped >= need && !policy.reinserts()) return false;
    ObjectMeta& meta = *object;
    Replica* disk = evictable(meta);
    if (disk == nullptr) return true;
    switch (policy.Sweep(unit_of(meta), cutoff)) {
      case SweepAction::kKeep:
        return true;
      case SweepAction::kReinsert:
        meta.disk_since = now;
        s_.counters.ssd_reinserted_objects.fetch_add(1,
                                                     std::memory_order_relaxed);
        return true;
      case SweepAction::kEvict:
        if (dropped >= need) return true;  // enough: the hand goes on
        break;
    }
    const Replica replica = *disk;
    meta.Erase(replica.desc.id);
    s_.ReleaseReplicaLocked(meta, object.key(), replica,
                            /*node_alive=*/true);
    dropped += replica.desc.size;
    s_.counters.evicted_disk_objects.fetch_add(1, std::memory_order_relaxed);
    s_.counters.evicted_disk_bytes.fetch_add(replica.desc.size,
                                             std::memory_order_relaxed);
    if (meta.replicas.empty()) {
      s_.counters.objects_evicted.fetch_add(1, std::memory_order_relaxed);
    }
    object.EraseIfEmpty();
    return true;
  });
  if (dropped < need || policy.reinserts()) {
    dropped +=
        EvictGroups(policy, node, cutoff, need - std::min(need, dropped));
  }
  return dropped;
}

}  // namespace mooncake_tier
