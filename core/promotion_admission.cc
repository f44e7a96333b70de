#include "core/promotion_admission.h"

#include "core/threshold_admission.h"
#include "core/tinylfu_admission.h"

namespace mooncake_tier {

std::unique_ptr<PromotionAdmission> MakePromotionAdmission(
    PromotionPolicy policy) {
  switch (policy) {
    case PromotionPolicy::kThreshold:
      return std::make_unique<ThresholdAdmission>();
    case PromotionPolicy::kTinyLfu:
      return std::make_unique<TinyLfuAdmission>();
  }
  return std::make_unique<ThresholdAdmission>();
}

}  // namespace mooncake_tier
