#pragma once

// Least recently used (core/eviction_policy.h): ranks a unit by its last
// access and evicts everything at or below the cutoff. The baseline every
// other policy is measured against. On an SSD log it evicts records
// wherever they lie, so the log's files die piecemeal and compaction copies
// the live rest of each one it reclaims.
//
// Thread safety: stateless.

#include "core/eviction_policy.h"

namespace mooncake_tier {

class LruEviction final : public EvictionPolicy {
 public:
  EvictionPolicyKind kind() const override { return EvictionPolicyKind::kLru; }
  TimePoint Rank(const EvictionUnit& unit, TimePoint now) const override;
  SweepAction Sweep(const EvictionUnit& unit, TimePoint cutoff) const override;
  bool reinserts() const override { return false; }
  bool evicts_in_entry_order() const override { return false; }
};

}  // namespace mooncake_tier
