#pragma once

// "Power of two choices": a preferred node first when given, then the one
// with more free space of two random candidates that can hold the object,
// then every remaining node by free space. Spreads load nearly as well as
// "most free overall" without every put racing for the same node.
//
// Thread safety: safe to call concurrently (the random state is locked).

#include <random>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "core/allocation_strategy.h"

namespace mooncake_tier {

class TwoChoiceStrategy final : public AllocationStrategy {
 public:
  explicit TwoChoiceStrategy(uint64_t seed = std::random_device{}())
      : rng_(seed) {}
  void Rank(std::span<const NodeSpace> nodes, uint64_t size,
            NodeOrder* order) override;

 private:
  Mutex mu_;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier
