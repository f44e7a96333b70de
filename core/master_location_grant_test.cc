// Location grants (docs/design/location-cache.md): a read of a DRAM copy
// says how long the reader may read it again at that place with no call,
// and DRAM freed meanwhile is not handed out until the grant ran out,
// whatever freed it (removal, forced or not, and eviction).

#include <gtest/gtest.h>

#include <chrono>

#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_location_grant_test {
namespace {

using testing::MasterHarness;
using namespace std::chrono_literals;

constexpr uint64_t kSize = 64 * 1024;

MasterConfig Config(Duration location_grant = 2s) {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.put_wait_timeout = Duration::zero();
  config.location_grant = location_grant;
  return config;
}

TEST(MasterLocationGrantTest, ADramReadCarriesAGrantAnSsdReadDoesNot) {
  MasterHarness h(Config());
  h.AddNode("n", 1 << 20);
  ASSERT_TRUE(h.Put("k", kSize).ok());
  Result<ObjectReplicas> read = h.Get("k");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->location_valid_ms, 2000u);
  EXPECT_EQ(h.master().GetStats().location_grants, 1u);

  MasterHarness off(Config(0s));
  off.AddNode("n", 1 << 20);
  ASSERT_TRUE(off.Put("k", kSize).ok());
  EXPECT_EQ(off.Get("k")->location_valid_ms, 0u);
}

TEST(MasterLocationGrantTest, TheGrantIsCappedLikeAPutsWindow) {
  MasterConfig config = Config(10s);
  config.node_ttl = 4s;
  EXPECT_EQ(config.EffectiveLocationGrant(), 2s);
  config.location_grant = 3s;
  config.grant_window = 1s;
  config.node_ttl = 10s;
  EXPECT_EQ(config.LongestGrant(), 3s);
}

// The range of a removed object that a reader may still read from its
// cache goes to no other put until the grant ran out; then it does.
TEST(MasterLocationGrantTest, ARemovedObjectsRangeIsHeldUntilItsGrantEnds) {
  for (const bool force : {false, true}) {
    SCOPED_TRACE(force ? "forced" : "plain");
    MasterHarness h(Config());
    // Room for exactly one object: a second put can only take its range.
    h.AddNode("n", kSize);
    Result<ReplicaDescriptor> first = h.Put("a", kSize);
    ASSERT_TRUE(first.ok());
    Result<ObjectReplicas> read = h.Get("a");
    ASSERT_TRUE(read.ok());
    if (!force) {  // the reader's lease ends; its location grant does not
      const std::vector<LeaseRelease> done{{"a", read->lease_id}};
      ASSERT_EQ(h.master().ReleaseLeases(done), 1u);
    }
    ASSERT_TRUE(h.Remove("a", force).ok());
    EXPECT_EQ(h.PutStart("b", kSize).status().reason(), ErrorReason::kNoSpace);
    EXPECT_EQ(h.master().GetStats().held_memory_bytes, kSize);
    EXPECT_TRUE(h.master().Audit().consistent());

    h.clock().Advance(1999ms);
    h.master().Tick();
    EXPECT_EQ(h.PutStart("b", kSize).status().reason(), ErrorReason::kNoSpace);
    h.clock().Advance(1ms);
    // An allocation finds the range due by itself (no tick needed).
    Result<ReplicaDescriptor> second = h.Put("b", kSize);
    ASSERT_TRUE(second.ok()) << second.status().ToString();
    EXPECT_EQ(second->offset, first->offset);
    EXPECT_EQ(h.master().GetStats().held_memory_bytes, 0u);
    EXPECT_TRUE(h.master().Audit().consistent());
  }
}

// Without a read there is no grant: the range is handed out at once.
TEST(MasterLocationGrantTest, AnUnreadObjectsRangeIsReusedAtOnce) {
  MasterHarness h(Config());
  h.AddNode("n", kSize);
  ASSERT_TRUE(h.Put("a", kSize).ok());
  ASSERT_TRUE(h.Exists("a").ok());  // probes grant nothing
  ASSERT_TRUE(h.Remove("a").ok());
  EXPECT_TRUE(h.Put("b", kSize).ok());
}

// Eviction drops the DRAM copy of an object written to SSD: its range too
// waits for the grant, while the object stays readable from SSD.
TEST(MasterLocationGrantTest, AnEvictedCopysRangeIsHeldUntilItsGrantEnds) {
  MasterConfig config = Config();
  config.offload_mode = OffloadMode::kWriteThrough;
  MasterHarness h(config);
  const NodeId node = h.AddNode("n", 2 * kSize, 1 << 20);
  ASSERT_TRUE(h.Put("a", kSize).ok());
  h.CompleteOffloads(node);
  Result<ObjectReplicas> read = h.Get("a");
  ASSERT_TRUE(read.ok());
  const std::vector<LeaseRelease> done{{"a", read->lease_id}};
  ASSERT_EQ(h.master().ReleaseLeases(done), 1u);
  // A put that needs the room drops the clean copy of "a" at once.
  ASSERT_TRUE(h.Put("b", kSize).ok());
  Result<ReplicaDescriptor> c = h.PutStart("c", kSize);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(h.Tiers("a"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_EQ(h.master().GetStats().held_memory_bytes, kSize);
  h.clock().Advance(2s);
  EXPECT_TRUE(h.Put("c", kSize).ok());
}

// A read served from a client's cache, reported afterwards, counts as an
// access: the object is younger for eviction.
TEST(MasterLocationGrantTest, ACachedReadReportCountsAsAnAccess) {
  MasterHarness h(Config());
  h.AddNode("n", 1 << 20);
  ASSERT_TRUE(h.Put("k", kSize).ok());
  const TimePoint put_at = h.clock().Now();
  h.clock().Advance(5s);
  const std::vector<LeaseRelease> cached{{"k", 0}, {"gone", 0}};
  EXPECT_EQ(h.master().ReleaseLeases(cached), 0u);
  const MasterStats stats = h.master().GetStats();
  EXPECT_EQ(stats.cached_reads_reported, 1u);
  Result<ObjectDescription> d = h.master().DescribeObject("k");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->last_access, put_at + 5s);
}

// A node that registers again (resumed) waits out location grants too when
// they are longer than put grants.
TEST(MasterLocationGrantTest, AResumedNodeWaitsOutTheLongerGrant) {
  MasterConfig config = Config(4s);
  config.grant_window = 1s;
  config.late_write_margin = 250ms;
  MasterHarness h(config);
  h.clock().Advance(1min);
  NodeSpec spec;
  spec.name = "n";
  spec.dram_size = 1 << 20;
  ASSERT_TRUE(h.link().RegisterNode(spec, {}, {}).ok());
  ASSERT_TRUE(h.Put("a", kSize).ok());
  ASSERT_TRUE(h.Get("a").ok());
  spec.resumed = true;
  ASSERT_TRUE(h.link().RegisterNode(spec, {}, {}).ok());
  h.clock().Advance(4249ms);
  EXPECT_EQ(h.PutStart("k", 1000).status().reason(), ErrorReason::kUnavailable);
  h.clock().Advance(1ms);
  EXPECT_TRUE(h.PutStart("k", 1000).ok());
}

}  // namespace
}  // namespace master_location_grant_test
}  // namespace mooncake_tier
