#include "core/lru_eviction.h"

namespace mooncake_tier {

TimePoint LruEviction::Rank(const EvictionUnit& unit, TimePoint) const {
  return unit.last_access;
}

SweepAction LruEviction::Sweep(const EvictionUnit& unit,
                               TimePoint cutoff) const {
  return unit.last_access <= cutoff ? SweepAction::kEvict : SweepAction::kKeep;
}

}  // namespace mooncake_tier
