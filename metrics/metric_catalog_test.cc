#include "metrics/metric_catalog.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "prometheus/check_names.h"

namespace mooncake_tier::metrics {
namespace metric_catalog_test {
namespace {

TEST(MetricCatalogTest, NamesAreValidUniqueAndNamespaced) {
  std::set<std::string_view> seen;
  for (const MetricSpec& spec : AllMetrics()) {
    EXPECT_TRUE(prometheus::CheckMetricName(std::string(spec.name)))
        << spec.name;
    EXPECT_TRUE(spec.name.starts_with(kMetricNamespace)) << spec.name;
    EXPECT_TRUE(seen.insert(spec.name).second) << "twice: " << spec.name;
    EXPECT_FALSE(spec.help.empty()) << spec.name;
    // Counters end in _total; nothing else does.
    EXPECT_EQ(spec.kind == MetricKind::kCounter, spec.name.ends_with("_total"))
        << spec.name;
    for (std::string_view label : LabelNames(spec)) {
      EXPECT_TRUE(prometheus::CheckLabelName(std::string(label)))
          << spec.name << " label " << label;
      EXPECT_NE(label, "le") << spec.name;  // reserved for histograms
    }
  }
}

TEST(MetricCatalogTest, TheContractsNamesAreDeclaredWithTheirLabels) {
  // ARCHITECTURE.md section 8: name -> label names.
  const std::pair<std::string_view, std::string_view> contract[] = {
      {"mooncake_promotion_attempts_total", ""},
      {"mooncake_promotion_queued_total", ""},
      {"mooncake_promotion_completed_total", ""},
      {"mooncake_promotion_failed_total", "reason"},
      {"mooncake_promotion_in_flight", ""},
      {"mooncake_groups", "state"},
      {"mooncake_group_completed_total", ""},
      {"mooncake_group_broken_total", "cause"},
      {"mooncake_group_expired_total", ""},
      {"mooncake_group_evicted_total", "tier"},
      {"mooncake_tier_capacity_bytes", "tier"},
      {"mooncake_tier_used_bytes", "tier"},
      {"mooncake_get_total", "result"},
      {"mooncake_evictions_total", "tier"},
      {"mooncake_offload_queued_total", ""},
      {"mooncake_offload_completed_total", ""},
      {"mooncake_offload_failed_total", "reason"},
      {"mooncake_rpc_requests_total", "method,code"},
      {"mooncake_rpc_duration_seconds", "method"},
      {"mooncake_nodes", "state"},
  };
  for (const auto& [name, labels] : contract) {
    const MetricSpec* found = nullptr;
    for (const MetricSpec& spec : AllMetrics()) {
      if (spec.name == name) found = &spec;
    }
    ASSERT_NE(found, nullptr) << name;
    EXPECT_EQ(found->labels, labels) << name;
  }
}

TEST(MetricCatalogTest, SpecIsIndexedById) {
  for (const MetricSpec& spec : AllMetrics()) {
    EXPECT_EQ(&Spec(spec.id), &spec);
  }
  EXPECT_EQ(LabelNames(Spec(MetricId::kRpcRequestsTotal)),
            (std::vector<std::string_view>{"method", "code"}));
  EXPECT_TRUE(LabelNames(Spec(MetricId::kObjects)).empty());
}

}  // namespace
}  // namespace metric_catalog_test
}  // namespace mooncake_tier::metrics
