#pragma once

// Whether a read of an SSD-only object should bring a copy back into DRAM:
// the admission gate of promotion-on-hit, the first of its gates (watermark,
// dedup and queue limit follow in the master). One small interface; each
// policy lives in its own file (threshold_admission.h, tinylfu_admission.h).
//
// The policy decides from numbers the master gathers: the candidate's
// AdmissionSketch estimate and, for TinyLFU, the estimates and sizes of the
// DRAM units the promotion would push out. It reads no shared state.
//
// Thread safety: implementations are immutable after construction; Admit()
// may be called concurrently from any number of threads.

#include <cstdint>
#include <memory>
#include <span>

// PromotionPolicy (threshold | tinylfu) with PromotionPolicyName and
// ParsePromotionPolicy, declared beside the other promotion knobs.
#include "core/promotion_options.h"

namespace mooncake_tier {

// A DRAM unit (object or group) the promotion would evict.
struct AdmissionVictim {
  uint32_t estimate = 0;  // its AdmissionSketch estimate
  uint64_t bytes = 0;     // DRAM it frees; 0 is taken as 1
};

struct AdmissionQuery {
  // The candidate's estimate, this access included (AdmissionSketch::
  // Increment's result).
  uint32_t estimate = 0;
  // promotion_admission_threshold. 0 and 1 admit on every access.
  uint32_t threshold = 2;
  // The candidate's size (a group: all its members); 0 is taken as 1.
  uint64_t bytes = 0;
  // The units the master's approximate LRU would evict to make room for the
  // candidate, coldest first; empty when DRAM has room without evicting.
  // Borrowed for the duration of Admit(). Their estimates are meaningful
  // only if the sketch also counts reads served from DRAM (see
  // docs/design/promotion.md).
  std::span<const AdmissionVictim> victims;
};

class PromotionAdmission {
 public:
  virtual ~PromotionAdmission() = default;
  virtual PromotionPolicy policy() const = 0;
  // True when the candidate should be promoted, as far as admission goes.
  virtual bool Admit(const AdmissionQuery& query) const = 0;
};

// The implementation of `policy`. Never null.
std::unique_ptr<PromotionAdmission> MakePromotionAdmission(
    PromotionPolicy policy);

}  // namespace mooncake_tier
