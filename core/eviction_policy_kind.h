#pragma once

// The eviction policies a tier can be run with, by name: what configuration
// and the admin API need of core/eviction_policy.h without its interface.

#include <cstdint>
#include <optional>
#include <string_view>

namespace mooncake_tier {

enum class EvictionPolicyKind : uint8_t {
  // Least recently used: the unit read or written longest ago goes first.
  kLru = 0,
  // FIFO with reinsertion (CLOCK) over the order units entered the tier: a
  // unit read since it entered gets one more turn, the others go in the
  // order they came. On an append-only log that order is the log's, so
  // whole files die at once and little is copied to reclaim them.
  kClock = 1,
};
std::string_view EvictionPolicyName(EvictionPolicyKind kind);
std::optional<EvictionPolicyKind> ParseEvictionPolicy(std::string_view name);

}  // namespace mooncake_tier
