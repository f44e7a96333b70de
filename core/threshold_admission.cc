#include "core/threshold_admission.h"

namespace mooncake_tier {

bool ThresholdAdmission::Admit(const AdmissionQuery& query) const {
  return query.estimate >= query.threshold;
}

}  // namespace mooncake_tier
