#include "core/clock_eviction.h"

namespace mooncake_tier {
namespace {

bool ReadSinceInserted(const EvictionUnit& unit) {
  return unit.last_access > unit.inserted;
}

}  // namespace

TimePoint ClockEviction::Rank(const EvictionUnit& unit, TimePoint now) const {
  return ReadSinceInserted(unit) ? now : unit.inserted;
}

SweepAction ClockEviction::Sweep(const EvictionUnit& unit,
                                 TimePoint cutoff) const {
  if (unit.inserted > cutoff) return SweepAction::kKeep;
  return ReadSinceInserted(unit) ? SweepAction::kReinsert : SweepAction::kEvict;
}

}  // namespace mooncake_tier
