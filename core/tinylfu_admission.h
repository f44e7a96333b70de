#pragma once

// TinyLFU admission (after Einziger et al.): a candidate that passes the
// threshold is promoted only if it is read more than what it would push out
// of DRAM. Keeps a burst of one-off reads from displacing a hot working set.
//
// The comparison, in SSD bytes read per sketch period: promoting the
// candidate saves estimate x bytes (each of its reads would otherwise come
// from SSD); evicting the victims costs the sum of their estimate x bytes
// (each of their reads will). Admit iff
//
//   estimate >= threshold  and
//   (no victims  or  estimate * bytes > sum(victim.estimate * victim.bytes)).
//
// With one victim of the candidate's size this is TinyLFU's own rule,
// estimate > victim estimate. The inequality is strict: on a tie the
// resident stays, since moving bytes for no gain is a loss. Weighting by
// bytes, rather than taking the hottest victim, counts every victim (many
// lukewarm small objects can outweigh one candidate) without letting one
// tiny hot victim veto a large cold-to-warm candidate, and its noise does
// not grow with the number of victims the way an unweighted sum's would.
//
// Thread safety: stateless; safe to call concurrently.

#include "core/promotion_admission.h"

namespace mooncake_tier {

class TinyLfuAdmission final : public PromotionAdmission {
 public:
  PromotionPolicy policy() const override { return PromotionPolicy::kTinyLfu; }
  bool Admit(const AdmissionQuery& query) const override;
};

}  // namespace mooncake_tier
