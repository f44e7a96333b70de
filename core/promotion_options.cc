#include "core/promotion_options.h"

namespace mooncake_tier {

std::string_view PromotionPolicyName(PromotionPolicy policy) {
  switch (policy) {
    case PromotionPolicy::kThreshold:
      return "threshold";
    case PromotionPolicy::kTinyLfu:
      return "tinylfu";
  }
  return "unknown";
}

std::optional<PromotionPolicy> ParsePromotionPolicy(std::string_view name) {
  if (name == "threshold") return PromotionPolicy::kThreshold;
  if (name == "tinylfu") return PromotionPolicy::kTinyLfu;
  return std::nullopt;
}

std::string PromotionOptions::Validate() const {
  if (admission_threshold == 0)
    return "promotion admission_threshold must be >= 1";
  if (queue_limit == 0) return "promotion queue_limit must be >= 1";
  if (max_per_pull == 0) return "promotion max_per_pull must be >= 1";
  if (task_timeout.count() <= 0)
    return "promotion task_timeout must be positive";
  if (!(proactive_low_watermark >= 0.0 && proactive_low_watermark < 1.0)) {
    return "promotion proactive_low_watermark must be in [0, 1)";
  }
  if (proactive_interval.count() <= 0) {
    return "promotion proactive_interval must be positive";
  }
  return "";
}

}  // namespace mooncake_tier
