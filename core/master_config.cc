#include "core/master_config.h"

#include <algorithm>

namespace mooncake_tier {
namespace {

bool InUnitRange(double v) { return v > 0.0 && v <= 1.0; }

}  // namespace

std::string MasterConfig::Validate() const {
  if (shard_count == 0 || (shard_count & (shard_count - 1)) != 0) {
    return "shard_count must be a power of two";
  }
  if (!InUnitRange(eviction_high_watermark) || !InUnitRange(eviction_ratio) ||
      eviction_ratio >= eviction_high_watermark) {
    return "need 0 < eviction_ratio < eviction_high_watermark <= 1";
  }
  if (!(writeback_watermark >= 0.0 && writeback_watermark <= 1.0)) {
    return "need 0 <= writeback_watermark <= 1";
  }
  if (put_wait_timeout.count() < 0) return "put_wait_timeout must be >= 0";
  if (!InUnitRange(ssd_high_watermark) || !InUnitRange(ssd_eviction_ratio) ||
      ssd_eviction_ratio >= ssd_high_watermark) {
    return "need 0 < ssd_eviction_ratio < ssd_high_watermark <= 1";
  }
  if (lease_ttl.count() <= 0 || put_timeout.count() <= 0 ||
      offload_task_timeout.count() <= 0 || node_ttl.count() <= 0 ||
      directory_record_timeout.count() <= 0 || grant_window.count() <= 0) {
    return "timeouts must be positive";
  }
  if (late_write_margin.count() < 0) return "late_write_margin must be >= 0";
  if (location_grant.count() < 0) return "location_grant must be >= 0";
  if (inherited_grant_window && inherited_grant_window->count() < 0) {
    return "inherited_grant_window must be >= 0";
  }
  if (first_node_id == kNoNode) return "first_node_id must be at least 1";
  if (offload_max_per_pull == 0 || offload_queue_limit == 0) {
    return "offload limits must be positive";
  }
  if (group_shard_count == 0 ||
      (group_shard_count & (group_shard_count - 1)) != 0) {
    return "group_shard_count must be a power of two";
  }
  if (group_fill_timeout.count() <= 0 || group_broken_ttl.count() <= 0) {
    return "group timeouts must be positive";
  }
  if (max_group_size == 0) return "max_group_size must be positive";
  if (!InUnitRange(group_filling_max_ratio)) {
    return "group_filling_max_ratio must be in (0, 1]";
  }
  if (dram_alignment == 0 || (dram_alignment & (dram_alignment - 1)) != 0) {
    return "dram_alignment must be a power of two";
  }
  if (std::string error = promotion.Validate(); !error.empty()) return error;
  return "";
}

Duration MasterConfig::EffectiveGrantWindow() const {
  return std::min({grant_window, put_timeout, node_ttl / 2});
}

Duration MasterConfig::EffectiveLocationGrant() const {
  return std::min({location_grant, put_timeout, node_ttl / 2});
}

bool RuntimeConfigChange::empty() const {
  return !eviction_high_watermark && !eviction_ratio && !ssd_high_watermark &&
         !ssd_eviction_ratio && !ssd_eviction_policy && !writeback_watermark &&
         !group_fill_timeout && !group_broken_ttl && !offload_max_per_pull &&
         !offload_queue_limit;
}

void RuntimeConfigChange::ApplyTo(MasterConfig& config) const {
  if (eviction_high_watermark) {
    config.eviction_high_watermark = *eviction_high_watermark;
  }
  if (eviction_ratio) config.eviction_ratio = *eviction_ratio;
  if (ssd_high_watermark) config.ssd_high_watermark = *ssd_high_watermark;
  if (ssd_eviction_ratio) config.ssd_eviction_ratio = *ssd_eviction_ratio;
  if (ssd_eviction_policy) config.ssd_eviction_policy = *ssd_eviction_policy;
  if (writeback_watermark) config.writeback_watermark = *writeback_watermark;
  if (group_fill_timeout) config.group_fill_timeout = *group_fill_timeout;
  if (group_broken_ttl) config.group_broken_ttl = *group_broken_ttl;
  if (offload_max_per_pull) {
    config.offload_max_per_pull = *offload_max_per_pull;
  }
  if (offload_queue_limit) config.offload_queue_limit = *offload_queue_limit;
}

}  // namespace mooncake_tier
