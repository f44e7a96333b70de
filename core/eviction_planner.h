#pragma once

// Approximate-LRU victim selection in two passes without copying keys.
// Pass 1 feeds the recency and size of every evictable unit; Cutoff() then
// names the access time at or before which evicting everything frees the
// target. Pass 2 evicts evictable units not accessed after the cutoff until
// the target is met. Cost: O(n) time, 16 bytes per candidate.
//
// Thread safety: none; one planner per eviction round.

#include <cstdint>
#include <vector>

#include "base/clock.h"

namespace mooncake_tier {

class EvictionPlanner {
 public:
  void Add(TimePoint last_access, uint64_t bytes) {
    candidates_.push_back({last_access, bytes});
    total_bytes_ += bytes;
  }
  size_t candidates() const { return candidates_.size(); }
  uint64_t total_bytes() const { return total_bytes_; }

  // The smallest access time T such that the units accessed at or before T
  // hold at least `target_bytes`; the newest time when all of them do not.
  TimePoint Cutoff(uint64_t target_bytes);

 private:
  struct Candidate {
    TimePoint last_access;
    uint64_t bytes;
  };
  std::vector<Candidate> candidates_;
  uint64_t total_bytes_ = 0;
};

}  // namespace mooncake_tier
