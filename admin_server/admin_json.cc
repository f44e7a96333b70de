#include "admin_server/admin_json.h"

#include <chrono>

namespace mooncake_tier::admin {
namespace {

using nlohmann::json;

json TierJson(const TierUsage& usage) {
  return {{"capacity_bytes", usage.capacity},
          {"used_bytes", usage.used},
          {"used_ratio", usage.ratio()}};
}

json ReplicaJson(const Replica& replica) {
  return {{"id", replica.desc.id},
          {"tier", TierName(replica.desc.tier)},
          {"state", ReplicaStateName(replica.desc.state)},
          {"node", replica.desc.node},
          {"offset", replica.desc.offset},
          {"size", replica.desc.size},
          {"refcnt", replica.refcnt},
          {"staged_by_task", replica.staged_by}};
}

}  // namespace

int64_t Millis(Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

json GroupSpecJson(const std::optional<GroupSpec>& group) {
  if (!group) return nullptr;
  return {{"id", group->group_id},
          {"size", group->group_size},
          {"index", group->group_index}};
}

json MemoryHeldJson(const MemoryBreakdown& b) {
  return {{"free", b.free()},
          {"clean", b.clean},
          {"dirty", b.dirty},
          {"writeback", b.writeback},
          {"leased", b.leased},
          {"pinned", b.pinned},
          {"in_flight", b.in_flight},
          {"filling", b.filling},
          {"hard_pinned", b.hard_pinned}};
}

json NodeJson(const NodeView& node, TimePoint now, uint64_t pending_tasks,
              const NodeMemoryView* memory) {
  json ssd = TierJson({node.ssd_capacity, node.ssd_used});
  ssd["configured_capacity_bytes"] = node.spec.ssd_capacity;
  if (node.ssd_report) {
    const SsdReport& r = *node.ssd_report;
    ssd["store"] = {{"file_bytes", r.file_bytes},
                    {"put_limit_bytes", r.put_limit_bytes},
                    {"capacity_bytes", r.capacity_bytes},
                    {"live_value_bytes", r.live_value_bytes},
                    {"live_record_bytes", r.live_record_bytes},
                    {"no_space_refusals", r.no_space_refusals},
                    {"device_bytes_written", r.device_bytes_written}};
  }
  const Duration paused = node.offloads_paused_until - now;
  ssd["offloads_paused_ms"] = paused > Duration::zero() ? Millis(paused) : 0;
  json dram = TierJson({node.spec.dram_size, node.dram_used});
  if (memory != nullptr) {
    dram["held"] = MemoryHeldJson(memory->bytes);
    dram["reserve_bytes"] = memory->reserve_bytes;
    dram["offload_bytes_pending"] = memory->offload.all;
  }
  return {{"id", node.id},
          {"name", node.spec.name},
          {"state", NodeStateName(node.state)},
          {"rpc_address", node.spec.rpc_address},
          {"heartbeat_age_ms", Millis(now - node.last_heartbeat)},
          {"uptime_ms", Millis(now - node.registered_at)},
          {"dram", std::move(dram)},
          {"ssd", std::move(ssd)},
          {"pending_tasks", pending_tasks}};
}

json TaskJson(const Task& task, TimePoint now) {
  json out = {{"id", task.id},
              {"kind", TaskKindName(task.kind)},
              {"key", task.key},
              {"group", GroupSpecJson(task.group)},
              {"node", task.node},
              {"size", task.source.size},
              {"state", TaskStateName(task.state)},
              {"age_ms", Millis(now - task.created)}};
  if (task.kind == TaskKind::kPromotion) out["forced"] = task.forced;
  return out;
}

json ObjectJson(const std::string& key, const ObjectDescription& d,
                TimePoint now) {
  json replicas = json::array();
  uint64_t pins = 0;
  for (const Replica& replica : d.replicas) {
    replicas.push_back(ReplicaJson(replica));
    pins += replica.refcnt;
  }
  const Duration lease = d.lease_deadline - now;
  return {{"key", key},
          {"size", d.size},
          {"group", GroupSpecJson(d.group)},
          {"replicas", std::move(replicas)},
          {"lease_remaining_ms", lease > Duration::zero() ? Millis(lease) : 0},
          {"last_access_age_ms", Millis(now - d.last_access)},
          {"hard_pin", d.hard_pin},
          {"pins", pins}};
}

json GroupStatusJson(const GroupStatus& status) {
  return {{"id", status.group_id},
          {"state", GroupStateName(status.state)},
          {"expected", status.expected},
          {"present", status.present}};
}

json GroupJson(const GroupDescription& group) {
  json out = GroupStatusJson(group.status);
  out["break_cause"] =
      group.break_cause ? json(BreakCauseName(*group.break_cause)) : json();
  json members = json::array();
  for (const GroupDescription::Member& member : group.members) {
    json tiers = json::array();
    for (Tier tier : member.tiers) tiers.push_back(TierName(tier));
    members.push_back({{"index", member.index},
                       {"key", member.key},
                       {"present", member.present},
                       {"tiers", std::move(tiers)}});
  }
  out["members"] = std::move(members);
  return out;
}

json PromotionOptionsJson(const PromotionOptions& o) {
  return {{"on_hit", o.on_hit},
          {"policy", PromotionPolicyName(o.policy)},
          {"admission_threshold", o.admission_threshold},
          {"queue_limit", o.queue_limit},
          {"max_per_pull", o.max_per_pull},
          {"task_timeout_ms", Millis(o.task_timeout)},
          {"drop_source", o.drop_source},
          {"proactive_low_watermark", o.proactive_low_watermark},
          {"proactive_max_per_step", o.proactive_max_per_step},
          {"proactive_interval_ms", Millis(o.proactive_interval)}};
}

json ConfigJson(const MasterConfig& c) {
  return {{"shard_count", c.shard_count},
          {"lease_ttl_ms", Millis(c.lease_ttl)},
          {"put_timeout_ms", Millis(c.put_timeout)},
          {"eviction_high_watermark", c.eviction_high_watermark},
          {"eviction_ratio", c.eviction_ratio},
          {"ssd_high_watermark", c.ssd_high_watermark},
          {"ssd_eviction_ratio", c.ssd_eviction_ratio},
          {"ssd_eviction_policy", EvictionPolicyName(c.ssd_eviction_policy)},
          {"writeback_watermark", c.writeback_watermark},
          {"put_wait_timeout_ms", Millis(c.put_wait_timeout)},
          {"offload_mode", OffloadModeName(c.offload_mode)},
          {"offload_max_per_pull", c.offload_max_per_pull},
          {"offload_queue_limit", c.offload_queue_limit},
          {"offload_task_timeout_ms", Millis(c.offload_task_timeout)},
          {"ssd_deletes_per_pull", c.ssd_deletes_per_pull},
          {"node_ttl_ms", Millis(c.node_ttl)},
          {"group_shard_count", c.group_shard_count},
          {"group_visibility", GroupVisibilityName(c.group_visibility)},
          {"group_remove_policy", GroupRemovePolicyName(c.group_remove_policy)},
          {"group_fill_timeout_ms", Millis(c.group_fill_timeout)},
          {"group_broken_ttl_ms", Millis(c.group_broken_ttl)},
          {"max_group_size", c.max_group_size},
          {"group_filling_max_ratio", c.group_filling_max_ratio},
          {"dram_alignment", c.dram_alignment},
          {"promotion", PromotionOptionsJson(c.promotion)}};
}

json ClusterRoleJson(const ClusterRole& role) {
  return {{"cluster", role.cluster},
          {"role", role.leader ? "leader" : "standby"},
          {"term", role.term},
          {"leader", role.leader_rpc},
          {"leader_admin", role.leader_admin},
          {"failovers", role.failovers},
          {"recovering", role.recovering},
          {"nodes_expected", role.nodes_expected},
          {"nodes_registered", role.nodes_registered},
          {"in_sync", role.in_sync}};
}

json StatusJson(const MasterStats& s) {
  json memory = TierJson(s.memory);
  memory["configured_bytes"] = s.memory.capacity;
  memory["live_ratio"] = s.memory.ratio();
  // The SSD's capacity_bytes is what the stores can hold after their
  // overhead; live_ratio is over what operators configured.
  json disk = TierJson(s.local_disk);
  disk["configured_bytes"] = s.ssd_configured_bytes;
  disk["live_ratio"] =
      TierUsage{s.ssd_configured_bytes, s.local_disk.used}.ratio();
  json forecast = json::array();
  for (const MasterStats::ForecastPoint& p : s.hit_ratio_forecast) {
    forecast.push_back({{"scale", p.scale},
                        {"capacity_bytes", p.capacity_bytes},
                        {"hit_ratio", p.hit_ratio},
                        {"sampled_references", p.sampled_references}});
  }
  return {
      {"tiers",
       {{"memory", std::move(memory)}, {"local_disk", std::move(disk)}}},
      {"hit_ratio_forecast",
       {{"sampling_rate", s.forecast_sampling_rate},
        {"points", std::move(forecast)}}},
      {"objects", s.objects},
      {"pending_puts", s.pending_puts},
      {"groups",
       {{"filling", s.groups.filling},
        {"complete", s.groups.complete},
        {"broken", s.groups.broken},
        {"expired", s.groups.expired},
        {"filling_bytes", s.filling_group_bytes}}},
      {"promotions",
       {{"in_flight", s.promotion_in_flight},
        {"queued", s.promotion_tasks_queued},
        {"completed_total", s.promotion_completed},
        {"attempts_total", s.promotion_attempts},
        {"useful_total", s.promotion_useful},
        {"admission_gated_total", s.promotion_admission_gated},
        {"watermark_gated_total", s.promotion_watermark_gated},
        {"alloc_failed_total", s.promotion_alloc_failed}}},
      {"offloads",
       {{"queued", s.offload_tasks_queued},
        {"dispatched", s.offload_tasks_in_flight},
        {"completed_total", s.offload_completed},
        {"pending_bytes", s.offload_bytes_pending},
        {"pauses_total", s.offload_pauses}}},
      {"memory",
       {{"held", MemoryHeldJson(s.memory_held)},
        {"reserve_bytes", s.memory_reserve_bytes},
        {"writeback_completed_total", s.writeback_completed},
        {"writeback_bytes_total", s.writeback_bytes},
        {"put_waits_total", s.put_waits},
        {"put_wait_seconds_total", static_cast<double>(s.put_wait_us) / 1e6},
        {"put_evictions_total", s.put_evictions},
        {"put_no_space_total", s.put_no_space}}},
      {"nodes", {{"alive", s.nodes_alive}, {"suspect", s.nodes_suspect}}},
      {"gets",
       {{"memory_hit", s.get_memory_hit},
        {"local_disk_hit", s.get_local_disk_hit},
        {"miss", s.get_miss}}}};
}

}  // namespace mooncake_tier::admin
