#include "metrics/metric_catalog.h"

#include <array>

namespace mooncake_tier::metrics {
namespace {

constexpr std::array kSpecs = {
#define MOONCAKE_TIER_METRIC_SPEC(id, scope, type, name, labels, help) \
  MetricSpec{MetricId::id,     MetricScope::scope,                     \
             MetricKind::type, "mooncake_" name,                       \
             labels,           help},
    MOONCAKE_TIER_METRICS(MOONCAKE_TIER_METRIC_SPEC)
#undef MOONCAKE_TIER_METRIC_SPEC
};

// The table is indexed by MetricId; a reordered entry would be caught here.
constexpr bool IndexedById() {
  for (size_t i = 0; i < kSpecs.size(); ++i) {
    if (static_cast<size_t>(kSpecs[i].id) != i) return false;
  }
  return true;
}
static_assert(IndexedById());

}  // namespace

std::span<const MetricSpec> AllMetrics() { return kSpecs; }

const MetricSpec& Spec(MetricId id) { return kSpecs[static_cast<size_t>(id)]; }

std::vector<std::string_view> LabelNames(const MetricSpec& spec) {
  std::vector<std::string_view> names;
  std::string_view rest = spec.labels;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    names.push_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return names;
}

std::string_view KindName(MetricKind kind) {
  switch (kind) {
    case MetricKind::kCounter:
      return "counter";
    case MetricKind::kGauge:
      return "gauge";
    case MetricKind::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace mooncake_tier::metrics
