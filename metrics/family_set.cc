#include "metrics/family_set.h"

#include <limits>

namespace mooncake_tier::metrics {
namespace {

prometheus::MetricType TypeOf(MetricKind kind) {
  switch (kind) {
    case MetricKind::kCounter:
      return prometheus::MetricType::Counter;
    case MetricKind::kGauge:
      return prometheus::MetricType::Gauge;
    case MetricKind::kHistogram:
      return prometheus::MetricType::Histogram;
  }
  return prometheus::MetricType::Untyped;
}

}  // namespace

FamilySet::FamilySet(MetricScope scope) {
  const std::span<const MetricSpec> all = AllMetrics();
  index_.assign(all.size(), -1);
  for (const MetricSpec& spec : all) {
    if (spec.scope != scope) continue;
    index_[static_cast<size_t>(spec.id)] = static_cast<int>(families_.size());
    prometheus::MetricFamily family;
    family.name = std::string(spec.name);
    family.help = std::string(spec.help);
    family.type = TypeOf(spec.kind);
    families_.push_back(std::move(family));
  }
}

prometheus::ClientMetric* FamilySet::NewSample(
    MetricId id, std::initializer_list<std::string_view> labels) {
  const int index = index_[static_cast<size_t>(id)];
  if (index < 0) return nullptr;
  const std::vector<std::string_view> names = LabelNames(Spec(id));
  if (names.size() != labels.size()) return nullptr;
  prometheus::ClientMetric& sample =
      families_[static_cast<size_t>(index)].metric.emplace_back();
  size_t i = 0;
  for (std::string_view value : labels) {
    sample.label.push_back({std::string(names[i++]), std::string(value)});
  }
  return &sample;
}

void FamilySet::Add(MetricId id, double value,
                    std::initializer_list<std::string_view> labels) {
  prometheus::ClientMetric* sample = NewSample(id, labels);
  if (sample == nullptr) return;
  if (Spec(id).kind == MetricKind::kCounter) {
    sample->counter.value = value;
  } else {
    sample->gauge.value = value;
  }
}

void FamilySet::AddHistogram(MetricId id,
                             std::initializer_list<std::string_view> labels,
                             std::span<const double> bounds,
                             std::span<const uint64_t> buckets, double sum) {
  if (buckets.size() != bounds.size() + 1) return;
  prometheus::ClientMetric* sample = NewSample(id, labels);
  if (sample == nullptr) return;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += buckets[i];
    sample->histogram.bucket.push_back({cumulative, bounds[i]});
  }
  cumulative += buckets.back();
  sample->histogram.bucket.push_back(
      {cumulative, std::numeric_limits<double>::infinity()});
  sample->histogram.sample_count = cumulative;
  sample->histogram.sample_sum = sum;
}

std::vector<prometheus::MetricFamily> FamilySet::Take() && {
  return std::move(families_);
}

}  // namespace mooncake_tier::metrics
