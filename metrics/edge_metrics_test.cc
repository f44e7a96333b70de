#include "metrics/edge_metrics.h"

#include <gtest/gtest.h>

#include "metrics/metric_catalog.h"
#include "metrics/text_exposition.h"
#include "tests/support/prometheus_text.h"

namespace mooncake_tier::metrics {
namespace edge_metrics_test {
namespace {

using ::mooncake_tier::testing::ParsePromText;
using ::mooncake_tier::testing::PromText;

TEST(EdgeMetricsTest, RendersEveryEdgeFamilyAndOnlyThose) {
  EdgeMetrics metrics([] {
    EdgeSample sample;
    sample.connections_open = 3;
    sample.connections_accepted = 40;
    sample.idle_timeouts = 5;
    sample.idle_evicted = 7;
    sample.refused = {{"unauthenticated", 2}, {"body_too_large", 1}};
    return sample;
  });
  std::vector<std::string> errors;
  const PromText text = ParsePromText(RenderText({&metrics}), &errors);
  EXPECT_TRUE(errors.empty());
  for (const MetricSpec& spec : AllMetrics()) {
    EXPECT_EQ(text.types.count(std::string(spec.name)),
              spec.scope == MetricScope::kEdge ? 1u : 0u)
        << spec.name;
  }
  EXPECT_EQ(text.Value("mooncake_admin_connections"), 3);
  EXPECT_EQ(text.Value("mooncake_admin_connections_total"), 40);
  EXPECT_EQ(text.Value("mooncake_admin_connections_closed_total",
                       {{"reason", "idle_timeout"}}),
            5);
  EXPECT_EQ(text.Value("mooncake_admin_connections_closed_total",
                       {{"reason", "evicted"}}),
            7);
  EXPECT_EQ(text.Value("mooncake_admin_refused_total",
                       {{"reason", "unauthenticated"}}),
            2);
  EXPECT_EQ(text.Value("mooncake_admin_refused_total",
                       {{"reason", "body_too_large"}}),
            1);
}

}  // namespace
}  // namespace edge_metrics_test
}  // namespace mooncake_tier::metrics
