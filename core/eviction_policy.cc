#include "core/eviction_policy.h"

#include "core/clock_eviction.h"
#include "core/lru_eviction.h"

namespace mooncake_tier {

std::string_view EvictionPolicyName(EvictionPolicyKind kind) {
  switch (kind) {
    case EvictionPolicyKind::kLru:
      return "lru";
    case EvictionPolicyKind::kClock:
      return "clock";
  }
  return "unknown";
}

std::optional<EvictionPolicyKind> ParseEvictionPolicy(std::string_view name) {
  if (name == "lru") return EvictionPolicyKind::kLru;
  if (name == "clock") return EvictionPolicyKind::kClock;
  return std::nullopt;
}

std::unique_ptr<EvictionPolicy> MakeEvictionPolicy(EvictionPolicyKind kind) {
  switch (kind) {
    case EvictionPolicyKind::kLru:
      return std::make_unique<LruEviction>();
    case EvictionPolicyKind::kClock:
      return std::make_unique<ClockEviction>();
  }
  return std::make_unique<LruEviction>();
}

}  // namespace mooncake_tier
