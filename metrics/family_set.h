#pragma once

// Builds the prometheus-cpp MetricFamily values of one scrape from the
// catalog (metric_catalog.h): a collector adds samples by MetricId and
// label values, and Take() returns one family per declared metric of its
// scope, in declaration order, so a metric with no sample yet still shows
// its HELP and TYPE.
//
// Thread safety: a value; use from one thread (one scrape).

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metric_catalog.h"
#include "prometheus/metric_family.h"

namespace mooncake_tier::metrics {

class FamilySet {
 public:
  explicit FamilySet(MetricScope scope);

  // One counter or gauge sample. `labels` are the values of the metric's
  // label names, in order. REQUIRES: as many values as label names (a
  // mismatch is a programming error and drops the sample).
  void Add(MetricId id, double value,
           std::initializer_list<std::string_view> labels = {});
  // One histogram sample: `buckets` are per-bucket (not cumulative) counts
  // for the upper bounds `bounds` plus a last +Inf bucket, as
  // rpc::CallStats keeps them.
  void AddHistogram(MetricId id, std::initializer_list<std::string_view> labels,
                    std::span<const double> bounds,
                    std::span<const uint64_t> buckets, double sum);

  std::vector<prometheus::MetricFamily> Take() &&;

 private:
  prometheus::ClientMetric* NewSample(
      MetricId id, std::initializer_list<std::string_view> labels);

  std::vector<prometheus::MetricFamily> families_;
  // families_ index of each MetricId; -1 when not of this scope.
  std::vector<int> index_;
};

}  // namespace mooncake_tier::metrics
