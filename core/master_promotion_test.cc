// Promotion on hit in the engine (core/promoter.cc): the trigger,
// the gates in order, the task lifecycle and every way a task can end. Each
// scenario ends with every pin released (Audit total_refcnt == 0).

#include <gtest/gtest.h>

#include "base/byte_units.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_promotion_test {
namespace {

using std::chrono::seconds;
using testing::MasterHarness;

constexpr uint64_t kObj = 4096;

MasterConfig Config(PromotionOptions promotion = {}) {
  MasterConfig c = MasterHarness::DefaultConfig();
  c.promotion = promotion;
  c.promotion.proactive_low_watermark = 0;  // only where a test asks
  return c;
}

SsdInventoryEntry OnSsd(const std::string& key,
                        std::optional<GroupSpec> group = std::nullopt) {
  return {key, kObj, std::move(group)};
}

// What a node does with its promotion tasks.
enum class Outcome { kSucceed, kFailTransfer, kIgnore };

class PromotionTest : public ::testing::Test {
 protected:
  explicit PromotionTest(PromotionOptions promotion = {})
      : h_(Config(promotion)) {}

  NodeId AddNode(const std::string& name, std::vector<SsdInventoryEntry> ssd,
                 uint64_t dram = kMiB) {
    return h_.AddNode(name, dram, 64 * kMiB, std::move(ssd));
  }
  void Read(const std::string& key, int times = 1) {
    for (int i = 0; i < times; ++i) ASSERT_TRUE(h_.Get(key).ok()) << key;
  }
  // Heartbeats `node` and runs its promotion tasks; returns how many.
  size_t Run(NodeId node, Outcome outcome = Outcome::kSucceed) {
    Result<NodeTasks> reply = h_.master().PullTasks(node);
    if (!reply.ok()) return 0;
    for (const Task& task : reply->promotions) {
      if (outcome == Outcome::kIgnore) continue;
      Result<ReplicaDescriptor> staged =
          h_.master().PromotionAllocStart(node, task.id);
      if (!staged.ok()) continue;
      EXPECT_EQ(staged->state, ReplicaState::kProcessing);
      EXPECT_EQ(staged->size, task.source.size);
      Status s = outcome == Outcome::kSucceed
                     ? h_.master().NotifyPromotionSuccess(node, task.id)
                     : h_.master().NotifyPromotionFailure(
                           node, task.id, Status(ErrorReason::kIoError, "x"));
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    return reply->promotions.size();
  }
  // Heartbeats `node`, which must be handed exactly one promotion, and
  // stages it (PromotionAllocStart) without reporting it: *id is its task.
  void StageOnlyPromotion(NodeId node, TaskId* id) {
    Result<NodeTasks> reply = h_.master().PullTasks(node);
    ASSERT_TRUE(reply.ok());
    ASSERT_EQ(reply->promotions.size(), 1u);
    *id = reply->promotions[0].id;
    ASSERT_TRUE(h_.master().PromotionAllocStart(node, *id).ok());
  }
  MasterStats Stats() { return h_.master().GetStats(); }
  void ExpectNoPins() {
    const AuditReport audit = h_.master().Audit();
    EXPECT_TRUE(audit.consistent());
    EXPECT_EQ(audit.total_refcnt, 0u);
    EXPECT_EQ(audit.detached_replicas, 0u);
    EXPECT_EQ(Stats().promotion_in_flight, 0u);
  }

  MasterHarness h_;
};

TEST_F(PromotionTest, RepeatedReadsPromoteAndTheNextReadGetsDram) {
  const NodeId node = AddNode("n", {OnSsd("k")});
  Read("k");
  EXPECT_EQ(Stats().promotion_admission_gated, 1u);  // threshold 2
  EXPECT_EQ(Run(node), 0u);
  Read("k");
  EXPECT_EQ(Stats().promotion_queued, 1u);
  EXPECT_EQ(Run(node), 1u);
  Result<ObjectReplicas> r = h_.Get("k");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->replicas.size(), 2u);
  EXPECT_EQ(r->replicas[0].tier, Tier::kMemory);
  EXPECT_EQ(r->replicas[0].node, node);  // the holder's own segment
  EXPECT_EQ(r->replicas[1].tier, Tier::kLocalDisk);
  const MasterStats s = Stats();
  EXPECT_EQ(s.promotion_attempts, 2u);
  EXPECT_EQ(s.promotion_completed, 1u);
  EXPECT_EQ(s.promotion_bytes, kObj);
  ExpectNoPins();
}

TEST_F(PromotionTest, APromotionIsUsefulOnceItsCopyIsReadFromDram) {
  const NodeId node = AddNode("n", {OnSsd("read"), OnSsd("unread")});
  Read("read", 2);
  Read("unread", 2);
  ASSERT_EQ(Run(node), 2u);
  EXPECT_EQ(Stats().promotion_completed, 2u);
  EXPECT_EQ(Stats().promotion_useful, 0u);
  // The first read from DRAM counts; later ones do not count again.
  ASSERT_TRUE(h_.Get("read").ok());
  ASSERT_TRUE(h_.Get("read").ok());
  EXPECT_EQ(Stats().promotion_useful, 1u);
  ExpectNoPins();
}

TEST_F(PromotionTest, LatencyIsBucketedFromQueuedToCommitted) {
  const NodeId node = AddNode("n", {OnSsd("a"), OnSsd("b")});
  Read("a", 2);
  EXPECT_EQ(Run(node), 1u);  // at once: the first bucket
  Read("b", 2);
  h_.clock().Advance(std::chrono::milliseconds(30));
  EXPECT_EQ(Run(node), 1u);  // 30 ms: the bucket up to 50 ms
  const MasterStats s = Stats();
  uint64_t counted = 0;
  for (uint64_t n : s.promotion_duration_buckets) counted += n;
  EXPECT_EQ(counted, s.promotion_completed);
  EXPECT_EQ(s.promotion_duration_buckets[0], 1u);
  ASSERT_EQ(kPromotionDurationBounds[5], std::chrono::milliseconds(50));
  EXPECT_EQ(s.promotion_duration_buckets[5], 1u);
  EXPECT_EQ(s.promotion_duration_us, 30000u);
  ExpectNoPins();
}

TEST_F(PromotionTest, TheGetPathNeverWaitsAndRepeatsAreDeduplicated) {
  const NodeId node = AddNode("n", {OnSsd("k")});
  Read("k", 5);  // the 2nd queues, the 3rd to 5th find it queued
  EXPECT_EQ(Stats().promotion_queued, 1u);
  EXPECT_EQ(Stats().promotion_deduped, 3u);
  EXPECT_EQ(h_.Tiers("k"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_EQ(Run(node), 1u);
  ExpectNoPins();
}

class PromotionOffTest : public PromotionTest {
 protected:
  static PromotionOptions Off() {
    PromotionOptions o;
    o.on_hit = false;
    return o;
  }
  PromotionOffTest() : PromotionTest(Off()) {}
};

TEST_F(PromotionOffTest, FlagOffNeverPromotes) {
  const NodeId node = AddNode("n", {OnSsd("k")});
  Read("k", 10);
  EXPECT_EQ(Run(node), 0u);
  EXPECT_EQ(Stats().promotion_attempts, 0u);
  EXPECT_EQ(h_.Tiers("k"), std::vector<Tier>{Tier::kLocalDisk});
  // Turned on at run time, it starts promoting.
  PromotionOptions on = h_.master().promotion_options();
  on.on_hit = true;
  ASSERT_TRUE(h_.master().SetPromotionOptions(on).ok());
  Read("k", 2);
  EXPECT_EQ(Run(node), 1u);
  EXPECT_EQ(h_.Tiers("k"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
}

TEST_F(PromotionTest, InvalidOptionsAreRefusedAndChangeNothing) {
  PromotionOptions bad = h_.master().promotion_options();
  bad.admission_threshold = 0;
  Status s = h_.master().SetPromotionOptions(bad);
  EXPECT_EQ(s.reason(), ErrorReason::kInvalidArgument);
  EXPECT_EQ(h_.master().promotion_options().admission_threshold, 2u);
}

TEST_F(PromotionTest, WatermarkGateStopsPromotionUnderDramPressure) {
  // 64 KiB of DRAM, filled to 15/16 (above the 0.90 high watermark).
  const NodeId node = AddNode("n", {OnSsd("k")}, 16 * kObj);
  for (int i = 0; i < 15; ++i) {
    ASSERT_TRUE(h_.Put("fill" + std::to_string(i), kObj).ok());
  }
  Read("k", 3);
  EXPECT_EQ(Stats().promotion_watermark_gated, 2u);
  EXPECT_EQ(Run(node), 0u);
  ExpectNoPins();
}

TEST_F(PromotionTest, PromotionMayTakeDramOverTheHighWatermark) {
  // 64 KiB of DRAM filled to 14/16 with clean units (offload is off: any
  // can be dropped): below the 0.90 high watermark, so no round evicts,
  // and no put comes. A promoted copy takes the node to 15/16; it is
  // admitted, and the next round evicts the least recently used units,
  // not the one just read. (Refused, no hot unit would ever come back into
  // a tier that full.)
  ASSERT_EQ(h_.master().config().offload_mode, OffloadMode::kOff);
  const NodeId node = AddNode("n", {OnSsd("k")}, 16 * kObj);
  for (int i = 0; i < 14; ++i) {
    ASSERT_TRUE(h_.Put("fill" + std::to_string(i), kObj).ok());
  }
  h_.master().EvictMemory();  // a round sees them clean; it evicts nothing
  ASSERT_EQ(Stats().evicted_memory_objects, 0u);
  Read("k", 2);
  EXPECT_EQ(Stats().promotion_watermark_gated, 0u);
  EXPECT_EQ(Run(node), 1u);
  EXPECT_EQ(Stats().promotion_completed, 1u);
  h_.master().EvictMemory();
  Result<ObjectReplicas> r = h_.Get("k");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->replicas[0].tier, Tier::kMemory);
  ExpectNoPins();
}

TEST_F(PromotionTest, PromotionNeverTakesTheRoomOfDirtyUnits) {
  // The same full DRAM, but every unit waits for writeback: dropping one
  // would cost a write, and that room is the writers'.
  MasterConfig c = Config();
  c.offload_mode = OffloadMode::kOnEvict;
  MasterHarness h(c);
  const NodeId node = h.AddNode("n", 16 * kObj, 64 * kMiB, {OnSsd("k")});
  for (int i = 0; i < 16; ++i) {
    ASSERT_TRUE(h.Put("fill" + std::to_string(i), kObj).ok());
  }
  h.master().EvictMemory();
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(h.Get("k").ok());
  EXPECT_EQ(h.master().GetStats().promotion_queued, 0u);
  EXPECT_GE(h.master().GetStats().promotion_watermark_gated, 1u);
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  EXPECT_TRUE(reply->promotions.empty());
}

class PromotionQueueTest : public PromotionTest {
 protected:
  static PromotionOptions Small() {
    PromotionOptions o;
    o.queue_limit = 3;
    o.admission_threshold = 1;
    return o;
  }
  PromotionQueueTest() : PromotionTest(Small()) {}
};

TEST_F(PromotionQueueTest, BurstOfDistinctKeysStopsAtTheQueueLimit) {
  std::vector<SsdInventoryEntry> ssd;
  for (int i = 0; i < 10; ++i) ssd.push_back(OnSsd("k" + std::to_string(i)));
  const NodeId node = AddNode("n", ssd);
  for (int i = 0; i < 10; ++i) Read("k" + std::to_string(i));
  EXPECT_EQ(Stats().promotion_queued, 3u);
  EXPECT_EQ(Stats().promotion_queue_full, 7u);
  EXPECT_EQ(Stats().promotion_in_flight, 3u);
  EXPECT_EQ(Run(node), 3u);
  ExpectNoPins();
  // Room again.
  Read("k9");
  EXPECT_EQ(Stats().promotion_queued, 4u);
}

TEST_F(PromotionTest, PinnedSourceSurvivesSsdEviction) {
  MasterConfig c = Config();
  c.ssd_high_watermark = 0.5;
  c.ssd_eviction_ratio = 0.4;
  MasterHarness h(c);
  const NodeId node = h.AddNode("n", kMiB, 2 * kObj, {OnSsd("a"), OnSsd("b")});
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(h.Get("a").ok());
  EXPECT_EQ(h.master().GetStats().promotion_queued, 1u);
  h.clock().Advance(c.lease_ttl + seconds(1));
  h.master().EvictSsd();
  EXPECT_EQ(h.Tiers("a"), std::vector<Tier>{Tier::kLocalDisk});  // pinned
  EXPECT_TRUE(h.Tiers("b").empty());                             // evicted
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->promotions.size(), 1u);
  ASSERT_TRUE(
      h.master().PromotionAllocStart(node, reply->promotions[0].id).ok());
  ASSERT_TRUE(
      h.master().NotifyPromotionSuccess(node, reply->promotions[0].id).ok());
  EXPECT_EQ(h.master().Audit().total_refcnt, 0u);
}

TEST_F(PromotionTest, AllocationFailureSettlesTheTask) {
  const NodeId node = AddNode("n", {OnSsd("k")}, 16 * kObj);
  Read("k", 2);
  ASSERT_EQ(Stats().promotion_queued, 1u);
  // DRAM fills up between the gate and the allocation.
  for (int i = 0; i < 16; ++i) {
    ASSERT_TRUE(h_.Put("fill" + std::to_string(i), kObj).ok());
  }
  Result<NodeTasks> reply = h_.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->promotions.size(), 1u);
  Result<ReplicaDescriptor> staged =
      h_.master().PromotionAllocStart(node, reply->promotions[0].id);
  EXPECT_EQ(staged.status().reason(), ErrorReason::kNoSpace);
  EXPECT_EQ(Stats().promotion_alloc_failed, 1u);
  // The node reports nothing more; a late report finds nothing.
  EXPECT_EQ(h_.master()
                .NotifyPromotionSuccess(node, reply->promotions[0].id)
                .reason(),
            ErrorReason::kTaskNotFound);
  ExpectNoPins();
}

// A node that reports a promotion's id through the offload calls is
// refused, and the promotion goes on as if nothing had been said.
TEST_F(PromotionTest, APromotionReportedAsAnOffloadIsRefused) {
  const NodeId node = AddNode("n", {OnSsd("k")});
  Read("k", 2);
  TaskId id = 0;
  ASSERT_NO_FATAL_FAILURE(StageOnlyPromotion(node, &id));
  EXPECT_EQ(h_.master().NotifyOffloadSuccess(node, id).reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(
      h_.master()
          .NotifyOffloadFailure(node, id, Status(ErrorReason::kIoError, "x"))
          .reason(),
      ErrorReason::kTaskNotFound);
  EXPECT_EQ(Stats().promotion_in_flight, 1u);
  EXPECT_EQ(Stats().offload_completed, 0u);
  EXPECT_TRUE(h_.master().NotifyPromotionSuccess(node, id).ok());
  EXPECT_EQ(h_.Tiers("k"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  ExpectNoPins();
}

TEST_F(PromotionTest, TransferFailureFreesTheStagedCopy) {
  const NodeId node = AddNode("n", {OnSsd("k")});
  Read("k", 2);
  EXPECT_EQ(Run(node, Outcome::kFailTransfer), 1u);
  EXPECT_EQ(Stats().promotion_transfer_failed, 1u);
  EXPECT_EQ(h_.Tiers("k"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_EQ(Stats().memory.used, 0u);
  ExpectNoPins();
}

TEST_F(PromotionTest, TimedOutTasksAreReaped) {
  const NodeId node = AddNode("n", {OnSsd("k")});
  Read("k", 2);
  TaskId id = 0;
  ASSERT_NO_FATAL_FAILURE(StageOnlyPromotion(node, &id));
  h_.clock().Advance(h_.master().promotion_options().task_timeout - seconds(1));
  EXPECT_EQ(h_.master().ReapPromotionTasks(), 0u);
  h_.clock().Advance(seconds(1));
  EXPECT_EQ(h_.master().ReapPromotionTasks(), 1u);
  EXPECT_EQ(Stats().promotion_timeout, 1u);
  EXPECT_EQ(h_.master().NotifyPromotionSuccess(node, id).reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(Stats().memory.used, 0u);
  ExpectNoPins();
}

TEST_F(PromotionTest, DeadNodesTasksAreReapedWithIt) {
  const NodeId holder = AddNode("holder", {OnSsd("k")}, kObj / 2);
  AddNode("other", {});
  Read("k", 2);
  Result<NodeTasks> reply = h_.master().PullTasks(holder);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->promotions.size(), 1u);
  // The holder has no room: the staged copy lands on the other node.
  Result<ReplicaDescriptor> staged =
      h_.master().PromotionAllocStart(holder, reply->promotions[0].id);
  ASSERT_TRUE(staged.ok());
  EXPECT_NE(staged->node, holder);
  h_.clock().Advance(h_.master().config().node_ttl);
  ASSERT_TRUE(h_.master().Heartbeat(staged->node).ok());  // the other lives
  EXPECT_EQ(h_.master().ExpireNodes(), 1u);
  EXPECT_EQ(Stats().promotion_node_lost, 1u);
  EXPECT_EQ(Stats().memory.used, 0u);  // the staged copy was freed
  EXPECT_TRUE(h_.Tiers("k").empty());  // its only copy died with the node
  ExpectNoPins();
}

TEST_F(PromotionTest, RemovalMidFlightCommitsNothingAndLeaksNothing) {
  const NodeId node = AddNode("n", {OnSsd("k")});
  Read("k", 2);
  TaskId task = 0;
  ASSERT_NO_FATAL_FAILURE(StageOnlyPromotion(node, &task));
  EXPECT_TRUE(h_.Remove("k", /*force=*/true).ok());  // not blocked by it
  EXPECT_TRUE(h_.master().NotifyPromotionSuccess(node, task).ok());
  EXPECT_EQ(Stats().promotion_completed, 0u);
  EXPECT_EQ(Stats().promotion_source_lost, 1u);
  EXPECT_FALSE(h_.Get("k").ok());
  EXPECT_EQ(Stats().memory.used, 0u);
  ExpectNoPins();
}

TEST_F(PromotionTest, ForcedPromotionBypassesAdmission) {
  const NodeId node =
      AddNode("n", {OnSsd("k"), OnSsd("m", GroupSpec{"g", 1, 0})});
  Result<std::vector<TaskId>> ids = h_.master().PromoteObject("k");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->size(), 1u);
  EXPECT_EQ(h_.master().PromoteObject("k").status().reason(),
            ErrorReason::kObjectBusy);
  EXPECT_EQ(h_.master().PromoteObject("none").status().reason(),
            ErrorReason::kObjectNotFound);
  EXPECT_EQ(h_.master().PromoteGroup("none").status().reason(),
            ErrorReason::kGroupNotFound);
  EXPECT_TRUE(h_.master().PromoteObject("m").ok());  // its group, whole
  EXPECT_EQ(Run(node), 2u);
  EXPECT_EQ(h_.master().PromoteObject("k").status().reason(),
            ErrorReason::kNotApplicable);  // already in DRAM
  EXPECT_EQ(Stats().promotion_forced, 2u);
  ExpectNoPins();
}

class DropSourceTest : public PromotionTest {
 protected:
  static PromotionOptions Drop() {
    PromotionOptions o;
    o.drop_source = true;
    return o;
  }
  DropSourceTest() : PromotionTest(Drop()) {}
};

TEST_F(DropSourceTest, SsdCopyIsDroppedAfterPromotion) {
  const NodeId node = AddNode("n", {OnSsd("k")});
  Read("k", 2);
  h_.clock().Advance(h_.master().config().lease_ttl);  // readers gone
  EXPECT_EQ(Run(node), 1u);
  EXPECT_EQ(h_.Tiers("k"), std::vector<Tier>{Tier::kMemory});
  EXPECT_EQ(Stats().promotion_dropped_sources, 1u);
  Result<NodeTasks> reply = h_.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->ssd_deletes, std::vector<std::string>{"k"});
  ExpectNoPins();
}

std::vector<SsdInventoryEntry> Group(const std::string& id, uint32_t n) {
  std::vector<SsdInventoryEntry> out;
  for (uint32_t i = 0; i < n; ++i) {
    out.push_back(OnSsd(id + "/" + std::to_string(i), GroupSpec{id, n, i}));
  }
  return out;
}

TEST_F(PromotionTest, GroupsArePromotedWholeAndCommitTogether) {
  const NodeId node = AddNode("n", Group("g", 4));
  Read("g/0");
  Read("g/3");  // the sketch counts the group: 2 reads of it
  EXPECT_EQ(Stats().promotion_queued, 4u);
  Result<NodeTasks> reply = h_.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->promotions.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const TaskId id = reply->promotions[i].id;
    ASSERT_TRUE(h_.master().PromotionAllocStart(node, id).ok());
    ASSERT_TRUE(h_.master().NotifyPromotionSuccess(node, id).ok());
    // Until the last member lands no member is in DRAM.
    for (uint32_t m = 0; m < 4; ++m) {
      const std::vector<Tier> tiers = h_.Tiers("g/" + std::to_string(m));
      EXPECT_EQ(tiers.size(), i == 3 ? 2u : 1u)
          << "after " << i << " member " << m;
    }
  }
  EXPECT_EQ(Stats().promotion_completed, 4u);
  ExpectNoPins();
}

TEST_F(PromotionTest, OneFailedMemberAbandonsItsGroupsPromotion) {
  const NodeId node = AddNode("n", Group("g", 3));
  Read("g/1", 2);
  Result<NodeTasks> reply = h_.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->promotions.size(), 3u);
  const auto& t = reply->promotions;
  ASSERT_TRUE(h_.master().PromotionAllocStart(node, t[0].id).ok());
  ASSERT_TRUE(h_.master().NotifyPromotionSuccess(node, t[0].id).ok());
  ASSERT_TRUE(h_.master().PromotionAllocStart(node, t[1].id).ok());
  ASSERT_TRUE(h_.master()
                  .NotifyPromotionFailure(node, t[1].id,
                                          Status(ErrorReason::kIoError, "x"))
                  .ok());
  EXPECT_EQ(Stats().promotion_transfer_failed, 3u);
  EXPECT_EQ(h_.master().PromotionAllocStart(node, t[2].id).status().reason(),
            ErrorReason::kTaskNotFound);
  for (uint32_t m = 0; m < 3; ++m) {
    EXPECT_EQ(h_.Tiers("g/" + std::to_string(m)),
              std::vector<Tier>{Tier::kLocalDisk});
  }
  EXPECT_EQ(Stats().memory.used, 0u);
  ExpectNoPins();
}

TEST_F(PromotionTest, AFailedMemberLeavesSiblingsBeingWrittenTheirDram) {
  // The node may still be writing a sibling's bytes into its staged DRAM
  // when another member fails: that DRAM must not be handed to a put
  // before the node is done (it was, and the late bytes overwrote the
  // put's). The sibling ends when its node reports, committing nothing.
  const NodeId node = AddNode("n", Group("g", 3));
  Read("g/1", 2);
  Result<NodeTasks> reply = h_.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->promotions.size(), 3u);
  const auto& t = reply->promotions;
  Result<ReplicaDescriptor> writing =
      h_.master().PromotionAllocStart(node, t[0].id);
  ASSERT_TRUE(writing.ok());
  ASSERT_TRUE(h_.master().PromotionAllocStart(node, t[1].id).ok());
  ASSERT_TRUE(h_.master()
                  .NotifyPromotionFailure(node, t[1].id,
                                          Status(ErrorReason::kIoError, "x"))
                  .ok());
  EXPECT_EQ(Stats().promotion_transfer_failed, 3u);
  // t[0]'s staged DRAM is still allocated: no put can land on it.
  EXPECT_EQ(Stats().memory.used, writing->size);
  Result<ReplicaDescriptor> other = h_.Put("other", writing->size);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_FALSE(other->node == writing->node &&
               other->offset < writing->offset + writing->size &&
               writing->offset < other->offset + other->size)
      << "the put landed on bytes still being written";
  // Its node is done: it ends, committing nothing, freeing the DRAM.
  EXPECT_TRUE(h_.master().NotifyPromotionSuccess(node, t[0].id).ok());
  for (uint32_t m = 0; m < 3; ++m) {
    EXPECT_EQ(h_.Tiers("g/" + std::to_string(m)),
              std::vector<Tier>{Tier::kLocalDisk});
  }
  EXPECT_EQ(Stats().promotion_transfer_failed, 3u);  // counted once
  EXPECT_TRUE(h_.master().ListTasks(TaskKind::kPromotion).empty());
  ASSERT_TRUE(h_.Remove("other").ok());
  EXPECT_EQ(Stats().memory.used, 0u);
  ExpectNoPins();
}

TEST_F(PromotionTest, ASiblingBeingWrittenThatNeverReportsEndsAtTheTimeout) {
  const NodeId node = AddNode("n", Group("g", 2));
  Read("g/1", 2);
  Result<NodeTasks> reply = h_.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->promotions.size(), 2u);
  const auto& t = reply->promotions;
  ASSERT_TRUE(h_.master().PromotionAllocStart(node, t[0].id).ok());
  ASSERT_TRUE(h_.master()
                  .NotifyPromotionFailure(node, t[1].id,
                                          Status(ErrorReason::kIoError, "x"))
                  .ok());
  EXPECT_GT(Stats().memory.used, 0u);
  h_.clock().Advance(std::chrono::seconds(31));  // past task_timeout
  h_.master().ReapPromotionTasks();
  EXPECT_EQ(Stats().memory.used, 0u);
  EXPECT_EQ(Stats().promotion_transfer_failed, 2u);
  EXPECT_EQ(Stats().promotion_timeout, 0u);  // counted with its group
  EXPECT_TRUE(h_.master().ListTasks(TaskKind::kPromotion).empty());
  ExpectNoPins();
}

class TinyLfuTest : public PromotionTest {
 protected:
  static PromotionOptions TinyLfu() {
    PromotionOptions o;
    o.policy = PromotionPolicy::kTinyLfu;
    return o;
  }
  TinyLfuTest() : PromotionTest(TinyLfu()) {}
};

TEST_F(TinyLfuTest, ColdCandidateDoesNotDisplaceHotResidents) {
  // DRAM of 16 objects holding 13 hot ones: at 0.81, a promotion would push
  // it past the eviction target of 0.85 and displace a resident.
  const NodeId node = AddNode("n", {OnSsd("cold"), OnSsd("warm")}, 16 * kObj);
  for (int i = 0; i < 13; ++i) {
    const std::string key = "hot" + std::to_string(i);
    ASSERT_TRUE(h_.Put(key, kObj).ok());
    Read(key, 10);
  }
  h_.clock().Advance(h_.master().config().lease_ttl);
  Read("cold", 3);
  EXPECT_EQ(Stats().promotion_queued, 0u);
  EXPECT_GE(Stats().promotion_admission_gated, 2u);
  // A candidate read more often than the residents gets in.
  Read("warm", 12);
  EXPECT_EQ(Stats().promotion_queued, 1u);
  EXPECT_EQ(Run(node), 1u);
  ExpectNoPins();
}

TEST_F(TinyLfuTest, WithRoomInDramTheThresholdAloneDecides) {
  const NodeId node = AddNode("n", {OnSsd("k")});
  Read("k", 2);
  EXPECT_EQ(Run(node), 1u);
  ExpectNoPins();
}

TEST(ProactiveTest, HottestSsdOnlyObjectsArePromotedWhileDramIsLow) {
  MasterConfig c = Config();
  // Reads feed the sketch but never reach this threshold: only the
  // proactive step promotes.
  c.promotion.admission_threshold = 100;
  c.promotion.proactive_low_watermark = 0.5;
  c.promotion.proactive_max_per_step = 1;
  MasterHarness h(c);
  const NodeId node =
      h.AddNode("n", kMiB, 64 * kMiB, {OnSsd("a"), OnSsd("b"), OnSsd("c")});
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(h.Get("b").ok());
  ASSERT_TRUE(h.Get("a").ok());
  EXPECT_EQ(h.master().GetStats().promotion_queued, 0u);
  EXPECT_EQ(h.master().PromoteProactively(), 1u);
  EXPECT_EQ(h.master().PromoteProactively(), 0u);  // once per interval
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->promotions.size(), 1u);
  EXPECT_EQ(reply->promotions[0].key, "b");  // the hottest
  h.clock().Advance(c.promotion.proactive_interval);
  EXPECT_EQ(h.master().PromoteProactively(), 1u);  // then "a"; "c" unread
  h.clock().Advance(c.promotion.proactive_interval);
  EXPECT_EQ(h.master().PromoteProactively(), 0u);
  EXPECT_EQ(h.master().GetStats().promotion_proactive, 2u);
}

}  // namespace
}  // namespace master_promotion_test
}  // namespace mooncake_tier
