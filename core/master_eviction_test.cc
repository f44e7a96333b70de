#include <gtest/gtest.h>

#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_eviction_test {
namespace {

using testing::MasterHarness;

constexpr uint64_t kObj = 1024;         // every object: 1 KiB
constexpr uint64_t kDram = 100 * kObj;  // room for 100 objects
constexpr std::chrono::seconds kSec(1);

MasterConfig WithMode(OffloadMode mode) {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.offload_mode = mode;
  return config;
}

std::string Key(int i) { return "k" + std::to_string(i); }

// Fills DRAM to `count` objects, one per simulated second (oldest = k0).
void Fill(MasterHarness& h, int count) {
  for (int i = 0; i < count; ++i) {
    ASSERT_TRUE(h.Put(Key(i), kObj).ok()) << i;
    h.clock().Advance(kSec);
  }
}

// On-evict offload and the SSD tier evicting by `policy`, from 90 % of its
// capacity down to 85 %.
MasterConfig SsdPolicy(EvictionPolicyKind policy) {
  MasterConfig config = WithMode(OffloadMode::kOnEvict);
  config.ssd_eviction_policy = policy;
  config.ssd_high_watermark = 0.9;
  config.ssd_eviction_ratio = 0.05;
  return config;
}

// Puts `key` and moves it to SSD (offloaded, DRAM copy dropped): it enters
// the SSD tier now.
void PutOnSsdOnly(MasterHarness& h, NodeId node, const std::string& key,
                  PutOptions options = {}) {
  ASSERT_TRUE(h.Put(key, kObj, std::move(options)).ok()) << key;
  ASSERT_TRUE(h.master().EvictObject(key).ok()) << key;
  ASSERT_EQ(h.CompleteOffloads(node), 1u) << key;
  ASSERT_EQ(h.Tiers(key), std::vector<Tier>{Tier::kLocalDisk}) << key;
}

// On an SSD with room for ten: k0 enters and is read once (its lease runs
// out), then k1..k9 enter and are never read. Returns the node.
NodeId ReadOneThenNineOneTimeBlocks(MasterHarness& h) {
  const NodeId node = h.AddNode("n", kDram, 10 * kObj);
  PutOnSsdOnly(h, node, Key(0));
  h.clock().Advance(kSec);
  EXPECT_TRUE(h.Get(Key(0)).ok());
  h.clock().Advance(h.master().config().lease_ttl);
  for (int i = 1; i < 10; ++i) {
    PutOnSsdOnly(h, node, Key(i));
    h.clock().Advance(kSec);
  }
  return node;
}

// The SSD above must give up two blocks. Returns whether k0 survived, and
// checks that exactly two left.
bool ReReadBlockSurvivesOneTimeBlocks(EvictionPolicyKind policy) {
  MasterHarness h(SsdPolicy(policy));
  ReadOneThenNineOneTimeBlocks(h);
  EXPECT_EQ(h.master().EvictSsd(), 2 * kObj);
  int left = 0;
  for (int i = 0; i < 10; ++i) left += h.Exists(Key(i))->exists ? 1 : 0;
  EXPECT_EQ(left, 8);
  EXPECT_TRUE(h.master().Audit().consistent());
  return h.Exists(Key(0))->exists;
}

TEST(MasterEvictionTest, NothingHappensBelowTheHighWatermark) {
  MasterHarness h;
  h.AddNode("n", kDram);
  Fill(h, 89);
  EXPECT_EQ(h.master().EvictMemory(), 0u);
  EXPECT_EQ(h.master().GetStats().objects, 89u);
}

TEST(MasterEvictionTest, EvictsTheLeastRecentlyUsedDownByTheRatio) {
  MasterHarness h;
  h.AddNode("n", kDram);
  Fill(h, 95);
  ASSERT_TRUE(h.Get(Key(0)).ok());  // k0 becomes the most recent
  h.clock().Advance(h.master().config().lease_ttl);
  const uint64_t freed = h.master().EvictMemory();
  // 95% used -> target 85%: ten objects go.
  EXPECT_EQ(freed, 10 * kObj);
  EXPECT_TRUE(h.Exists(Key(0))->exists);
  for (int i = 1; i <= 10; ++i) EXPECT_FALSE(h.Exists(Key(i))->exists) << i;
  EXPECT_TRUE(h.Exists(Key(11))->exists);
  EXPECT_TRUE(h.master().Audit().consistent());
  EXPECT_EQ(h.master().GetStats().evicted_memory_objects, 10u);
}

TEST(MasterEvictionTest, NeverTouchesLeasedPinnedProcessingOrBusy) {
  MasterHarness h(WithMode(OffloadMode::kWriteThrough));
  const NodeId node = h.AddNode("n", kDram, 1000 * kObj);
  // k0: busy (write-through offload in flight, source pinned).
  ASSERT_TRUE(h.Put(Key(0), kObj).ok());
  // k1: processing (put not ended).
  ASSERT_TRUE(h.PutStart(Key(1), kObj).ok());
  // k2: hard pinned.
  PutOptions pinned;
  pinned.hard_pin = true;
  ASSERT_TRUE(h.Put(Key(2), kObj, pinned).ok());
  // k3: leased by a reader (after its offload landed).
  ASSERT_TRUE(h.Put(Key(3), kObj).ok());
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->offloads.size(), 3u);  // k0, k2, k3
  for (const Task& t : reply->offloads) {
    if (t.key != Key(0)) {
      ASSERT_TRUE(h.master().NotifyOffloadSuccess(node, t.id).ok());
    }
  }
  h.clock().Advance(kSec);
  // Fill the rest; everything else is older-or-newer but unprotected.
  for (int i = 4; i < 96; ++i) ASSERT_TRUE(h.Put(Key(i), kObj).ok());
  while (h.CompleteOffloads(node) > 0) {
  }
  ASSERT_TRUE(h.Get(Key(3)).ok());
  // Ask for more than everything: all that may go, goes.
  h.master().EvictMemory(kDram);
  EXPECT_EQ(h.Tiers(Key(0)).front(), Tier::kMemory);
  EXPECT_TRUE(h.master().DescribeObject(Key(1)).ok());
  EXPECT_EQ(h.Tiers(Key(2)).front(), Tier::kMemory);
  EXPECT_EQ(h.Tiers(Key(3)).front(), Tier::kMemory);
  EXPECT_NE(h.Tiers(Key(50)).front(), Tier::kMemory);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterEvictionTest, OffModeDropsTheObject) {
  MasterHarness h(WithMode(OffloadMode::kOff));
  h.AddNode("n", kDram, 1000 * kObj);
  Fill(h, 95);
  h.master().EvictMemory();
  EXPECT_FALSE(h.Exists(Key(0))->exists);
  EXPECT_EQ(h.master().GetStats().offload_queued, 0u);
  EXPECT_EQ(h.master().GetStats().objects_evicted, 10u);
}

TEST(MasterEvictionTest, OnEvictOffloadsFirstThenDropsDram) {
  MasterHarness h(WithMode(OffloadMode::kOnEvict));
  const NodeId node = h.AddNode("n", kDram, 1000 * kObj);
  Fill(h, 95);
  EXPECT_EQ(h.master().EvictMemory(), 10 * kObj);
  // Still in DRAM until the node has written the SSD copy.
  EXPECT_EQ(h.Tiers(Key(0)), std::vector<Tier>{Tier::kMemory});
  // A second round does not queue more: those bytes are already on the way.
  EXPECT_EQ(h.master().EvictMemory(), 0u);
  EXPECT_EQ(h.CompleteOffloads(node), 10u);
  EXPECT_EQ(h.Tiers(Key(0)), std::vector<Tier>{Tier::kLocalDisk});
  Result<ObjectReplicas> got = h.Get(Key(0));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->replicas[0].tier, Tier::kLocalDisk);
  EXPECT_EQ(h.master().GetStats().get_local_disk_hit, 1u);
  const AuditReport audit = h.master().Audit();
  EXPECT_TRUE(audit.consistent());
  EXPECT_EQ(audit.total_refcnt, 0u);
  EXPECT_EQ(audit.ssd_used_bytes, 10 * kObj);
}

TEST(MasterEvictionTest, FailedOnEvictOffloadKeepsTheDramCopy) {
  MasterHarness h(WithMode(OffloadMode::kOnEvict));
  const NodeId node = h.AddNode("n", kDram, 1000 * kObj);
  Fill(h, 95);
  h.master().EvictMemory();
  EXPECT_EQ(h.CompleteOffloads(node, /*succeed=*/false), 10u);
  EXPECT_EQ(h.Tiers(Key(0)), std::vector<Tier>{Tier::kMemory});
  EXPECT_EQ(h.master().GetStats().offload_failed, 10u);
  EXPECT_EQ(h.master().Audit().total_refcnt, 0u);
}

TEST(MasterEvictionTest, WriteThroughOffloadsAtPutEnd) {
  MasterHarness h(WithMode(OffloadMode::kWriteThrough));
  const NodeId node = h.AddNode("n", kDram, 1000 * kObj);
  ASSERT_TRUE(h.Put("k", kObj).ok());
  EXPECT_EQ(h.master().GetStats().offload_queued, 1u);
  EXPECT_EQ(h.CompleteOffloads(node), 1u);
  EXPECT_EQ(h.Tiers("k"), (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
}

TEST(MasterEvictionTest, SsdTierEvictsItsLeastRecentAndTellsTheNode) {
  MasterHarness h(SsdPolicy(EvictionPolicyKind::kLru));
  const NodeId node = h.AddNode("n", kDram, 20 * kObj);
  Fill(h, 95);
  h.master().EvictMemory();  // k0..k9 offloaded
  ASSERT_EQ(h.CompleteOffloads(node), 10u);
  for (int i = 95; i < 105; ++i) {  // push 10 more through
    ASSERT_TRUE(h.Put(Key(i), kObj).ok());
    h.clock().Advance(kSec);
  }
  h.master().EvictMemory();
  ASSERT_EQ(h.CompleteOffloads(node), 10u);
  // SSD now holds 20 of 20: evict down to 85%.
  EXPECT_EQ(h.master().EvictSsd(), 3 * kObj);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(h.Exists(Key(i))->exists) << i;
  EXPECT_TRUE(h.Exists(Key(3))->exists);
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->ssd_deletes.size(), 3u);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterEvictionTest, ClockKeepsABlockReadSinceItEnteredOverOneTimeBlocks) {
  EXPECT_TRUE(ReReadBlockSurvivesOneTimeBlocks(EvictionPolicyKind::kClock));
}

TEST(MasterEvictionTest, LruEvictsAReReadBlockOnceItIsTheLeastRecent) {
  // The baseline: k0's read is older than the one-time blocks' puts.
  EXPECT_FALSE(ReReadBlockSurvivesOneTimeBlocks(EvictionPolicyKind::kLru));
}

TEST(MasterEvictionTest, ClockReinsertsOnceThenEvictsABlockNotReadAgain) {
  MasterHarness h(SsdPolicy(EvictionPolicyKind::kClock));
  const NodeId node = ReadOneThenNineOneTimeBlocks(h);
  ASSERT_EQ(h.master().EvictSsd(), 2 * kObj);  // k1, k2; k0 another turn
  EXPECT_EQ(h.master().GetStats().ssd_reinserted_objects, 1u);
  // k0 now entered after k9: seven more blocks later it is the oldest
  // unread unit and goes first.
  for (int i = 10; i < 12; ++i) {
    PutOnSsdOnly(h, node, Key(i));
    h.clock().Advance(kSec);
  }
  ASSERT_EQ(h.master().EvictSsd(), 2 * kObj);  // k3, k4
  EXPECT_TRUE(h.Exists(Key(0))->exists);
  for (int i = 12; i < 20; ++i) {
    PutOnSsdOnly(h, node, Key(i));
    h.clock().Advance(kSec);
    h.master().EvictSsd();
  }
  EXPECT_FALSE(h.Exists(Key(0))->exists);
  EXPECT_EQ(h.master().GetStats().ssd_reinserted_objects, 1u);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterEvictionTest, ClockGivesAGroupAnotherTurnWhole) {
  MasterHarness h(SsdPolicy(EvictionPolicyKind::kClock));
  const NodeId node = h.AddNode("n", kDram, 10 * kObj);
  // Group g of two members enters first; one member is read.
  for (uint32_t m = 0; m < 2; ++m) {
    PutOptions member;
    member.group = GroupSpec{"g", 2, m};
    ASSERT_TRUE(h.Put("g/" + std::to_string(m), kObj, member).ok());
  }
  ASSERT_TRUE(h.master().EvictGroup("g").ok());
  ASSERT_EQ(h.CompleteOffloads(node), 2u);
  h.clock().Advance(kSec);
  ASSERT_TRUE(h.Get("g/1").ok());
  h.clock().Advance(h.master().config().lease_ttl);
  for (int i = 0; i < 8; ++i) {
    PutOnSsdOnly(h, node, Key(i));
    h.clock().Advance(kSec);
  }
  ASSERT_EQ(h.master().EvictSsd(), 2 * kObj);
  // The group stays whole: neither member went, k0 and k1 did.
  EXPECT_EQ(h.Tiers("g/0"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_EQ(h.Tiers("g/1"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_FALSE(h.Exists(Key(0))->exists);
  EXPECT_FALSE(h.Exists(Key(1))->exists);
  EXPECT_EQ(h.master().GetStats().group_counters.groups_reinserted_disk, 1u);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterEvictionTest, FullStoreEvictsToMakeRoomForAPut) {
  MasterHarness h;
  h.AddNode("n", kDram);
  Fill(h, 100);
  EXPECT_TRUE(h.Put("late", kObj).ok());
  EXPECT_FALSE(h.Exists(Key(0))->exists);
}

}  // namespace
}  // namespace master_eviction_test
}  // namespace mooncake_tier
