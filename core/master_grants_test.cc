// Grants and late writes (docs/design/ha.md, "Grants of an old term"): a
// PutStart says how long its write may start; a node that comes back to a
// master that cannot know what was granted in its segment gets no
// placements until those grants ran out.

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "base/byte_units.h"
#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_grants_test {
namespace {

using testing::MasterHarness;
using namespace std::chrono_literals;

MasterConfig Config() {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.put_wait_timeout = Duration::zero();
  config.grant_window = 2s;
  config.late_write_margin = 250ms;
  config.put_timeout = 30s;
  config.node_ttl = 10s;
  return config;
}

NodeSpec Spec(const std::string& name, bool resumed) {
  NodeSpec spec;
  spec.name = name;
  spec.dram_size = kMiB;
  spec.resumed = resumed;
  return spec;
}

TEST(MasterGrantsTest, AGrantSaysHowLongItsWriteMayStart) {
  MasterHarness h(Config());
  h.AddNode("n", kMiB);
  Result<ReplicaDescriptor> granted = h.PutStart("k", 1000);
  ASSERT_TRUE(granted.ok()) << granted.status().ToString();
  EXPECT_EQ(granted->write_within_ms, 2000u);
  // The same client asking again gets the same range and what is left.
  h.clock().Advance(1500ms);
  Result<ReplicaDescriptor> again = h.PutStart("k", 1000);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->offset, granted->offset);
  EXPECT_EQ(again->write_within_ms, 500u);
  h.clock().Advance(1s);
  EXPECT_EQ(h.PutStart("k", 1000)->write_within_ms, 0u);
  // Replica lists carry no window.
  ASSERT_TRUE(h.PutEnd("k").ok());
  EXPECT_EQ(h.Get("k")->replicas[0].write_within_ms, 0u);
}

TEST(MasterGrantsTest, TheWindowEndsBeforeARevocationOrAnExpiry) {
  MasterConfig config = Config();
  config.put_timeout = 1500ms;
  EXPECT_EQ(config.EffectiveGrantWindow(), 1500ms);
  config.node_ttl = 2s;  // no placements once silent for half of it
  EXPECT_EQ(config.EffectiveGrantWindow(), 1s);
  MasterHarness h(config);
  h.AddNode("n", kMiB);
  EXPECT_EQ(h.PutStart("k", 1000)->write_within_ms, 1000u);
}

TEST(MasterGrantsTest, AResumedNodeWaitsOutAPredecessorsGrants) {
  // A fresh node process holds no grant: placed on at once.
  MasterHarness fresh(Config());
  ASSERT_TRUE(fresh.link().RegisterNode(Spec("n", false), {}, {}).ok());
  EXPECT_TRUE(fresh.PutStart("k", 1000).ok());

  // A node that lived on since a predecessor granted ranges in it: none of
  // its free space is handed out until those grants ran out (the window
  // and the margin after this master started).
  MasterHarness h(Config());
  ASSERT_TRUE(h.link().RegisterNode(Spec("n", true), {}, {}).ok());
  Result<ReplicaDescriptor> early = h.PutStart("k", 1000);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.status().reason(), ErrorReason::kUnavailable)
      << early.status().ToString();
  h.clock().Advance(2249ms);
  EXPECT_EQ(h.PutStart("k", 1000).status().reason(), ErrorReason::kUnavailable);
  h.clock().Advance(1ms);
  EXPECT_TRUE(h.PutStart("k", 1000).ok());
}

TEST(MasterGrantsTest, ANodeBackAtTheSameMasterWaitsOutItsOwnGrants) {
  MasterHarness h(Config());
  h.clock().Advance(1min);  // long after any predecessor's grants
  ASSERT_TRUE(h.link().RegisterNode(Spec("n", false), {}, {}).ok());
  ASSERT_TRUE(h.PutStart("granted", 1000).ok());
  // It registers again (its registration's answer was lost, say): this
  // master's own grants on it may still be written.
  ASSERT_TRUE(h.link().RegisterNode(Spec("n", true), {}, {}).ok());
  EXPECT_EQ(h.PutStart("k", 1000).status().reason(), ErrorReason::kUnavailable);
  h.clock().Advance(2250ms);
  EXPECT_TRUE(h.PutStart("k", 1000).ok());
}

TEST(MasterGrantsTest, ALeaderOfANewTermWaitsOnlyTheMargin) {
  MasterConfig config = Config();
  // Every earlier term's grants ran out with its lease (HaMaster sets it).
  config.inherited_grant_window = config.late_write_margin;
  MasterHarness h(config);
  ASSERT_TRUE(h.link().RegisterNode(Spec("n", true), {}, {}).ok());
  EXPECT_EQ(h.PutStart("k", 1000).status().reason(), ErrorReason::kUnavailable);
  h.clock().Advance(250ms);
  EXPECT_TRUE(h.PutStart("k", 1000).ok());
}

TEST(MasterGrantsTest, APutWaitsForTheFenceWithinItsOwnWait) {
  MasterHarness h(Config());
  ASSERT_TRUE(h.link().RegisterNode(Spec("n", true), {}, {}).ok());
  std::thread later([&h] {
    std::this_thread::sleep_for(50ms);
    h.clock().Advance(3s);
  });
  PutStartRequest request{"k", 1000, {}, MasterHarness::kClient};
  std::vector<Result<ReplicaDescriptor>> placed =
      h.master().PutStart({&request, 1}, h.clock().Now() + 5s);
  later.join();
  ASSERT_TRUE(placed[0].ok()) << placed[0].status().ToString();
  // Waiting for the fence is not a reason to evict: nothing was.
  EXPECT_EQ(h.master().GetStats().put_waits, 0u);
  // The window counts from the call, as the client counts it from its
  // send: the wait is added, so the client still has the whole window.
  EXPECT_EQ(placed[0]->write_within_ms,
            std::chrono::duration_cast<std::chrono::milliseconds>(
                Config().EffectiveGrantWindow() + 3s)
                .count());
}

}  // namespace
}  // namespace master_grants_test
}  // namespace mooncake_tier
