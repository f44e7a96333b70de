#include "core/promotion_gate.h"

#include <algorithm>

namespace mooncake_tier {

PromotionGate::PromotionGate(const PromotionOptions& initial)
    : options_(initial),
      policies_{MakePromotionAdmission(PromotionPolicy::kThreshold),
                MakePromotionAdmission(PromotionPolicy::kTinyLfu)},
      counts_every_read_(initial.policy == PromotionPolicy::kTinyLfu) {}

PromotionOptions PromotionGate::options() const {
  ReaderMutexLock lock(&mu_);
  return options_;
}

Status PromotionGate::SetOptions(const PromotionOptions& options) {
  if (std::string error = options.Validate(); !error.empty()) {
    return Status(ErrorReason::kInvalidArgument, error);
  }
  WriterMutexLock lock(&mu_);
  options_ = options;
  counts_every_read_.store(options.policy == PromotionPolicy::kTinyLfu,
                           std::memory_order_relaxed);
  return Status::Ok();
}

bool PromotionGate::Admit(const PromotionOptions& options, uint32_t estimate,
                          uint64_t bytes,
                          std::span<const AdmissionVictim> victims) const {
  AdmissionQuery query;
  query.estimate = estimate;
  query.threshold = options.admission_threshold;
  query.bytes = bytes;
  query.victims = victims;
  return policies_[static_cast<size_t>(options.policy)]->Admit(query);
}

bool PromotionGate::Reserve(uint32_t n, uint32_t limit) {
  uint64_t current = in_flight_.load(std::memory_order_relaxed);
  do {
    if (current + n > limit) return false;
  } while (!in_flight_.compare_exchange_weak(current, current + n,
                                             std::memory_order_relaxed));
  return true;
}

void PromotionGate::Release(uint32_t n) {
  in_flight_.fetch_sub(n, std::memory_order_relaxed);
}

}  // namespace mooncake_tier
