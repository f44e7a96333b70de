#include "metrics/node_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#include "base/byte_units.h"
#include "base/latency_histogram.h"
#include "core/local_master.h"
#include "core/master.h"
#include "metrics/metric_catalog.h"
#include "metrics/text_exposition.h"
#include "node/memory_ssd_device.h"
#include "tests/support/prometheus_text.h"
#include "transport/in_process_transport.h"

namespace mooncake_tier::metrics {
namespace node_metrics_test {
namespace {

using ::mooncake_tier::testing::ParsePromText;
using ::mooncake_tier::testing::PromText;

class NodeMetricsTest : public ::testing::Test {
 protected:
  NodeMetricsTest() : master_(Config(), &clock_), link_(&master_) {
    SsdStoreOptions o;
    o.capacity_bytes = 64 * kMiB;
    Result<std::unique_ptr<SsdStore>> store =
        SsdStore::Open(device_.Reopen(), o);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    StorageNodeOptions options;
    options.name = "n1";
    options.dram_bytes = kMiB;
    Result<std::unique_ptr<StorageNode>> node =
        StorageNode::Create(options, std::move(*store), &link_, &transport_);
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    node_ = std::move(*node);
    EXPECT_TRUE(node_->Register().ok());
  }

  static MasterConfig Config() {
    MasterConfig c;
    c.shard_count = 16;
    c.offload_mode = OffloadMode::kOnEvict;
    return c;
  }

  PromText Scrape(const NodeMetrics& metrics) {
    std::vector<std::string> errors;
    PromText text = ParsePromText(RenderText({&metrics}), &errors);
    EXPECT_TRUE(errors.empty()) << errors.front();
    return text;
  }

  ManualClock clock_;
  Master master_;
  LocalMasterLink link_;
  InProcessTransport transport_;
  MemorySsdDevice device_;
  std::unique_ptr<StorageNode> node_;
};

TEST_F(NodeMetricsTest, EveryNodeMetricIsRenderedWithItsType) {
  NodeMetrics metrics(node_.get());
  const PromText text = Scrape(metrics);
  for (const MetricSpec& spec : AllMetrics()) {
    auto it = text.types.find(std::string(spec.name));
    if (spec.scope != MetricScope::kNode) {
      EXPECT_EQ(it, text.types.end()) << spec.name;
      continue;
    }
    ASSERT_NE(it, text.types.end()) << spec.name;
    EXPECT_EQ(it->second, KindName(spec.kind)) << spec.name;
    if (spec.kind == MetricKind::kHistogram) {
      EXPECT_GT(text.Count(std::string(spec.name) + "_count"), 0u) << spec.name;
    } else {
      EXPECT_GT(text.Count(spec.name), 0u) << spec.name;
    }
  }
}

TEST_F(NodeMetricsTest, OffloadAndTransferFiguresFollowTheNode) {
  NodeMetrics metrics(node_.get(), [] {
    return TransferRequestCounts{3, 1, 0};
  });
  const std::string key = "k";
  PutStartRequest req{key, 5000, {}, "c"};
  Result<ReplicaDescriptor> d = std::move(master_.PutStart({&req, 1})[0]);
  ASSERT_TRUE(d.ok());
  std::memset(node_->segment().base() + d->offset, 'x', 5000);
  ASSERT_TRUE(master_.PutEnd("c", {&key, 1})[0].ok());
  master_.EvictMemory(kMiB);
  ASSERT_TRUE(node_->HeartbeatOnce().ok());
  ASSERT_TRUE(node_->PullTasksOnce().ok());
  ASSERT_EQ(node_->RunTasksOnce(), 1u);

  const PromText text = Scrape(metrics);
  const StorageNodeStats stats = node_->stats();
  EXPECT_EQ(text.Value("mooncake_node_dram_capacity_bytes"), kMiB);
  EXPECT_EQ(text.Value("mooncake_node_tasks_total",
                       {{"kind", "offload"}, {"result", "ok"}}),
            1);
  EXPECT_EQ(text.Value("mooncake_node_task_bytes_total", {{"kind", "offload"}}),
            5000);
  EXPECT_EQ(text.Value("mooncake_node_heartbeats_total", {{"result", "ok"}}),
            stats.heartbeats);
  EXPECT_EQ(text.Value("mooncake_node_registrations_total"), 1);
  EXPECT_EQ(text.Value("mooncake_ssd_records"), 1);
  EXPECT_EQ(text.Value("mooncake_ssd_ops_total", {{"op", "write"}}), 1);
  EXPECT_EQ(text.Value("mooncake_ssd_op_bytes_total", {{"op", "write"}}), 5000);
  EXPECT_EQ(text.Value("mooncake_ssd_bytes", {{"kind", "capacity"}}),
            64 * kMiB);
  EXPECT_EQ(text.Value("mooncake_transfer_ssd_requests_total",
                       {{"result", "served"}}),
            3);
  EXPECT_EQ(text.Value("mooncake_transfer_ssd_requests_total",
                       {{"result", "rejected"}}),
            1);
  // One write round reached the device; nothing was read.
  EXPECT_EQ(text.Value("mooncake_ssd_batch_duration_seconds_count",
                       {{"op", "write"}}),
            1);
  EXPECT_EQ(text.Value("mooncake_ssd_batch_duration_seconds_bucket",
                       {{"op", "write"}, {"le", "+Inf"}}),
            1);
  EXPECT_EQ(
      text.Value("mooncake_ssd_batch_duration_seconds_count", {{"op", "read"}}),
      0);
  EXPECT_EQ(text.Value("mooncake_node_pending_tasks", {{"kind", "offload"}}),
            0);
}

TEST_F(NodeMetricsTest, PendingTasksCountWorkNotYetStarted) {
  NodeMetrics metrics(node_.get());
  for (const std::string key : {"a", "b"}) {
    PutStartRequest req{key, 4096, {}, "c"};
    Result<ReplicaDescriptor> d = std::move(master_.PutStart({&req, 1})[0]);
    ASSERT_TRUE(d.ok());
    ASSERT_TRUE(master_.PutEnd("c", {&key, 1})[0].ok());
  }
  master_.EvictMemory(kMiB);
  ASSERT_TRUE(node_->PullTasksOnce().ok());  // takes the offload tasks
  EXPECT_EQ(Scrape(metrics).Value("mooncake_node_pending_tasks",
                                  {{"kind", "offload"}}),
            2);
  node_->RunTasksOnce();
  EXPECT_EQ(Scrape(metrics).Value("mooncake_node_pending_tasks",
                                  {{"kind", "offload"}}),
            0);
}

TEST_F(NodeMetricsTest, MaxPendingTasksReportsTheConfiguredCap) {
  // The fixture's node runs with the default cap.
  EXPECT_EQ(
      Scrape(NodeMetrics(node_.get())).Value("mooncake_node_max_pending_tasks"),
      StorageNodeOptions{}.max_pending_tasks);

  // A node started with another cap exports that cap, so the alert on
  // pending tasks near the cap follows it.
  StorageNodeOptions options;
  options.name = "n2";
  options.dram_bytes = kMiB;
  options.max_pending_tasks = 64;
  Result<std::unique_ptr<StorageNode>> other =
      StorageNode::Create(options, nullptr, &link_, &transport_);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  const PromText text = Scrape(NodeMetrics(other->get()));
  EXPECT_EQ(text.Value("mooncake_node_max_pending_tasks"), 64);
  EXPECT_EQ(text.types.at("mooncake_node_max_pending_tasks"), "gauge");
}

TEST(LatencyHistogramTest, SamplesLandInTheirBucket) {
  LatencyHistogram histogram(kIoLatencyBounds);
  histogram.Record(std::chrono::microseconds(10));  // on the first bound
  histogram.Record(std::chrono::microseconds(11));
  histogram.Record(std::chrono::seconds(10));      // beyond the last bound
  histogram.Record(std::chrono::nanoseconds(-5));  // a clock step: zero
  const LatencySnapshot s = histogram.Snapshot();
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.buckets[0], 2u);
  EXPECT_EQ(s.buckets[1], 1u);
  EXPECT_EQ(s.buckets.back(), 1u);
  EXPECT_EQ(s.sum_ns, 10000u + 11000u + 10000000000u);
  EXPECT_EQ(s.max_ns, 10000000000u);
}

}  // namespace
}  // namespace node_metrics_test
}  // namespace mooncake_tier::metrics
