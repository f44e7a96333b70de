#include "core/tinylfu_admission.h"

#include <algorithm>

namespace mooncake_tier {
namespace {

// estimate (< 2^32) times bytes (< 2^64) needs 96 bits; a sum of such
// products over any realistic victim list fits in 128.
using Weight = unsigned __int128;

Weight Weighted(uint32_t estimate, uint64_t bytes) {
  return Weight{estimate} * std::max<uint64_t>(bytes, 1);
}

}  // namespace

bool TinyLfuAdmission::Admit(const AdmissionQuery& query) const {
  if (query.estimate < query.threshold) return false;
  if (query.victims.empty()) return true;
  Weight displaced = 0;
  for (const AdmissionVictim& victim : query.victims) {
    displaced += Weighted(victim.estimate, victim.bytes);
  }
  return Weighted(query.estimate, query.bytes) > displaced;
}

}  // namespace mooncake_tier
