// Master: read-only views for operators and tests (stats, audit, describe).

#include "core/master.h"
#include "core/validation.h"

namespace mooncake_tier {

MasterStats Master::GetStats() const {
  MasterStats stats;
#define MOONCAKE_TIER_COUNTER_COPY(name) \
  stats.name = counters_.name.load(std::memory_order_relaxed);
  MOONCAKE_TIER_MASTER_COUNTERS(MOONCAKE_TIER_COUNTER_COPY)
#undef MOONCAKE_TIER_COUNTER_COPY
  const ObjectCounts objects = index_.CountObjects();
  stats.objects = objects.objects;
  stats.pending_puts = objects.pending_puts;
  for (size_t i = 0; i < stats.promotion_duration_buckets.size(); ++i) {
    stats.promotion_duration_buckets[i] =
        counters_.promotion_duration_buckets[i].load(std::memory_order_relaxed);
  }
  stats.nodes_dead = nodes_.DeadCount();
  stats.memory = nodes_.MemoryUsage();
  stats.local_disk = nodes_.SsdUsage();
  for (const NodeView& node : nodes_.List()) {
    (node.state == NodeState::kAlive ? stats.nodes_alive
                                     : stats.nodes_suspect)++;
  }
  const TaskCounts offloads = lifecycle_.Counts(TaskKind::kOffload);
  stats.offload_tasks_queued = offloads.queued;
  stats.offload_tasks_in_flight = offloads.dispatched;
  stats.ssd_deletes_pending = lifecycle_.PendingSsdDeletes();
  stats.promotion_tasks_queued = lifecycle_.Counts(TaskKind::kPromotion).queued;
  stats.promotion_in_flight = lifecycle_.gate().in_flight();
  stats.filling_group_bytes = static_cast<uint64_t>(std::max<int64_t>(
      0, filling_group_bytes_.load(std::memory_order_relaxed)));
  stats.promotion_sketch_halvings = lifecycle_.gate().sketch_stats().halvings;
  for (size_t i = 0; i < stats.put_wait_buckets.size(); ++i) {
    stats.put_wait_buckets[i] =
        counters_.put_wait_buckets[i].load(std::memory_order_relaxed);
  }
  for (const NodeMemoryView& node : MemoryByNode()) {
    stats.memory_held += node.bytes;
    stats.memory_reserve_bytes += node.reserve_bytes;
    stats.offload_bytes_pending += node.offload.all;
  }
  stats.groups = index_.CountGroupsByState();
  stats.group_counters = group_counters_.Snapshot();
  return stats;
}

AuditReport Master::Audit() const {
  AuditReport report;
  const uint64_t align = config_.dram_alignment;
  index_.ReadEachObject([&](std::string_view, const ObjectMeta& meta) {
    for (const Replica& r : meta.replicas) {
      report.total_refcnt += r.refcnt;
      if (r.desc.tier == Tier::kMemory) {
        report.replica_memory_bytes += (r.desc.size + align - 1) & ~(align - 1);
      } else {
        report.replica_disk_bytes += r.desc.size;
      }
    }
  });
  report.detached_replicas = lifecycle_.detached().count();
  report.replica_memory_bytes += lifecycle_.detached().memory_bytes(align);
  report.allocated_memory_bytes = nodes_.MemoryUsage().used;
  report.ssd_used_bytes = nodes_.SsdUsage().used;
  const TaskCounts offloads = lifecycle_.Counts(TaskKind::kOffload);
  const TaskCounts promotions = lifecycle_.Counts(TaskKind::kPromotion);
  report.tasks = offloads.queued + offloads.dispatched + promotions.queued +
                 promotions.dispatched;
  index_.ReadEachGroup([&](std::string_view, const GroupMeta& group) {
    report.filling_group_bytes += group.FillingDramBytes();
  });
  report.filling_group_bytes_booked =
      filling_group_bytes_.load(std::memory_order_relaxed);
  return report;
}

Result<ObjectDescription> Master::DescribeObject(std::string_view key) const {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  return index_.Read(
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
        out.leases = meta.Leased(clock_->Now()) ? meta.leases : 0;
        out.last_access = meta.last_access;
        out.hard_pin = meta.hard_pin;
        return out;
      });
}

}  // namespace mooncake_tier
