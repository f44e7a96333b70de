// Master: read-only views for operators and tests (stats, audit, describe).

#include "core/master.h"
#include "core/validation.h"

namespace mooncake_tier {

MasterStats Master::GetStats() const {
  MasterStats stats;
#define MOONCAKE_TIER_COUNTER_COPY(name) \
  stats.name = s_.counters.name.load(std::memory_order_relaxed);
  MOONCAKE_TIER_MASTER_COUNTERS(MOONCAKE_TIER_COUNTER_COPY)
#undef MOONCAKE_TIER_COUNTER_COPY
  const ObjectCounts objects = s_.index.CountObjects();
  stats.objects = objects.objects;
  stats.pending_puts = objects.pending_puts;
  for (size_t i = 0; i < stats.promotion_duration_buckets.size(); ++i) {
    stats.promotion_duration_buckets[i] =
        s_.counters.promotion_duration_buckets[i].load(
            std::memory_order_relaxed);
  }
  stats.nodes_dead = s_.nodes.DeadCount();
  stats.memory = s_.nodes.MemoryUsage();
  stats.local_disk = s_.nodes.SsdUsage();
  const HitRatioForecast::View forecast = forecast_.Snapshot();
  stats.forecast_sampling_rate = forecast.sampling_rate;
  for (const HitRatioEstimator::Point& p : forecast.points) {
    stats.hit_ratio_forecast.push_back(
        {p.scale, p.capacity_bytes, p.hit_ratio, p.sampled_references});
  }
  for (const NodeView& node : s_.nodes.List()) {
    (node.state == NodeState::kAlive ? stats.nodes_alive
                                     : stats.nodes_suspect)++;
    stats.ssd_configured_bytes += node.spec.ssd_capacity;
  }
  const TaskCounts offloads = s_.lifecycle.Counts(TaskKind::kOffload);
  stats.offload_tasks_queued = offloads.queued;
  stats.offload_tasks_in_flight = offloads.dispatched;
  stats.ssd_deletes_pending = s_.lifecycle.PendingSsdDeletes();
  stats.promotion_tasks_queued =
      s_.lifecycle.Counts(TaskKind::kPromotion).queued;
  stats.promotion_in_flight = s_.lifecycle.gate().in_flight();
  stats.filling_group_bytes = static_cast<uint64_t>(std::max<int64_t>(
      0, s_.filling_group_bytes.load(std::memory_order_relaxed)));
  stats.promotion_sketch_halvings = s_.lifecycle.gate().sketch_stats().halvings;
  for (size_t i = 0; i < stats.put_wait_buckets.size(); ++i) {
    stats.put_wait_buckets[i] =
        s_.counters.put_wait_buckets[i].load(std::memory_order_relaxed);
  }
  for (const NodeMemoryView& node : tiering_.MemoryByNode()) {
    stats.memory_held += node.bytes;
    stats.memory_reserve_bytes += node.reserve_bytes;
    stats.offload_bytes_pending += node.offload.all;
  }
  stats.held_memory_bytes = s_.nodes.HeldMemoryBytes();
  stats.groups = s_.index.CountGroupsByState();
  stats.group_counters = s_.group_counters.Snapshot();
  return stats;
}

AuditReport Master::Audit() const {
  AuditReport report;
  const uint64_t align = s_.config.dram_alignment;
  s_.index.ReadEachObject([&](std::string_view, const ObjectMeta& meta) {
    for (const Replica& r : meta.replicas) {
      report.total_refcnt += r.refcnt;
      if (r.desc.tier == Tier::kMemory) {
        report.replica_memory_bytes += (r.desc.size + align - 1) & ~(align - 1);
      } else {
        report.replica_disk_bytes += r.desc.size;
      }
    }
  });
  report.detached_replicas = s_.lifecycle.detached().count();
  report.replica_memory_bytes += s_.lifecycle.detached().memory_bytes(align);
  report.dropping_memory_bytes = s_.directory.PendingFreeBytes(align);
  std::tie(report.allocated_memory_bytes, report.held_memory_bytes) =
      s_.nodes.UsedAndHeldMemory();
  report.ssd_used_bytes = s_.nodes.SsdUsage().used;
  const TaskCounts offloads = s_.lifecycle.Counts(TaskKind::kOffload);
  const TaskCounts promotions = s_.lifecycle.Counts(TaskKind::kPromotion);
  report.tasks = offloads.queued + offloads.dispatched + promotions.queued +
                 promotions.dispatched;
  s_.index.ReadEachGroup([&](std::string_view, const GroupMeta& group) {
    report.filling_group_bytes += group.FillingDramBytes();
  });
  report.filling_group_bytes_booked =
      s_.filling_group_bytes.load(std::memory_order_relaxed);
  return report;
}

Result<ObjectDescription> Master::DescribeObject(std::string_view key) const {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  return s_.index.Read(
      key, [&](const ObjectMeta* found) -> Result<ObjectDescription> {
        if (found == nullptr) {
          return Status(ErrorReason::kObjectNotFound,
                        "no object with this key");
        }
        const ObjectMeta& meta = *found;
        ObjectDescription out;
        out.size = meta.size;
        out.replicas.assign(meta.replicas.begin(), meta.replicas.end());
        out.group = meta.group_spec();
        out.lease_deadline = meta.lease_deadline;
        out.leases = meta.Leased(s_.clock->Now()) ? meta.leases : 0;
        out.last_access = meta.last_access;
        out.hard_pin = meta.hard_pin;
        return out;
      });
}

}  // namespace mooncake_tier
