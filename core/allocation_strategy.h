#pragma once

// Chooses the node a new DRAM replica goes to. One small interface; each
// policy lives in its own file (two_choice_strategy.h).
//
// Thread safety: implementations must be safe to call concurrently.

#include <cstdint>
#include <span>
#include <vector>

#include "protocol/types.h"

namespace mooncake_tier {

// What the strategy may look at for one placement-eligible node.
struct NodeSpace {
  NodeId id = kNoNode;
  uint64_t free_bytes = 0;
  uint64_t largest_free_extent = 0;
  bool preferred = false;
};

class AllocationStrategy {
 public:
  virtual ~AllocationStrategy() = default;
  // Nodes to try, best first. May omit nodes that cannot hold `size`.
  virtual std::vector<NodeId> Rank(std::span<const NodeSpace> nodes,
                                   uint64_t size) = 0;
};

}  // namespace mooncake_tier
