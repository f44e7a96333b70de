#pragma once

// Chooses the node a new DRAM replica goes to. One small interface; each
// policy lives in its own file (two_choice_strategy.h).
//
// Thread safety: implementations must be safe to call concurrently.

#include <cstdint>
#include <span>

#include "absl/container/inlined_vector.h"
#include "protocol/types.h"

namespace mooncake_tier {

// Every put places once: up to this many nodes, placement allocates
// nothing (more nodes spill to the heap).
inline constexpr size_t kInlineNodes = 16;
using NodeOrder = absl::InlinedVector<NodeId, kInlineNodes>;

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
  // Nodes to try, best first, into *order (cleared first). May omit nodes
  // that cannot hold `size`.
  virtual void Rank(std::span<const NodeSpace> nodes, uint64_t size,
                    NodeOrder* order) = 0;
};

}  // namespace mooncake_tier
