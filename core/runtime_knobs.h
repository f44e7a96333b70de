#pragma once

// The knobs of MasterConfig that an operator may change while the master
// runs (RuntimeConfigChange), as the master reads them. Hot paths (a
// heartbeat, a write-through PutEnd, an SSD-only read) read one knob at a
// time with no lock: each is an atomic. A change is stored whole under a
// lock, and the readers that need two knobs validated together (a
// watermark and its eviction ratio) read them under that lock too, so they
// never see half of a change.
//
// Validation and the order of changes belong to the caller
// (Master::UpdateRuntimeConfig serializes them).
//
// Thread safety: thread-safe.

#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "core/master_config.h"

namespace mooncake_tier {

class RuntimeKnobs {
 public:
  explicit RuntimeKnobs(const MasterConfig& initial) { Store(initial); }
  RuntimeKnobs(const RuntimeKnobs&) = delete;
  RuntimeKnobs& operator=(const RuntimeKnobs&) = delete;

  // A high watermark and the ratio evicted below it, from one change.
  struct Watermarks {
    double high = 0;
    double ratio = 0;
  };
  Watermarks memory() const;
  Watermarks ssd() const;

  EvictionPolicyKind ssd_eviction_policy() const {
    return ssd_eviction_policy_.load(std::memory_order_relaxed);
  }
  double writeback_watermark() const {
    return writeback_watermark_.load(std::memory_order_relaxed);
  }
  double eviction_high_watermark() const {
    return eviction_high_watermark_.load(std::memory_order_relaxed);
  }
  Duration group_fill_timeout() const {
    return group_fill_timeout_.load(std::memory_order_relaxed);
  }
  Duration group_broken_ttl() const {
    return group_broken_ttl_.load(std::memory_order_relaxed);
  }
  uint32_t offload_max_per_pull() const {
    return offload_max_per_pull_.load(std::memory_order_relaxed);
  }
  uint32_t offload_queue_limit() const {
    return offload_queue_limit_.load(std::memory_order_relaxed);
  }

  // Stores the run-time knobs of `config` (REQUIRES: config.Validate() is
  // empty) as one change.
  void Store(const MasterConfig& config);
  // Overwrites the run-time knobs of `config` with the current values.
  void CopyTo(MasterConfig& config) const;

 private:
  // Held exclusively to store a change, shared to read a consistent pair;
  // single-knob readers take nothing.
  mutable SharedMutex mu_;
  std::atomic<double> eviction_high_watermark_{0};
  std::atomic<double> eviction_ratio_{0};
  std::atomic<double> ssd_high_watermark_{0};
  std::atomic<double> ssd_eviction_ratio_{0};
  std::atomic<EvictionPolicyKind> ssd_eviction_policy_{
      EvictionPolicyKind::kLru};
  std::atomic<double> writeback_watermark_{0};
  std::atomic<Duration> group_fill_timeout_{Duration::zero()};
  std::atomic<Duration> group_broken_ttl_{Duration::zero()};
  std::atomic<uint32_t> offload_max_per_pull_{0};
  std::atomic<uint32_t> offload_queue_limit_{0};
};

}  // namespace mooncake_tier
