#include "core/master.h"

#include <gtest/gtest.h>

#include "base/byte_units.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_test {
namespace {

using testing::MasterHarness;

class MasterTest : public ::testing::Test {
 protected:
  MasterTest() { node_ = h_.AddNode("n1", 16 * kMiB); }
  MasterHarness h_;
  NodeId node_;
};

TEST_F(MasterTest, PutIsInvisibleUntilPutEnd) {
  Result<ReplicaDescriptor> started = h_.PutStart("k", 1000);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  EXPECT_EQ(started->node, node_);
  EXPECT_EQ(started->state, ReplicaState::kProcessing);
  EXPECT_FALSE(h_.Exists("k")->exists);
  EXPECT_EQ(h_.Get("k").status().reason(), ErrorReason::kObjectNotReady);
  ASSERT_TRUE(h_.PutEnd("k").ok());
  EXPECT_TRUE(h_.Exists("k")->exists);
  Result<ObjectReplicas> got = h_.Get("k");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->replicas.size(), 1u);
  EXPECT_EQ(got->replicas[0].tier, Tier::kMemory);
  EXPECT_EQ(got->replicas[0].offset, started->offset);
  EXPECT_EQ(got->size, 1000u);
}

TEST_F(MasterTest, BadInputIsRejectedAndChangesNothing) {
  EXPECT_EQ(h_.PutStart("", 10).status().reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(
      h_.PutStart(std::string(kMaxKeyBytes + 1, 'x'), 10).status().reason(),
      ErrorReason::kInvalidKey);
  EXPECT_EQ(h_.PutStart(std::string("a\0b", 3), 10).status().reason(),
            ErrorReason::kInvalidKey);
  EXPECT_EQ(h_.PutStart("k", 0).status().reason(), ErrorReason::kInvalidSize);
  PutOptions bad_group;
  bad_group.group = GroupSpec{"g", 2, 2};
  EXPECT_EQ(h_.PutStart("k", 10, bad_group).status().reason(),
            ErrorReason::kInvalidGroup);
  EXPECT_EQ(h_.PutStart("k", 64 * kMiB).status().reason(),
            ErrorReason::kNoSpace);
  EXPECT_EQ(h_.Get("").status().reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(h_.master().GetStats().objects, 0u);
  EXPECT_EQ(h_.master().Audit().allocated_memory_bytes, 0u);
  // A key of exactly the limit is fine.
  EXPECT_TRUE(h_.Put(std::string(kMaxKeyBytes, 'x'), 10).ok());
}

TEST_F(MasterTest, RePutIsAlreadyExistsButSameClientRetryIsIdempotent) {
  Result<ReplicaDescriptor> first = h_.PutStart("k", 100);
  ASSERT_TRUE(first.ok());
  Result<ReplicaDescriptor> retry = h_.PutStart("k", 100);
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->id, first->id);
  PutStartRequest other{"k", 100, {}, "other-client"};
  EXPECT_EQ(h_.master().PutStart({&other, 1})[0].status().reason(),
            ErrorReason::kObjectExists);
  ASSERT_TRUE(h_.PutEnd("k").ok());
  EXPECT_EQ(h_.PutStart("k", 100).status().reason(),
            ErrorReason::kObjectExists);
  EXPECT_TRUE(h_.PutEnd("k").ok());  // repeated end is harmless
}

TEST_F(MasterTest, BatchGivesEachKeyItsOwnResult) {
  std::vector<PutStartRequest> batch = {{"a", 10, {}, "c"},
                                        {"", 10, {}, "c"},
                                        {"b", 0, {}, "c"},
                                        {"d", 10, {}, "c"}};
  auto started = h_.master().PutStart(batch);
  ASSERT_EQ(started.size(), 4u);
  EXPECT_TRUE(started[0].ok());
  EXPECT_EQ(started[1].status().reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(started[2].status().reason(), ErrorReason::kInvalidSize);
  EXPECT_TRUE(started[3].ok());
  std::vector<std::string> keys = {"a", "missing", "d"};
  auto ended = h_.master().PutEnd("c", keys);
  EXPECT_TRUE(ended[0].ok());
  EXPECT_EQ(ended[1].reason(), ErrorReason::kObjectNotFound);
  EXPECT_TRUE(ended[2].ok());
  auto exists = h_.master().Exists(keys);
  EXPECT_TRUE(exists[0]->exists);
  EXPECT_FALSE(exists[1]->exists);
  EXPECT_TRUE(exists[2]->exists);
}

TEST_F(MasterTest, RevokeFreesSpaceAndAllowsAFreshPut) {
  ASSERT_TRUE(h_.PutStart("k", 4096).ok());
  EXPECT_GT(h_.master().Audit().allocated_memory_bytes, 0u);
  std::string key = "k";
  ASSERT_TRUE(h_.master().PutRevoke(MasterHarness::kClient, {&key, 1})[0].ok());
  EXPECT_EQ(h_.master().Audit().allocated_memory_bytes, 0u);
  EXPECT_EQ(
      h_.master().PutRevoke(MasterHarness::kClient, {&key, 1})[0].reason(),
      ErrorReason::kObjectNotFound);
  EXPECT_TRUE(h_.Put("k", 4096).ok());
}

TEST_F(MasterTest, StalledPutIsFreedByTheTimeoutOnly) {
  ASSERT_TRUE(h_.PutStart("stalled", 4096).ok());
  h_.clock().Advance(h_.master().config().put_timeout -
                     std::chrono::seconds(1));
  EXPECT_EQ(h_.master().ReapStalledPuts(), 0u);
  h_.clock().Advance(std::chrono::seconds(1));
  EXPECT_EQ(h_.master().ReapStalledPuts(), 1u);
  EXPECT_EQ(h_.PutEnd("stalled").reason(), ErrorReason::kObjectNotFound);
  EXPECT_EQ(h_.master().Audit().allocated_memory_bytes, 0u);
  EXPECT_EQ(h_.master().GetStats().put_timed_out, 1u);
}

TEST_F(MasterTest, LeaseBlocksRemoveUntilItExpiresOrForced) {
  ASSERT_TRUE(h_.Put("k", 100).ok());
  ASSERT_TRUE(h_.Exists("k")->exists);
  // An existence probe grants no lease.
  EXPECT_TRUE(h_.Remove("k").ok());
  ASSERT_TRUE(h_.Put("k", 100).ok());
  ASSERT_TRUE(h_.Get("k").ok());
  EXPECT_EQ(h_.Remove("k").reason(), ErrorReason::kObjectLeased);
  h_.clock().Advance(h_.master().config().lease_ttl);
  EXPECT_TRUE(h_.Remove("k").ok());
  ASSERT_TRUE(h_.Put("k", 100).ok());
  ASSERT_TRUE(h_.Get("k").ok());
  EXPECT_TRUE(h_.Remove("k", /*force=*/true).ok());
  EXPECT_EQ(h_.Remove("k").reason(), ErrorReason::kObjectNotFound);
  // A reader may still read it from its location cache: its range is held
  // until the grant ends (docs/design/location-cache.md).
  EXPECT_EQ(h_.master().Audit().held_memory_bytes, 128u);
  h_.clock().Advance(h_.master().config().EffectiveLocationGrant());
  EXPECT_EQ(h_.master().GetStats().held_memory_bytes, 128u);
  h_.master().Tick();
  EXPECT_EQ(h_.master().Audit().allocated_memory_bytes, 0u);
}

TEST_F(MasterTest, RemoveRefusedWhilePutInFlight) {
  ASSERT_TRUE(h_.PutStart("k", 100).ok());
  EXPECT_EQ(h_.Remove("k", /*force=*/true).reason(), ErrorReason::kObjectBusy);
}

TEST_F(MasterTest, GetCountsHitsAndMisses) {
  ASSERT_TRUE(h_.Put("k", 100).ok());
  ASSERT_TRUE(h_.Get("k").ok());
  EXPECT_FALSE(h_.Get("nope").ok());
  const MasterStats stats = h_.master().GetStats();
  EXPECT_EQ(stats.get_memory_hit, 1u);
  EXPECT_EQ(stats.get_miss, 1u);
  EXPECT_EQ(stats.put_completed, 1u);
  EXPECT_EQ(stats.objects, 1u);
}

TEST(MasterConfigTest, InvalidConfigIsAStartUpError) {
  ManualClock clock;
  MasterConfig config;
  config.shard_count = 3;
  EXPECT_THROW(Master(config, &clock), std::invalid_argument);
  config = MasterConfig();
  config.eviction_ratio = 0.95;
  EXPECT_THROW(Master(config, &clock), std::invalid_argument);
  config = MasterConfig();
  config.first_node_id = kNoNode;
  EXPECT_THROW(Master(config, &clock), std::invalid_argument);
}

TEST(MasterConfigTest, NodeIdsStartAtTheConfiguredId) {
  // What a restarted master does so that stale ids never name a new node.
  ManualClock clock;
  MasterConfig config;
  config.first_node_id = uint64_t{1} << 40;
  Master master(config, &clock);
  NodeSpec spec;
  spec.name = "n1";
  spec.dram_size = 1 << 20;
  Result<NodeId> first = master.RegisterNode(spec, {});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, uint64_t{1} << 40);
  spec.name = "n2";
  Result<NodeId> second = master.RegisterNode(spec, {});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, (uint64_t{1} << 40) + 1);
}

}  // namespace
}  // namespace master_test
}  // namespace mooncake_tier
