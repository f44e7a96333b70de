#pragma once

// The admission side of promotion on hit, apart from the tables: the
// run-time options, the frequency sketch, the admission policies and the
// count of promotions in flight against the queue limit. The Master asks it
// at each gate (docs/design/promotion.md) and does the locking of objects
// and tasks itself.
//
// Thread safety: thread-safe. Options sit behind a reader-writer lock (read
// on SSD-only reads only); the sketch and the in-flight count are atomics.

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "core/admission_sketch.h"
#include "core/promotion_admission.h"
#include "core/promotion_options.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

class PromotionGate {
 public:
  // REQUIRES: initial.Validate() is empty.
  explicit PromotionGate(const PromotionOptions& initial);

  PromotionOptions options() const;
  // INVALID_ARGUMENT, changing nothing, when `options` is invalid.
  Status SetOptions(const PromotionOptions& options);

  // Counts one read of the object or group whose key hashes to `hash`;
  // returns its new estimate.
  uint32_t Touch(uint64_t hash) { return sketch_.Increment(hash); }
  uint32_t Estimate(uint64_t hash) const { return sketch_.Estimate(hash); }

  // The admission gate under `options` (policy and threshold): see
  // core/promotion_admission.h. `victims` empty: DRAM has room.
  bool Admit(const PromotionOptions& options, uint32_t estimate, uint64_t bytes,
             std::span<const AdmissionVictim> victims) const;

  // tinylfu compares a candidate with DRAM residents, so every read counts
  // then, not only SSD-only ones.
  bool counts_every_read() const {
    return counts_every_read_.load(std::memory_order_relaxed);
  }

  // Takes `n` in-flight slots if that stays within `limit`; false (taking
  // none) otherwise. Every slot taken is given back with Release.
  bool Reserve(uint32_t n, uint32_t limit);
  void Release(uint32_t n);
  uint64_t in_flight() const {
    return in_flight_.load(std::memory_order_relaxed);
  }

  AdmissionSketch::Stats sketch_stats() const { return sketch_.stats(); }

 private:
  mutable SharedMutex mu_;
  PromotionOptions options_ ABSL_GUARDED_BY(mu_);
  AdmissionSketch sketch_;
  std::unique_ptr<PromotionAdmission> policies_[2];  // by PromotionPolicy
  std::atomic<bool> counts_every_read_{false};
  std::atomic<uint64_t> in_flight_{0};
};

}  // namespace mooncake_tier
