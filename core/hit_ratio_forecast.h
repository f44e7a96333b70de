#pragma once

// The master's forecast of the hit ratio the store would have at other
// sizes, for capacity planning: a HitRatioEstimator fed with what the store
// serves, behind a lock. docs/design/eviction-policy.md says how to read it.
//
// What counts as a reference, once per object: a read that found the
// object (GetReplicaList) and every put (PutStart, new or not: an engine
// puts a block it missed). A read that misses is not counted, because the
// put that follows it is; existence probes are not reads. The forecast is
// of objects, whatever their groups: a block of four members is four
// references, as it is four objects in the store. The size it forecasts for
// is the store's whole object capacity, DRAM and SSD together (the tiers
// hold different objects, mostly), which the master sets every tick.
//
// Thread safety: thread-safe. Each batch takes the lock once; an unsampled
// reference costs a hash test under it.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "core/hit_ratio_estimator.h"

namespace mooncake_tier {

class HitRatioForecast {
 public:
  struct Reference {
    std::string_view key;
    uint64_t bytes = 0;
  };

  explicit HitRatioForecast(HitRatioEstimator::Options options = {});
  HitRatioForecast(const HitRatioForecast&) = delete;
  HitRatioForecast& operator=(const HitRatioForecast&) = delete;

  void Note(std::span<const Reference> references);
  // The object left the store by removal: its next put is a miss at every
  // size.
  void Forget(std::string_view key);
  // The store's object capacity now (DRAM plus SSD).
  void SetCapacity(uint64_t bytes);

  struct View {
    double sampling_rate = 0;
    uint64_t capacity_bytes = 0;
    std::vector<HitRatioEstimator::Point> points;  // by scale, ascending
  };
  View Snapshot() const;

 private:
  mutable Mutex mu_;
  HitRatioEstimator estimator_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier
