#pragma once

// The order in which a tier gives up its units (objects, or whole groups)
// when it must make room: one small interface, one file per policy
// (lru_eviction.h, clock_eviction.h). docs/design/eviction-policy.md says
// which to use when and what each costs on an append-only SSD log.
//
// The master plans an eviction round in two passes (EvictionPlanner): pass
// 1 ranks every evictable unit with Rank() and finds the cutoff at which
// evicting everything ranked at or below it frees the bytes needed; pass 2
// asks Sweep() of each unit what the sweep that reached the cutoff does
// with it: evict it, give it another turn (reinsert it at the young end of
// the order), or leave it alone. A policy holds no state of its own: what
// it needs of a unit is in EvictionUnit.
//
// Thread safety: implementations are immutable; any thread may call them.

#include <cstdint>
#include <memory>

#include "base/clock.h"
#include "core/eviction_policy_kind.h"

namespace mooncake_tier {

// What a policy knows of one unit (a group: its newest member access, and
// when its last member entered the tier).
struct EvictionUnit {
  TimePoint last_access;  // last read or write
  TimePoint inserted;     // entered the tier, or was last given another turn
};

// What the sweep of a round does with a unit.
enum class SweepAction : uint8_t {
  kKeep = 0,      // not reached by this round
  kEvict = 1,     // leaves the tier
  kReinsert = 2,  // stays, and enters again: `inserted` becomes now
};

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  virtual EvictionPolicyKind kind() const = 0;
  // The unit's place in the order: units with a smaller rank go first.
  virtual TimePoint Rank(const EvictionUnit& unit, TimePoint now) const = 0;
  // What a round whose cutoff (the largest rank it evicts) is `cutoff`
  // does with the unit.
  virtual SweepAction Sweep(const EvictionUnit& unit,
                            TimePoint cutoff) const = 0;
  // Whether Sweep ever answers kReinsert: a round of such a policy sweeps
  // every unit up to the cutoff even once it has evicted enough (the hand
  // passed them all), where another may stop there.
  virtual bool reinserts() const = 0;
  // Whether the units it evicts are those that entered the tier first,
  // mostly: on the SSD log their records then lie in the oldest files,
  // which die whole. A policy that evicts elsewhere leaves dead records in
  // every file, and its tier is kept further below its limit
  // (Tiering::EvictSsdOf).
  virtual bool evicts_in_entry_order() const = 0;
};

// The implementation of `kind`. Never null.
std::unique_ptr<EvictionPolicy> MakeEvictionPolicy(EvictionPolicyKind kind);

}  // namespace mooncake_tier
