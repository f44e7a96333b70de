#include "core/eviction_planner.h"

#include <algorithm>

namespace mooncake_tier {

TimePoint EvictionPlanner::Cutoff(uint64_t target_bytes) {
  if (candidates_.empty()) return TimePoint::min();
  const auto older = [](const Candidate& a, const Candidate& b) {
    return a.last_access < b.last_access;
  };
  if (target_bytes >= total_bytes_) {
    return std::max_element(candidates_.begin(), candidates_.end(), older)
        ->last_access;
  }
  // Quickselect on recency: narrow [lo, hi) to the range holding the
  // candidate at which the running byte sum crosses the target.
  auto lo = candidates_.begin();
  auto hi = candidates_.end();
  uint64_t before = 0;  // bytes of candidates older than [lo, hi)
  while (hi - lo > 1) {
    auto mid = lo + (hi - lo) / 2;
    std::nth_element(lo, mid, hi, older);
    uint64_t left = 0;
    for (auto it = lo; it != mid; ++it) left += it->bytes;
    if (before + left >= target_bytes) {
      hi = mid;
    } else {
      before += left;
      lo = mid;
    }
  }
  return lo->last_access;
}

}  // namespace mooncake_tier
