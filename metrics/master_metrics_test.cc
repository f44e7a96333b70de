#include "metrics/master_metrics.h"

#include <gtest/gtest.h>

#include <string>

#include "base/byte_units.h"
#include "metrics/metric_catalog.h"
#include "metrics/text_exposition.h"
#include "tests/support/master_harness.h"
#include "tests/support/prometheus_text.h"

namespace mooncake_tier::metrics {
namespace master_metrics_test {
namespace {

using ::mooncake_tier::testing::MasterHarness;
using ::mooncake_tier::testing::ParsePromText;
using ::mooncake_tier::testing::PromText;

constexpr uint64_t kObj = 4096;

MasterConfig Config() {
  MasterConfig c = MasterHarness::DefaultConfig();
  c.promotion.proactive_low_watermark = 0;
  return c;
}

class MasterMetricsTest : public ::testing::Test {
 protected:
  MasterMetricsTest()
      : h_(Config()),
        rpc_({"PutStart", "GetReplicaList"}),
        metrics_(&h_.master(), &h_.clock(), &rpc_) {}

  PromText Scrape() {
    std::vector<std::string> errors;
    PromText text = ParsePromText(RenderText({&metrics_}), &errors);
    EXPECT_TRUE(errors.empty()) << errors.front();
    return text;
  }
  double Value(const PromText& text, std::string_view name,
               const std::map<std::string, std::string>& labels = {}) {
    std::optional<double> v = text.Value(name, labels);
    EXPECT_TRUE(v.has_value()) << name;
    return v.value_or(-1);
  }

  MasterHarness h_;
  rpc::CallRecorder rpc_;
  MasterMetrics metrics_;
};

TEST_F(MasterMetricsTest, EveryMasterMetricIsRenderedWithItsType) {
  const PromText text = Scrape();
  for (const MetricSpec& spec : AllMetrics()) {
    auto it = text.types.find(std::string(spec.name));
    if (spec.scope != MetricScope::kMaster) {
      EXPECT_EQ(it, text.types.end()) << spec.name;
      continue;
    }
    ASSERT_NE(it, text.types.end()) << spec.name;
    EXPECT_EQ(it->second, KindName(spec.kind)) << spec.name;
  }
}

TEST_F(MasterMetricsTest, EverySampleCarriesItsDeclaredLabels) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  rpc_.Record(0, 0, std::chrono::milliseconds(1));
  const PromText text = Scrape();
  for (const MetricSpec& spec : AllMetrics()) {
    if (spec.scope != MetricScope::kMaster) continue;
    const std::vector<std::string_view> names = LabelNames(spec);
    for (const auto& sample : text.samples) {
      std::string base = sample.name;
      if (spec.kind == MetricKind::kHistogram) {
        for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
          if (base.ends_with(suffix) &&
              base.substr(0, base.size() - suffix.size()) == spec.name) {
            base = std::string(spec.name);
          }
        }
      }
      if (base != spec.name) continue;
      size_t expected = names.size();
      if (sample.name.ends_with("_bucket")) ++expected;  // le
      EXPECT_EQ(sample.labels.size(), expected) << sample.name;
      for (std::string_view label : names) {
        EXPECT_TRUE(sample.labels.contains(std::string(label)))
            << sample.name << " lacks " << label;
      }
    }
  }
}

TEST_F(MasterMetricsTest, TierNodeAndDataPathValuesFollowTheMaster) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("a", kObj).ok());
  ASSERT_TRUE(h_.Put("b", kObj).ok());
  ASSERT_TRUE(h_.Get("a").ok());
  EXPECT_FALSE(h_.Get("missing").ok());
  h_.clock().Advance(std::chrono::seconds(3));
  PromText text = Scrape();
  EXPECT_EQ(Value(text, "mooncake_tier_capacity_bytes", {{"tier", "memory"}}),
            kMiB);
  EXPECT_EQ(
      Value(text, "mooncake_tier_capacity_bytes", {{"tier", "local_disk"}}),
      64 * kMiB);
  EXPECT_GE(Value(text, "mooncake_tier_used_bytes", {{"tier", "memory"}}),
            2 * kObj);
  EXPECT_EQ(Value(text, "mooncake_objects"), 2);
  EXPECT_EQ(Value(text, "mooncake_nodes", {{"state", "alive"}}), 1);
  EXPECT_EQ(Value(text, "mooncake_put_completed_total"), 2);
  EXPECT_EQ(Value(text, "mooncake_get_total", {{"result", "memory_hit"}}), 1);
  EXPECT_EQ(Value(text, "mooncake_get_total", {{"result", "miss"}}), 1);
  EXPECT_EQ(Value(text, "mooncake_get_total", {{"result", "local_disk_hit"}}),
            0);
  EXPECT_EQ(
      Value(text, "mooncake_node_heartbeat_age_seconds", {{"node", "n1"}}), 3);
  EXPECT_EQ(Value(text, "mooncake_node_capacity_bytes",
                  {{"node", "n1"}, {"tier", "memory"}}),
            kMiB);

  // "a" is leased by the read; eviction takes "b".
  EXPECT_GT(h_.master().EvictMemory(kMiB), 0u);
  text = Scrape();
  const MasterStats stats = h_.master().GetStats();
  EXPECT_GE(stats.evicted_memory_objects, 1u);
  EXPECT_EQ(Value(text, "mooncake_evictions_total", {{"tier", "memory"}}),
            stats.evicted_memory_objects);
  EXPECT_EQ(Value(text, "mooncake_evicted_bytes_total", {{"tier", "memory"}}),
            stats.evicted_memory_bytes);
  EXPECT_EQ(Value(text, "mooncake_objects_evicted_total"),
            stats.objects_evicted);
  EXPECT_EQ(Value(text, "mooncake_objects"), stats.objects);
}

TEST_F(MasterMetricsTest, DeadNodesAreCountedUntilTheyComeBack) {
  h_.AddNode("n1", kMiB);
  const NodeId n2 = h_.AddNode("n2", kMiB);
  h_.clock().Advance(h_.master().config().node_ttl);
  ASSERT_TRUE(h_.master().Heartbeat(n2).ok());
  ASSERT_EQ(h_.master().ExpireNodes(), 1u);
  PromText text = Scrape();
  EXPECT_EQ(Value(text, "mooncake_nodes", {{"state", "dead"}}), 1);
  EXPECT_EQ(Value(text, "mooncake_nodes", {{"state", "alive"}}), 1);
  EXPECT_EQ(Value(text, "mooncake_nodes_expired_total"), 1);
  h_.AddNode("n1", kMiB);
  text = Scrape();
  EXPECT_EQ(Value(text, "mooncake_nodes", {{"state", "dead"}}), 0);
  EXPECT_EQ(Value(text, "mooncake_nodes", {{"state", "alive"}}), 2);
}

TEST_F(MasterMetricsTest, DeregisteredNodeIsDeadButNotExpired) {
  const NodeId n1 = h_.AddNode("n1", kMiB);
  h_.AddNode("n2", kMiB);
  ASSERT_TRUE(h_.master().DeregisterNode(n1).ok());
  PromText text = Scrape();
  // Dead until it comes back, as after node_ttl; but a clean departure is
  // no expiry (the MooncakeNodeDead alert watches expiries).
  EXPECT_EQ(Value(text, "mooncake_nodes", {{"state", "dead"}}), 1);
  EXPECT_EQ(Value(text, "mooncake_nodes", {{"state", "alive"}}), 1);
  EXPECT_EQ(Value(text, "mooncake_nodes_deregistered_total"), 1);
  EXPECT_EQ(Value(text, "mooncake_nodes_expired_total"), 0);
  h_.AddNode("n1", kMiB);
  text = Scrape();
  EXPECT_EQ(Value(text, "mooncake_nodes", {{"state", "dead"}}), 0);
}

TEST_F(MasterMetricsTest, PromotionCountersFollowATaskThroughItsLife) {
  const NodeId node =
      h_.AddNode("n1", kMiB, 64 * kMiB, {SsdInventoryEntry{"p", kObj, {}}});
  ASSERT_TRUE(h_.Get("p").ok());  // below the admission threshold
  ASSERT_TRUE(h_.Get("p").ok());  // queued
  PromText text = Scrape();
  EXPECT_EQ(Value(text, "mooncake_get_total", {{"result", "local_disk_hit"}}),
            2);
  EXPECT_EQ(Value(text, "mooncake_promotion_attempts_total"), 2);
  EXPECT_EQ(
      Value(text, "mooncake_promotion_failed_total", {{"reason", "admission"}}),
      1);
  EXPECT_EQ(Value(text, "mooncake_promotion_queued_total"), 1);
  EXPECT_EQ(Value(text, "mooncake_promotion_in_flight"), 1);
  EXPECT_EQ(Value(text, "mooncake_promotion_completed_total"), 0);

  Result<NodeTasks> reply = h_.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->promotions.size(), 1u);
  const TaskId task = reply->promotions[0].id;
  h_.clock().Advance(std::chrono::milliseconds(300));  // queued to commit
  ASSERT_TRUE(h_.master().PromotionAllocStart(node, task).ok());
  ASSERT_TRUE(h_.master().NotifyPromotionSuccess(node, task).ok());
  text = Scrape();
  EXPECT_EQ(Value(text, "mooncake_promotion_completed_total"), 1);
  EXPECT_EQ(Value(text, "mooncake_promotion_duration_seconds_count"), 1);
  EXPECT_DOUBLE_EQ(Value(text, "mooncake_promotion_duration_seconds_sum"), 0.3);
  EXPECT_EQ(Value(text, "mooncake_promotion_duration_seconds_bucket",
                  {{"le", "0.25"}}),
            0);
  EXPECT_EQ(Value(text, "mooncake_promotion_duration_seconds_bucket",
                  {{"le", "0.5"}}),
            1);
  EXPECT_EQ(Value(text, "mooncake_promotion_duration_seconds_bucket",
                  {{"le", "+Inf"}}),
            1);
  EXPECT_EQ(Value(text, "mooncake_promotion_in_flight"), 0);
  EXPECT_EQ(Value(text, "mooncake_promotion_bytes_total"), kObj);
}

TEST_F(MasterMetricsTest, GroupGaugesAndCountersFollowTheMaster) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  PutOptions k, v, lone;
  k.group = GroupSpec{"g", 2, 0};
  v.group = GroupSpec{"g", 2, 1};
  lone.group = GroupSpec{"h", 2, 0};
  ASSERT_TRUE(h_.Put("g/k", kObj, k).ok());
  ASSERT_TRUE(h_.Put("g/v", kObj, v).ok());
  ASSERT_TRUE(h_.Put("h/k", kObj, lone).ok());
  const PromText text = Scrape();
  EXPECT_EQ(Value(text, "mooncake_groups", {{"state", "complete"}}), 1);
  EXPECT_EQ(Value(text, "mooncake_groups", {{"state", "filling"}}), 1);
  EXPECT_EQ(Value(text, "mooncake_groups", {{"state", "broken"}}), 0);
  EXPECT_EQ(Value(text, "mooncake_group_created_total"), 2);
  EXPECT_EQ(Value(text, "mooncake_group_completed_total"), 1);
  EXPECT_EQ(Value(text, "mooncake_group_filling_bytes"),
            h_.master().GetStats().filling_group_bytes);
  EXPECT_GT(Value(text, "mooncake_group_filling_bytes"), 0);
}

TEST_F(MasterMetricsTest, RpcCountsAndHistogramFollowTheRecorder) {
  rpc_.Record(0, 0, std::chrono::microseconds(700));
  rpc_.Record(0, 0, std::chrono::seconds(10));  // beyond the last bound
  rpc_.Record(0, 5, std::chrono::microseconds(30));
  const PromText text = Scrape();
  EXPECT_EQ(Value(text, "mooncake_rpc_requests_total",
                  {{"method", "PutStart"}, {"code", "OK"}}),
            2);
  EXPECT_EQ(Value(text, "mooncake_rpc_requests_total",
                  {{"method", "PutStart"}, {"code", "NOT_FOUND"}}),
            1);
  EXPECT_EQ(Value(text, "mooncake_rpc_requests_total",
                  {{"method", "GetReplicaList"}, {"code", "OK"}}),
            0);
  EXPECT_FALSE(text.Value("mooncake_rpc_requests_total",
                          {{"method", "GetReplicaList"}, {"code", "NOT_FOUND"}})
                   .has_value());
  EXPECT_EQ(Value(text, "mooncake_rpc_duration_seconds_count",
                  {{"method", "PutStart"}}),
            3);
  EXPECT_NEAR(Value(text, "mooncake_rpc_duration_seconds_sum",
                    {{"method", "PutStart"}}),
              10.00073, 1e-6);
  // Cumulative buckets: 30 us in the first, 700 us by 1 ms, 10 s only in
  // +Inf.
  size_t buckets = 0;
  for (const auto& s : text.samples) {
    if (s.name != "mooncake_rpc_duration_seconds_bucket" ||
        s.labels.at("method") != "PutStart") {
      continue;
    }
    ++buckets;
    const double le = std::strtod(s.labels.at("le").c_str(), nullptr);
    const double expected = le < 0.00075 ? 1 : le < 20 ? 2 : 3;
    EXPECT_EQ(s.value, expected) << "le=" << s.labels.at("le");
  }
  EXPECT_EQ(buckets, rpc::kLatencyBounds.size() + 1);
}

}  // namespace
}  // namespace master_metrics_test
}  // namespace mooncake_tier::metrics
