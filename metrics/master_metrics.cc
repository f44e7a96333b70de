#include "metrics/master_metrics.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <string_view>

#include "metrics/family_set.h"

namespace mooncake_tier::metrics {
namespace {

using M = MetricId;

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

void AddStore(const MasterStats& s, FamilySet& f) {
  for (Tier tier : {Tier::kMemory, Tier::kLocalDisk}) {
    const TierUsage& usage = tier == Tier::kMemory ? s.memory : s.local_disk;
    f.Add(M::kTierCapacityBytes, usage.capacity, {TierName(tier)});
    f.Add(M::kTierUsedBytes, usage.used, {TierName(tier)});
  }
  const auto share = [](uint64_t used, uint64_t of) {
    return of == 0 ? 0.0 : static_cast<double>(used) / static_cast<double>(of);
  };
  f.Add(M::kTierLiveRatio, share(s.memory.used, s.memory.capacity),
        {TierName(Tier::kMemory)});
  f.Add(M::kTierLiveRatio, share(s.local_disk.used, s.ssd_configured_bytes),
        {TierName(Tier::kLocalDisk)});
  for (const MasterStats::ForecastPoint& p : s.hit_ratio_forecast) {
    char scale[32];
    std::snprintf(scale, sizeof(scale), "%g", p.scale);
    f.Add(M::kHitRatioForecast, p.hit_ratio, {scale});
  }
  f.Add(M::kHitRatioForecastSampling, s.forecast_sampling_rate);
  f.Add(M::kObjects, s.objects);
  f.Add(M::kPutsPending, s.pending_puts);
  // Dead: declared dead by silence or by leaving, and not registered again
  // since (nodes_expired_total counts every death but a clean departure,
  // replacements included; nodes_deregistered_total the departures).
  f.Add(M::kNodes, s.nodes_alive, {NodeStateName(NodeState::kAlive)});
  f.Add(M::kNodes, s.nodes_suspect, {NodeStateName(NodeState::kSuspect)});
  f.Add(M::kNodes, s.nodes_dead, {NodeStateName(NodeState::kDead)});
  f.Add(M::kNodesRegisteredTotal, s.nodes_registered);
  f.Add(M::kNodesExpiredTotal, s.nodes_expired);
  f.Add(M::kNodesDeregisteredTotal, s.nodes_deregistered);
  f.Add(M::kObjectsLostTotal, s.objects_lost);
  f.Add(M::kInventoryRestoredTotal, s.inventory_restored);
  f.Add(M::kSsdCorruptionsTotal, s.ssd_corruptions);
  f.Add(M::kRecoveredObjectsTotal, s.dram_restored, {TierName(Tier::kMemory)});
  f.Add(M::kRecoveredObjectsTotal, s.inventory_restored,
        {TierName(Tier::kLocalDisk)});
}

void AddDataPath(const MasterStats& s, FamilySet& f) {
  f.Add(M::kPutStartedTotal, s.put_started);
  f.Add(M::kPutCompletedTotal, s.put_completed);
  f.Add(M::kPutFailedTotal, s.put_revoked, {"revoked"});
  f.Add(M::kPutFailedTotal, s.put_timed_out, {"timed_out"});
  f.Add(M::kPutFailedTotal, s.put_no_space, {"no_space"});
  f.Add(M::kPutFailedTotal, s.put_rejected, {"rejected"});
  // Stored, but not recorded by its node in time (ha.md): may not survive a
  // master restart.
  f.Add(M::kPutFailedTotal, s.put_unrecorded, {"unrecorded"});
  f.Add(M::kGetTotal, s.get_memory_hit, {"memory_hit"});
  f.Add(M::kGetTotal, s.get_local_disk_hit, {"local_disk_hit"});
  f.Add(M::kGetTotal, s.get_miss, {"miss"});
  f.Add(M::kGetTotal, s.get_group_incomplete, {"group_incomplete"});
  f.Add(M::kExistsTotal, s.exists_calls);
  f.Add(M::kPrefixProbesTotal, s.prefix_probes);
  f.Add(M::kRemovesTotal, s.removes);
  f.Add(M::kEvictionsTotal, s.evicted_memory_objects, {"memory"});
  f.Add(M::kEvictionsTotal, s.evicted_disk_objects, {"local_disk"});
  f.Add(M::kEvictedBytesTotal, s.evicted_memory_bytes, {"memory"});
  f.Add(M::kEvictedBytesTotal, s.evicted_disk_bytes, {"local_disk"});
  f.Add(M::kObjectsEvictedTotal, s.objects_evicted);
  f.Add(M::kSsdReinsertedTotal, s.ssd_reinserted_objects, {"object"});
  f.Add(M::kSsdReinsertedTotal, s.group_counters.groups_reinserted_disk,
        {"group"});
}

void AddOffload(const MasterStats& s, FamilySet& f) {
  f.Add(M::kOffloadQueuedTotal, s.offload_queued);
  f.Add(M::kOffloadCompletedTotal, s.offload_completed);
  f.Add(M::kOffloadBytesTotal, s.offload_bytes);
  f.Add(M::kOffloadFailedTotal, s.offload_failed, {"node_error"});
  f.Add(M::kOffloadFailedTotal, s.offload_timed_out, {"timeout"});
  f.Add(M::kOffloadFailedTotal, s.offload_node_lost, {"node_lost"});
  f.Add(M::kOffloadFailedTotal, s.offload_queue_full, {"queue_full"});
  f.Add(M::kOffloadDiscardedTotal, s.offload_discarded);
  f.Add(M::kOffloadTasks, s.offload_tasks_queued, {"queued"});
  f.Add(M::kOffloadTasks, s.offload_tasks_in_flight, {"dispatched"});
  f.Add(M::kSsdDeletesPending, s.ssd_deletes_pending);
  f.Add(M::kOffloadBytesPending, s.offload_bytes_pending);
  f.Add(M::kOffloadPausesTotal, s.offload_pauses);
}

// DRAM by how it is held, as (state label, bytes).
std::array<std::pair<std::string_view, uint64_t>, 9> MemoryStates(
    const MemoryBreakdown& b) {
  return {{{"free", b.free()},
           {"clean", b.clean},
           {"dirty", b.dirty},
           {"writeback", b.writeback},
           {"leased", b.leased},
           {"pinned", b.pinned},
           {"in_flight", b.in_flight},
           {"filling", b.filling},
           {"hard_pinned", b.hard_pinned}}};
}

void AddPipeline(const MasterStats& s,
                 const std::vector<NodeMemoryView>& memory,
                 const std::vector<NodeView>& nodes, FamilySet& f) {
  for (const auto& [state, bytes] : MemoryStates(s.memory_held)) {
    f.Add(M::kMemoryBytes, bytes, {state});
  }
  for (const NodeMemoryView& node : memory) {
    std::string name = std::to_string(node.node);
    for (const NodeView& view : nodes) {
      if (view.id == node.node) name = view.spec.name;
    }
    for (const auto& [state, bytes] : MemoryStates(node.bytes)) {
      f.Add(M::kNodeMemoryBytes, bytes, {name, state});
    }
  }
  f.Add(M::kMemoryReserveBytes, s.memory_reserve_bytes);
  f.Add(M::kWritebackQueuedTotal, s.writeback_queued);
  f.Add(M::kWritebackCompletedTotal, s.writeback_completed);
  f.Add(M::kWritebackBytesTotal, s.writeback_bytes);
  f.Add(M::kPutWaitsTotal, s.put_waits);
  std::array<double, kPutWaitBounds.size()> bounds{};
  for (size_t i = 0; i < bounds.size(); ++i) {
    bounds[i] = Seconds(kPutWaitBounds[i]);
  }
  f.AddHistogram(M::kPutWaitSeconds, {}, bounds, s.put_wait_buckets,
                 static_cast<double>(s.put_wait_us) / 1e6);
  f.Add(M::kPutEvictionsTotal, s.put_evictions);
  f.Add(M::kMemoryRoundsTotal,
        s.memory_rounds - s.memory_rounds_by_puts - s.memory_rounds_by_pulls,
        {"background"});
  f.Add(M::kMemoryRoundsTotal, s.memory_rounds_by_puts, {"put"});
  f.Add(M::kMemoryRoundsTotal, s.memory_rounds_by_pulls, {"pull"});
  f.Add(M::kLeasesReleasedTotal, s.leases_released);
  f.Add(M::kLeasesExpiredTotal, s.leases_expired);
  f.Add(M::kLocationGrantsTotal, s.location_grants);
  f.Add(M::kCachedReadsReportedTotal, s.cached_reads_reported);
  f.Add(M::kHeldMemoryBytes, s.held_memory_bytes);
}

void AddPromotion(const MasterStats& s, FamilySet& f) {
  f.Add(M::kPromotionAttemptsTotal, s.promotion_attempts);
  f.Add(M::kPromotionQueuedTotal, s.promotion_queued);
  f.Add(M::kPromotionCompletedTotal, s.promotion_completed);
  f.Add(M::kPromotionUsefulTotal, s.promotion_useful);
  // Gates first (in the order they run), then task failures.
  const std::array<std::pair<std::string_view, uint64_t>, 8> failed = {{
      {"admission", s.promotion_admission_gated},
      {"watermark", s.promotion_watermark_gated},
      {"queue_full", s.promotion_queue_full},
      {"alloc_failed", s.promotion_alloc_failed},
      {"transfer_failed", s.promotion_transfer_failed},
      {"source_lost", s.promotion_source_lost},
      {"timeout", s.promotion_timeout},
      {"node_lost", s.promotion_node_lost},
  }};
  for (const auto& [reason, value] : failed) {
    f.Add(M::kPromotionFailedTotal, value, {reason});
  }
  f.Add(M::kPromotionDedupedTotal, s.promotion_deduped);
  f.Add(M::kPromotionInFlight, s.promotion_in_flight);
  f.Add(M::kPromotionTasksQueued, s.promotion_tasks_queued);
  f.Add(M::kPromotionBytesTotal, s.promotion_bytes);
  f.Add(M::kPromotionDurationSecondsTotal,
        static_cast<double>(s.promotion_duration_us) / 1e6);
  std::array<double, kPromotionDurationBounds.size()> bounds{};
  for (size_t i = 0; i < bounds.size(); ++i) {
    bounds[i] = Seconds(kPromotionDurationBounds[i]);
  }
  f.AddHistogram(M::kPromotionDurationSeconds, {}, bounds,
                 s.promotion_duration_buckets,
                 static_cast<double>(s.promotion_duration_us) / 1e6);
  f.Add(M::kPromotionForcedTotal, s.promotion_forced);
  f.Add(M::kPromotionProactiveTotal, s.promotion_proactive);
  f.Add(M::kPromotionDroppedSourcesTotal, s.promotion_dropped_sources);
  f.Add(M::kPromotionSketchHalvingsTotal, s.promotion_sketch_halvings);
}

void AddGroups(const MasterStats& s, FamilySet& f) {
  for (GroupState state : {GroupState::kFilling, GroupState::kComplete,
                           GroupState::kBroken, GroupState::kExpired}) {
    f.Add(M::kGroups, s.groups.Of(state), {GroupStateName(state)});
  }
  f.Add(M::kGroupFillingBytes, s.filling_group_bytes);
  const GroupCounterSnapshot& g = s.group_counters;
  f.Add(M::kGroupCreatedTotal, g.groups_created);
  f.Add(M::kGroupCompletedTotal, g.groups_completed);
  f.Add(M::kGroupBrokenTotal, g.groups_broken_removed,
        {BreakCauseName(BreakCause::kRemoved)});
  f.Add(M::kGroupBrokenTotal, g.groups_broken_node_lost,
        {BreakCauseName(BreakCause::kNodeLost)});
  f.Add(M::kGroupBrokenTotal, g.groups_broken_corrupt,
        {BreakCauseName(BreakCause::kCorrupt)});
  f.Add(M::kGroupExpiredTotal, g.groups_expired);
  f.Add(M::kGroupCollectedTotal, g.groups_collected);
  f.Add(M::kGroupEvictedTotal, g.groups_evicted_memory, {"memory"});
  f.Add(M::kGroupEvictedTotal, g.groups_evicted_disk, {"local_disk"});
  f.Add(M::kGroupRefusedTotal, g.groups_refused_filling_full, {"filling_full"});
}

void AddNodes(const std::vector<NodeView>& nodes, TimePoint now, FamilySet& f) {
  for (const NodeView& node : nodes) {
    const std::string_view name = node.spec.name;
    f.Add(M::kNodeCapacityBytes, node.spec.dram_size, {name, "memory"});
    f.Add(M::kNodeCapacityBytes, node.ssd_capacity, {name, "local_disk"});
    f.Add(M::kNodeUsedBytes, node.dram_used, {name, "memory"});
    f.Add(M::kNodeUsedBytes, node.ssd_used, {name, "local_disk"});
    f.Add(M::kNodeHeartbeatAgeSeconds, Seconds(now - node.last_heartbeat),
          {name});
  }
}

// Calls of one recorder as `counts`{<name label>,code} and `latency`.
void AddCalls(const rpc::CallRecorder& recorder, MetricId counts,
              MetricId latency, FamilySet& f) {
  std::array<double, rpc::kLatencyBounds.size()> bounds{};
  for (size_t i = 0; i < bounds.size(); ++i) {
    bounds[i] = Seconds(rpc::kLatencyBounds[i]);
  }
  recorder.Visit([&](const rpc::CallStats& call) {
    // OK is always reported so every method has a series from the start;
    // other codes once they occur.
    for (size_t code = 0; code < call.by_code.size(); ++code) {
      if (code != 0 && call.by_code[code] == 0) continue;
      f.Add(counts, call.by_code[code],
            {call.method, rpc::GrpcCodeName(static_cast<int>(code))});
    }
    f.AddHistogram(latency, {call.method}, bounds, call.latency_buckets,
                   static_cast<double>(call.latency_sum_ns) / 1e9);
  });
}

}  // namespace

MasterMetrics::MasterMetrics(const MasterAdmin* master, const Clock* clock,
                             const rpc::CallRecorder* rpc,
                             const rpc::CallRecorder* admin)
    : MasterMetrics(
          [master] {
            return std::shared_ptr<const MasterAdmin>(
                master, [](const MasterAdmin*) {});
          },
          [] { return MasterRoleSample{}; }, clock, rpc, admin) {}

MasterMetrics::MasterMetrics(MasterSource master,
                             std::function<MasterRoleSample()> role,
                             const Clock* clock, const rpc::CallRecorder* rpc,
                             const rpc::CallRecorder* admin)
    : master_(std::move(master)),
      role_(std::move(role)),
      clock_(clock),
      rpc_(rpc),
      admin_(admin) {}

std::vector<prometheus::MetricFamily> MasterMetrics::Collect() const {
  FamilySet families(MetricScope::kMaster);
  const MasterRoleSample role = role_();
  families.Add(M::kMasterRole, role.leader ? 1 : 0, {"leader"});
  families.Add(M::kMasterRole, role.leader ? 0 : 1, {"standby"});
  families.Add(M::kMasterTerm, static_cast<double>(role.term));
  families.Add(M::kFailoversTotal, static_cast<double>(role.failovers));
  families.Add(M::kMasterInSync, role.in_sync ? 1 : 0);
  families.Add(M::kMasterRecovering, role.recovering ? 1 : 0);
  if (std::shared_ptr<const MasterAdmin> master = master_()) {
    const MasterStats stats = master->GetStats();
    const std::vector<NodeView> nodes = master->ListNodes();
    AddStore(stats, families);
    AddDataPath(stats, families);
    AddOffload(stats, families);
    AddPromotion(stats, families);
    AddGroups(stats, families);
    AddPipeline(stats, master->MemoryByNode(), nodes, families);
    AddNodes(nodes, clock_->Now(), families);
  }
  if (rpc_ != nullptr) {
    AddCalls(*rpc_, M::kRpcRequestsTotal, M::kRpcDurationSeconds, families);
  }
  if (admin_ != nullptr) {
    AddCalls(*admin_, M::kAdminRequestsTotal, M::kAdminRequestDurationSeconds,
             families);
  }
  return std::move(families).Take();
}

}  // namespace mooncake_tier::metrics
