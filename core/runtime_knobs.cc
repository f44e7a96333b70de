#include "core/runtime_knobs.h"

namespace mooncake_tier {

RuntimeKnobs::Watermarks RuntimeKnobs::memory() const {
  ReaderMutexLock lock(&mu_);
  return {eviction_high_watermark_.load(std::memory_order_relaxed),
          eviction_ratio_.load(std::memory_order_relaxed)};
}

RuntimeKnobs::Watermarks RuntimeKnobs::ssd() const {
  ReaderMutexLock lock(&mu_);
  return {ssd_high_watermark_.load(std::memory_order_relaxed),
          ssd_eviction_ratio_.load(std::memory_order_relaxed)};
}

void RuntimeKnobs::Store(const MasterConfig& c) {
  WriterMutexLock lock(&mu_);
  eviction_high_watermark_.store(c.eviction_high_watermark,
                                 std::memory_order_relaxed);
  eviction_ratio_.store(c.eviction_ratio, std::memory_order_relaxed);
  ssd_high_watermark_.store(c.ssd_high_watermark, std::memory_order_relaxed);
  ssd_eviction_ratio_.store(c.ssd_eviction_ratio, std::memory_order_relaxed);
  ssd_eviction_policy_.store(c.ssd_eviction_policy, std::memory_order_relaxed);
  writeback_watermark_.store(c.writeback_watermark, std::memory_order_relaxed);
  group_fill_timeout_.store(c.group_fill_timeout, std::memory_order_relaxed);
  group_broken_ttl_.store(c.group_broken_ttl, std::memory_order_relaxed);
  offload_max_per_pull_.store(c.offload_max_per_pull,
                              std::memory_order_relaxed);
  offload_queue_limit_.store(c.offload_queue_limit, std::memory_order_relaxed);
}

void RuntimeKnobs::CopyTo(MasterConfig& c) const {
  ReaderMutexLock lock(&mu_);
  c.eviction_high_watermark =
      eviction_high_watermark_.load(std::memory_order_relaxed);
  c.eviction_ratio = eviction_ratio_.load(std::memory_order_relaxed);
  c.ssd_high_watermark = ssd_high_watermark_.load(std::memory_order_relaxed);
  c.ssd_eviction_ratio = ssd_eviction_ratio_.load(std::memory_order_relaxed);
  c.ssd_eviction_policy = ssd_eviction_policy_.load(std::memory_order_relaxed);
  c.writeback_watermark = writeback_watermark_.load(std::memory_order_relaxed);
  c.group_fill_timeout = group_fill_timeout_.load(std::memory_order_relaxed);
  c.group_broken_ttl = group_broken_ttl_.load(std::memory_order_relaxed);
  c.offload_max_per_pull =
      offload_max_per_pull_.load(std::memory_order_relaxed);
  c.offload_queue_limit = offload_queue_limit_.load(std::memory_order_relaxed);
}

}  // namespace mooncake_tier
