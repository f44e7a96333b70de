#include "core/hit_ratio_forecast.h"

#include <utility>

#include "core/hashed_key.h"

namespace mooncake_tier {

HitRatioForecast::HitRatioForecast(HitRatioEstimator::Options options)
    : estimator_(std::move(options)) {}

void HitRatioForecast::Note(std::span<const Reference> references) {
  if (references.empty()) return;
  MutexLock lock(&mu_);
  for (const Reference& r : references) {
    estimator_.Reference(HashKey(r.key), r.bytes);
  }
}

void HitRatioForecast::Forget(std::string_view key) {
  MutexLock lock(&mu_);
  estimator_.Forget(HashKey(key));
}

void HitRatioForecast::SetCapacity(uint64_t bytes) {
  MutexLock lock(&mu_);
  if (estimator_.capacity_bytes() != bytes) estimator_.SetCapacity(bytes);
}

HitRatioForecast::View HitRatioForecast::Snapshot() const {
  MutexLock lock(&mu_);
  return {estimator_.sampling_rate(), estimator_.capacity_bytes(),
          estimator_.Estimate()};
}

}  // namespace mooncake_tier
