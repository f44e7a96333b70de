// Run-time configuration (Master::UpdateRuntimeConfig): changes are seen by
// config() and by the paths that use them, bad input changes nothing, and
// concurrent partial changes are applied one over the other.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_runtime_config_test {
namespace {

using std::chrono::seconds;
using testing::MasterHarness;

constexpr uint64_t kObj = 1024;

TEST(RuntimeConfigTest, ValidChangeIsSeenByConfig) {
  MasterHarness h;
  RuntimeConfigChange change;
  change.eviction_high_watermark = 0.5;
  change.eviction_ratio = 0.2;
  change.ssd_high_watermark = 0.7;
  change.ssd_eviction_ratio = 0.1;
  change.ssd_eviction_policy = EvictionPolicyKind::kLru;
  change.group_fill_timeout = seconds(5);
  change.group_broken_ttl = seconds(7);
  change.offload_max_per_pull = 3;
  change.offload_queue_limit = 9;
  Result<RuntimeConfigUpdate> update = h.master().UpdateRuntimeConfig(change);
  ASSERT_TRUE(update.ok()) << update.status().ToString();
  EXPECT_EQ(update->before.eviction_high_watermark, 0.9);
  EXPECT_EQ(update->after.eviction_high_watermark, 0.5);
  const MasterConfig c = h.master().config();
  EXPECT_EQ(c.eviction_high_watermark, 0.5);
  EXPECT_EQ(c.eviction_ratio, 0.2);
  EXPECT_EQ(c.ssd_high_watermark, 0.7);
  EXPECT_EQ(c.ssd_eviction_ratio, 0.1);
  EXPECT_EQ(update->before.ssd_eviction_policy, EvictionPolicyKind::kClock);
  EXPECT_EQ(c.ssd_eviction_policy, EvictionPolicyKind::kLru);
  EXPECT_EQ(c.group_fill_timeout, seconds(5));
  EXPECT_EQ(c.group_broken_ttl, seconds(7));
  EXPECT_EQ(c.offload_max_per_pull, 3u);
  EXPECT_EQ(c.offload_queue_limit, 9u);
  EXPECT_EQ(c.shard_count, MasterHarness::DefaultConfig().shard_count);
  // A partial change keeps the rest.
  RuntimeConfigChange one;
  one.offload_queue_limit = 10;
  ASSERT_TRUE(h.master().SetRuntimeConfig(one).ok());
  EXPECT_EQ(h.master().config().offload_queue_limit, 10u);
  EXPECT_EQ(h.master().config().eviction_high_watermark, 0.5);
}

TEST(RuntimeConfigTest, InvalidChangesChangeNothing) {
  MasterHarness h;
  const MasterConfig before = h.master().config();
  std::vector<RuntimeConfigChange> bad(6);
  bad[0].eviction_ratio = 0.95;  // above the watermark that stays
  bad[1].eviction_high_watermark = 1.5;
  bad[2].offload_max_per_pull = 0;
  bad[3].group_fill_timeout = Duration::zero();
  bad[4].ssd_high_watermark = 0.01;  // below the ssd ratio that stays
  // A valid field with an invalid one: neither applies.
  bad[5].offload_queue_limit = 5;
  bad[5].group_broken_ttl = seconds(-1);
  for (size_t i = 0; i < bad.size(); ++i) {
    const Status s = h.master().SetRuntimeConfig(bad[i]);
    EXPECT_EQ(s.reason(), ErrorReason::kInvalidArgument) << i;
    EXPECT_FALSE(s.message().empty()) << i;
  }
  // A valid knob with an invalid promotion edit: neither applies.
  RuntimeConfigChange good;
  good.eviction_high_watermark = 0.5;
  const Status s = h.master()
                       .UpdateRuntimeConfig(good,
                                            [](PromotionOptions& o) {
                                              o.admission_threshold = 0;
                                              return Status::Ok();
                                            })
                       .status();
  EXPECT_EQ(s.reason(), ErrorReason::kInvalidArgument);
  const MasterConfig after = h.master().config();
  EXPECT_EQ(after.eviction_high_watermark, before.eviction_high_watermark);
  EXPECT_EQ(after.eviction_ratio, before.eviction_ratio);
  EXPECT_EQ(after.ssd_high_watermark, before.ssd_high_watermark);
  EXPECT_EQ(after.offload_max_per_pull, before.offload_max_per_pull);
  EXPECT_EQ(after.offload_queue_limit, before.offload_queue_limit);
  EXPECT_EQ(after.group_fill_timeout, before.group_fill_timeout);
  EXPECT_EQ(after.group_broken_ttl, before.group_broken_ttl);
  EXPECT_EQ(after.promotion.admission_threshold,
            before.promotion.admission_threshold);
  // An edit's own error is returned as is, and changes nothing either.
  const Status refused =
      h.master()
          .UpdateRuntimeConfig(good,
                               [](PromotionOptions&) {
                                 return Status(ErrorReason::kInvalidArgument,
                                               "bad field");
                               })
          .status();
  EXPECT_EQ(refused.message(), "bad field");
  EXPECT_EQ(h.master().config().eviction_high_watermark, 0.9);
}

TEST(RuntimeConfigTest, LoweredWatermarkEvictsAtTheNextRound) {
  MasterHarness h;
  h.AddNode("n", 100 * kObj);
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(h.Put("k" + std::to_string(i), kObj).ok());
    h.clock().Advance(seconds(1));
  }
  EXPECT_EQ(h.master().EvictMemory(), 0u);  // 60% < 90%
  RuntimeConfigChange change;
  change.eviction_high_watermark = 0.5;
  change.eviction_ratio = 0.1;
  ASSERT_TRUE(h.master().SetRuntimeConfig(change).ok());
  // 60% -> 40%: the twenty oldest go.
  EXPECT_EQ(h.master().EvictMemory(), 20 * kObj);
  EXPECT_FALSE(h.Exists("k19")->exists);
  EXPECT_TRUE(h.Exists("k20")->exists);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(RuntimeConfigTest, OffloadLimitsApplyToTheNextCall) {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.offload_mode = OffloadMode::kWriteThrough;
  MasterHarness h(config);
  const NodeId node = h.AddNode("n", 100 * kObj, 1000 * kObj);
  RuntimeConfigChange change;
  change.offload_queue_limit = 2;
  change.offload_max_per_pull = 1;
  ASSERT_TRUE(h.master().SetRuntimeConfig(change).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(h.Put("k" + std::to_string(i), kObj).ok());
  }
  EXPECT_EQ(h.master().GetStats().offload_queue_full, 1u);  // the third
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->offloads.size(), 1u);
}

TEST(RuntimeConfigTest, GroupFillTimeoutAppliesToTheNextSweep) {
  MasterHarness h;
  h.AddNode("n", 100 * kObj);
  PutOptions member;
  member.group = GroupSpec{"g", 2, 0};
  ASSERT_TRUE(h.Put("g/0", kObj, member).ok());
  RuntimeConfigChange change;
  change.group_fill_timeout = seconds(5);
  ASSERT_TRUE(h.master().SetRuntimeConfig(change).ok());
  h.clock().Advance(seconds(5));
  EXPECT_GE(h.master().SweepGroups(), 1u);
  EXPECT_FALSE(h.Exists("g/0")->exists);
}

// Read-modify-write of promotion options from many threads: every edit
// lands (none is lost to a concurrent one), and a reader never sees a
// configuration that fails validation (half of a watermark change).
TEST(RuntimeConfigTest, ConcurrentPartialChangesAreNotLost) {
  MasterHarness h;
  constexpr int kThreads = 4;
  constexpr int kEdits = 200;
  std::atomic<bool> stop{false};
  std::atomic<int> invalid_seen{0};
  std::thread reader([&] {
    while (!stop.load()) {
      if (!h.master().config().Validate().empty()) ++invalid_seen;
    }
  });
  std::thread toggler([&] {
    // Each pair valid on its own; mixing the two would not be.
    for (int i = 0; i < kEdits; ++i) {
      RuntimeConfigChange change;
      change.eviction_high_watermark = i % 2 ? 0.9 : 0.3;
      change.eviction_ratio = i % 2 ? 0.5 : 0.1;
      EXPECT_TRUE(h.master().SetRuntimeConfig(change).ok());
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < kEdits; ++i) {
        Status s = h.master()
                       .UpdateRuntimeConfig({},
                                            [](PromotionOptions& o) {
                                              ++o.admission_threshold;
                                              return Status::Ok();
                                            })
                       .status();
        EXPECT_TRUE(s.ok()) << s.ToString();
      }
    });
  }
  for (std::thread& w : writers) w.join();
  toggler.join();
  stop = true;
  reader.join();
  EXPECT_EQ(h.master().promotion_options().admission_threshold,
            PromotionOptions{}.admission_threshold + kThreads * kEdits);
  EXPECT_EQ(invalid_seen.load(), 0);
}

}  // namespace
}  // namespace master_runtime_config_test
}  // namespace mooncake_tier
