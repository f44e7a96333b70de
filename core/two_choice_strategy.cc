#include "core/two_choice_strategy.h"

#include <algorithm>

namespace mooncake_tier {

void TwoChoiceStrategy::Rank(std::span<const NodeSpace> nodes, uint64_t size,
                             NodeOrder* order) {
  order->clear();
  // On the stack for the usual node counts: every put ranks.
  absl::InlinedVector<const NodeSpace*, kInlineNodes> fits;
  for (const NodeSpace& n : nodes) {
    if (n.largest_free_extent < size) continue;
    if (n.preferred) {
      order->push_back(n.id);
    } else {
      fits.push_back(&n);
    }
  }
  if (fits.size() >= 2) {
    size_t a, b;
    {
      MutexLock lock(&mu_);
      std::uniform_int_distribution<size_t> pick(0, fits.size() - 1);
      a = pick(rng_);
      b = pick(rng_);
      if (a == b) b = (a + 1) % fits.size();
    }
    const size_t winner = fits[a]->free_bytes >= fits[b]->free_bytes ? a : b;
    std::swap(fits[0], fits[winner]);
  }
  // Fallbacks after the chosen candidate: most free space first.
  if (fits.size() > 1) {
    std::sort(fits.begin() + 1, fits.end(),
              [](const NodeSpace* x, const NodeSpace* y) {
                return x->free_bytes > y->free_bytes;
              });
  }
  for (const NodeSpace* n : fits) order->push_back(n->id);
}

}  // namespace mooncake_tier
