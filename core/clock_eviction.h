#pragma once

// FIFO with reinsertion, one reference bit (CLOCK; core/eviction_policy.h).
// Units leave in the order they entered the tier; a unit read since it
// entered (last_access after inserted: the bit) is not evicted when the
// hand reaches it but enters again, bit cleared. A round's hand sweeps from
// the oldest entry to the cutoff.
//
// Why on SSD: the tier is an append-only log, so the order units entered it
// is the order of its records. Evicting in that order empties the oldest
// files whole, and the only bytes compaction copies are the reinserted
// units' records: the log keeps close to no dead space, where LRU leaves
// dead records in every file (CacheLib's Navy reclaims regions the same
// way). On conversation traces FIFO with reinsertion misses no more often
// than LRU (docs/design/eviction-policy.md has the figures).
//
// Thread safety: stateless.

#include "core/eviction_policy.h"

namespace mooncake_tier {

class ClockEviction final : public EvictionPolicy {
 public:
  EvictionPolicyKind kind() const override {
    return EvictionPolicyKind::kClock;
  }
  // `inserted` for a unit not read since it entered; `now` for one that
  // was (the hand would give it another turn, which puts it at the young
  // end), so the cutoff is found among the units a sweep would evict.
  TimePoint Rank(const EvictionUnit& unit, TimePoint now) const override;
  // kKeep for units that entered after the cutoff; otherwise kReinsert for
  // a unit read since it entered, kEvict for the rest.
  SweepAction Sweep(const EvictionUnit& unit, TimePoint cutoff) const override;
  bool reinserts() const override { return true; }
  bool evicts_in_entry_order() const override { return true; }
};

}  // namespace mooncake_tier
