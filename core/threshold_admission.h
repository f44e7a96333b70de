#pragma once

// Admits a candidate once its sketch estimate reaches the threshold: the
// "second touch" gate of the promotion request. Ignores the victims, so
// under DRAM pressure a newly warm object can push out a hotter one; the
// watermark gate in the master is what keeps this from thrashing.
//
// Thread safety: stateless; safe to call concurrently.

#include "core/promotion_admission.h"

namespace mooncake_tier {

class ThresholdAdmission final : public PromotionAdmission {
 public:
  PromotionPolicy policy() const override {
    return PromotionPolicy::kThreshold;
  }
  // estimate >= threshold.
  bool Admit(const AdmissionQuery& query) const override;
};

}  // namespace mooncake_tier
