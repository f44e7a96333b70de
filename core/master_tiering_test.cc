// The DRAM tier as one pipeline (core/tiering.cc): writeback ahead
// of need, the clean reserve a put drops victims from, puts that wait for
// room instead of failing, pressure per node, offloads that back off from a
// full SSD, leases that end when readers release them, and work pulled by
// nodes as it is made. Time is a ManualClock.

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/master.h"
#include "tests/support/eventually.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_tiering_test {
namespace {

using testing::Eventually;
using testing::MasterHarness;

constexpr uint64_t kObj = 1024;         // every object: 1 KiB
constexpr uint64_t kDram = 100 * kObj;  // room for 100 objects
constexpr uint64_t kSsd = 10 * 1024 * kObj;
constexpr std::chrono::seconds kSec(1);

MasterConfig OnEvict() {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.offload_mode = OffloadMode::kOnEvict;
  return config;
}

std::string Key(int i) { return "k" + std::to_string(i); }

// Puts keys [first, last), one per simulated second (the first is coldest).
void Fill(MasterHarness& h, int first, int last, PutOptions options = {}) {
  for (int i = first; i < last; ++i) {
    ASSERT_TRUE(h.Put(Key(i), kObj, options).ok()) << i;
    h.clock().Advance(kSec);
  }
}

// Runs every offload the node has (a pull hands out at most 16).
size_t CompleteAll(MasterHarness& h, NodeId node) {
  size_t done = 0;
  while (size_t n = h.CompleteOffloads(node)) done += n;
  return done;
}

NodeMemoryView Memory(Master& master, NodeId node) {
  for (const NodeMemoryView& view : master.MemoryByNode()) {
    if (view.node == node) return view;
  }
  return {};
}

std::vector<std::string> OffloadKeys(Master& master) {
  std::vector<std::string> keys;
  for (const Task& t : master.ListTasks(TaskKind::kOffload)) {
    keys.push_back(t.key);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

TEST(MasterTieringTest, WritesBackTheColdestAboveTheWritebackWatermark) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kDram, kSsd);
  Fill(h, 0, 80);
  // 80 KiB unwritten over a 70 KiB watermark: the 10 coldest go to SSD.
  EXPECT_EQ(h.master().WriteBack(), 10 * kObj);
  std::vector<std::string> expected;
  for (int i = 0; i < 10; ++i) expected.push_back(Key(i));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(OffloadKeys(h.master()), expected);
  EXPECT_EQ(h.Tiers(Key(0)), std::vector<Tier>{Tier::kMemory});
  // Queued work is not queued twice.
  EXPECT_EQ(h.master().WriteBack(), 0u);
  EXPECT_EQ(h.CompleteOffloads(node), 10u);
  // Copies: still in DRAM, now clean (droppable at once).
  EXPECT_EQ(h.Tiers(Key(0)),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  EXPECT_EQ(h.master().WriteBack(), 0u);
  const NodeMemoryView view = Memory(h.master(), node);
  EXPECT_EQ(view.bytes.clean, 10 * kObj);
  EXPECT_EQ(view.bytes.dirty, 70 * kObj);
  EXPECT_EQ(h.master().GetStats().writeback_completed, 10u);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterTieringTest, GroupsAreWrittenBackWhole) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kDram, kSsd);
  // 20 groups of 4, the oldest first.
  for (int g = 0; g < 20; ++g) {
    for (uint32_t m = 0; m < 4; ++m) {
      PutOptions options;
      options.group = GroupSpec{"g" + std::to_string(g), 4, m};
      ASSERT_TRUE(h.Put(Key(g * 4 + static_cast<int>(m)), kObj, options).ok());
    }
    h.clock().Advance(kSec);
  }
  // 80 KiB unwritten, 10 KiB over: the three coldest groups (12 members;
  // a group is never split).
  EXPECT_EQ(h.master().WriteBack(), 12 * kObj);
  EXPECT_EQ(OffloadKeys(h.master()).size(), 12u);
  EXPECT_EQ(h.CompleteOffloads(node), 12u);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(h.Tiers(Key(i)).size(), i < 12 ? 2u : 1u) << i;
  }
}

TEST(MasterTieringTest, AFullTierGivesAPutACleanVictimAtOnce) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kDram, kSsd);
  Fill(h, 0, 100);  // DRAM full
  ASSERT_EQ(h.master().WriteBack(), 30 * kObj);
  ASSERT_EQ(CompleteAll(h, node), 30u);
  // A round at 100% frees 15 KiB (the coldest, clean: dropped now) and
  // leaves the next coldest clean units in the node's reserve.
  EXPECT_EQ(h.master().EvictMemory(), 15 * kObj);
  EXPECT_EQ(h.Tiers(Key(14)), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_GT(Memory(h.master(), node).reserve_units, 0u);
  Fill(h, 100, 115);  // the freed room
  const MasterStats before = h.master().GetStats();
  // Full again: the next put drops the coldest reserved unit, without a
  // round of its own and without waiting.
  ASSERT_TRUE(h.Put(Key(115), kObj).ok());
  const MasterStats after = h.master().GetStats();
  EXPECT_EQ(after.put_evictions - before.put_evictions, 1u);
  EXPECT_EQ(after.memory_rounds_by_puts, before.memory_rounds_by_puts);
  EXPECT_EQ(after.put_waits, 0u);
  EXPECT_EQ(h.Tiers(Key(15)), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_EQ(h.Tiers(Key(16)),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterTieringTest, AReservedUnitReadSinceIsNotAVictim) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kDram, kSsd);
  Fill(h, 0, 100);
  ASSERT_EQ(h.master().WriteBack(), 30 * kObj);
  ASSERT_EQ(CompleteAll(h, node), 30u);
  ASSERT_EQ(h.master().EvictMemory(), 15 * kObj);
  Fill(h, 100, 115);
  // k15, the coldest reserved unit, is read (and released): it is hot now.
  Result<ObjectReplicas> read = h.Get(Key(15));
  ASSERT_TRUE(read.ok());
  h.master().ReleaseLeases(
      std::vector<LeaseRelease>{{Key(15), read->lease_id}});
  ASSERT_TRUE(h.Put(Key(115), kObj).ok());
  EXPECT_EQ(h.Tiers(Key(15)),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  EXPECT_EQ(h.Tiers(Key(16)), std::vector<Tier>{Tier::kLocalDisk});
}

TEST(MasterTieringTest, APutWaitsForWritebackInsteadOfFailing) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kDram, kSsd);
  Fill(h, 0, 100);  // full, and all dirty: nothing to drop at once
  Result<ReplicaDescriptor> placed = Status(ErrorReason::kInternal, "unset");
  std::thread writer([&] {
    PutStartRequest request{Key(100), kObj, {}, MasterHarness::kClient};
    placed = std::move(h.master().PutStart(
        {&request, 1}, h.clock().Now() + std::chrono::seconds(60))[0]);
  });
  // The put waits; the node writes back meanwhile, and a landed copy makes
  // its unit droppable. (Checked after the join: the writer must end.)
  const bool waited =
      Eventually([&] { return h.master().GetStats().put_waits == 1; },
                 std::chrono::seconds(10));
  for (int i = 0; i < 2000 && h.master().GetStats().put_started == 100; ++i) {
    h.CompleteOffloads(node);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  writer.join();
  ASSERT_TRUE(waited);
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  const MasterStats stats = h.master().GetStats();
  EXPECT_EQ(stats.put_no_space, 0u);
  uint64_t waits = 0;
  for (uint64_t n : stats.put_wait_buckets) waits += n;
  EXPECT_EQ(waits, 1u);
}

TEST(MasterTieringTest, AWaitingPutGivesUpAtItsDeadlineSayingWhatHoldsDram) {
  MasterHarness h(OnEvict());
  h.AddNode("n", kDram, kSsd);
  Fill(h, 0, 100);
  Result<ReplicaDescriptor> placed = Status(ErrorReason::kInternal, "unset");
  std::thread writer([&] {
    PutStartRequest request{Key(100), kObj, {}, MasterHarness::kClient};
    placed = std::move(h.master().PutStart(
        {&request, 1}, h.clock().Now() + std::chrono::seconds(2))[0]);
  });
  const bool waited =
      Eventually([&] { return h.master().GetStats().put_waits == 1; },
                 std::chrono::seconds(10));
  h.clock().Advance(std::chrono::seconds(3));  // nobody writes back
  writer.join();
  ASSERT_TRUE(waited);
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().reason(), ErrorReason::kNoSpace);
  const std::string why = placed.status().message();
  EXPECT_NE(why.find("after waiting"), std::string::npos) << why;
  EXPECT_NE(why.find("being written back"), std::string::npos) << why;
  EXPECT_NE(why.find("node 'n'"), std::string::npos) << why;
  EXPECT_EQ(h.master().GetStats().put_no_space, 1u);
}

TEST(MasterTieringTest, NothingThatCouldEverFreeMeansNoSpaceAtOnce) {
  MasterHarness h(OnEvict());
  h.AddNode("n", kDram, kSsd);
  PutOptions pinned;
  pinned.hard_pin = true;
  Fill(h, 0, 100, pinned);
  PutStartRequest request{Key(100), kObj, {}, MasterHarness::kClient};
  Result<ReplicaDescriptor> placed = std::move(h.master().PutStart(
      {&request, 1}, h.clock().Now() + std::chrono::hours(1))[0]);
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().reason(), ErrorReason::kNoSpace);
  EXPECT_NE(placed.status().message().find("100.0 KiB hard-pinned"),
            std::string::npos)
      << placed.status().message();
  EXPECT_EQ(h.master().GetStats().put_waits, 0u);  // it did not wait
}

TEST(MasterTieringTest, DramFilledSinceTheLastRoundMeansAWaitNotARefusal) {
  // The last round saw an empty node; a burst filled it before the next
  // (a client stream outruns the tick). A put then must not read the old
  // round as "nothing could ever free" and fail at once.
  MasterHarness h(OnEvict());
  h.AddNode("n", kDram, kSsd);
  h.master().Tick();  // publishes the empty node
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(h.Put(Key(i), kObj).ok()) << i;
  PutStartRequest request{Key(100), kObj, {}, MasterHarness::kClient};
  Result<ReplicaDescriptor> placed = std::move(h.master().PutStart(
      {&request, 1}, h.clock().Now() + std::chrono::milliseconds(100))[0]);
  ASSERT_FALSE(placed.ok());  // the clock stands still: nobody writes back
  EXPECT_EQ(placed.status().reason(), ErrorReason::kNoSpace);
  EXPECT_EQ(h.master().GetStats().put_waits, 1u) << placed.status().message();
}

TEST(MasterTieringTest, EachNodeIsEvictedOnItsOwnPressure) {
  MasterHarness h;  // offload off: eviction drops
  h.AddNode("a", kDram);
  h.AddNode("b", kDram);
  PutOptions on_a;
  on_a.preferred_node = "a";
  Fill(h, 0, 95, on_a);
  // 95 KiB of 200 KiB in all (48%), but node a is at 95%: it is evicted
  // down to 85%, and b is not touched.
  EXPECT_EQ(h.master().EvictMemory(), 10 * kObj);
  EXPECT_FALSE(h.Exists(Key(0))->exists);
  EXPECT_TRUE(h.Exists(Key(10))->exists);
}

TEST(MasterTieringTest, LeasesEndWhenTheirReadersRelease) {
  MasterHarness h;
  h.AddNode("n", kDram);
  ASSERT_TRUE(h.Put("k", kObj).ok());
  Result<ObjectReplicas> first = h.Get("k");
  Result<ObjectReplicas> second = h.Get("k");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->lease_id, 0u);
  EXPECT_EQ(first->lease_id, second->lease_id);  // one period, two readers
  EXPECT_EQ(h.Remove("k").reason(), ErrorReason::kObjectLeased);
  const std::vector<LeaseRelease> one = {{"k", first->lease_id}};
  EXPECT_EQ(h.master().ReleaseLeases(one), 1u);
  EXPECT_EQ(h.Remove("k").reason(), ErrorReason::kObjectLeased);  // 1 left
  EXPECT_EQ(h.master().DescribeObject("k")->leases, 1u);
  EXPECT_EQ(h.master().ReleaseLeases(one), 1u);
  EXPECT_EQ(h.master().DescribeObject("k")->leases, 0u);
  EXPECT_EQ(h.master().ReleaseLeases(one), 0u);  // nothing left to end
  EXPECT_TRUE(h.Remove("k").ok());
  EXPECT_EQ(h.master().GetStats().leases_released, 2u);
}

TEST(MasterTieringTest, AReleaseFromAnEndedPeriodEndsNothing) {
  MasterHarness h;
  h.AddNode("n", kDram);
  ASSERT_TRUE(h.Put("k", kObj).ok());
  Result<ObjectReplicas> old = h.Get("k");
  ASSERT_TRUE(old.ok());
  // The reader never releases: the lease expires (the safety net), and a
  // new reader starts a new period.
  h.clock().Advance(h.master().config().lease_ttl);
  Result<ObjectReplicas> fresh = h.Get("k");
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->lease_id, old->lease_id);
  EXPECT_EQ(h.master().GetStats().leases_expired, 1u);
  // The late release of the old period must not end the new reader's.
  EXPECT_EQ(
      h.master().ReleaseLeases(std::vector<LeaseRelease>{{"k", old->lease_id}}),
      0u);
  EXPECT_EQ(h.Remove("k").reason(), ErrorReason::kObjectLeased);
}

TEST(MasterTieringTest, PullTasksWaitsForWorkAndEndsWhenInterrupted) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kDram, kSsd);
  Result<NodeTasks> got = Status(ErrorReason::kInternal, "unset");
  std::thread puller([&] {
    got = h.master().PullTasks(node, 100,
                               h.clock().Now() + std::chrono::seconds(60));
  });
  Fill(h, 0, 80);
  h.master().WriteBack();  // work is made: the waiting pull gets it
  puller.join();
  ASSERT_TRUE(got.ok());
  // The pull wakes at the first task queued and takes what is queued by
  // then; whatever the round queued after is the next pull's, at once.
  const size_t first = got->offloads.size();
  EXPECT_GT(first, 0u);
  got = h.master().PullTasks(node, 100, h.clock().Now());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(first + got->offloads.size(), 10u);

  std::thread idle([&] {
    got = h.master().PullTasks(node, 100,
                               h.clock().Now() + std::chrono::seconds(60));
  });
  h.master().InterruptPull(node);  // the node is stopping
  idle.join();
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->offloads.empty());
}

TEST(MasterTieringTest, AnSsdThatRefusesWritesPausesOffloadsAndGetsRoom) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kDram, kSsd);
  Fill(h, 0, 90);
  ASSERT_EQ(h.master().WriteBack(), 20 * kObj);
  Result<NodeTasks> work = h.master().PullTasks(node);
  ASSERT_TRUE(work.ok());
  Result<NodeTasks> rest = h.master().PullTasks(node);  // 16 per pull
  ASSERT_TRUE(rest.ok());
  work->offloads.insert(work->offloads.end(), rest->offloads.begin(),
                        rest->offloads.end());
  ASSERT_EQ(work->offloads.size(), 20u);
  // Half land; then the SSD refuses one for room.
  for (size_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        h.master().NotifyOffloadSuccess(node, work->offloads[i].id).ok());
  }
  ASSERT_TRUE(h.master()
                  .NotifyOffloadFailure(node, work->offloads[10].id,
                                        Status(ErrorReason::kNoSpace, "full"))
                  .ok());
  EXPECT_EQ(h.master().GetStats().offload_pauses, 1u);
  // Paused: no new writeback, and the node's SSD frees a ratio's worth
  // once (5% of 10 MiB, at least), however empty its count says it is.
  for (size_t i = 11; i < 20; ++i) {
    ASSERT_TRUE(h.master()
                    .NotifyOffloadFailure(node, work->offloads[i].id,
                                          Status(ErrorReason::kNoSpace, "full"))
                    .ok());
  }
  EXPECT_EQ(h.master().GetStats().offload_pauses, 1u);  // one per pause
  EXPECT_EQ(h.master().WriteBack(), 0u);
  EXPECT_EQ(h.master().EvictSsd(), 10 * kObj);  // all it had (10 objects)
  EXPECT_EQ(h.master().EvictSsd(), 0u);         // owed once
  // The pause ends: writeback goes on.
  h.clock().Advance(kSec);
  EXPECT_GT(h.master().WriteBack(), 0u);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterTieringTest, TheSsdCapacityIsWhatTheNodesStoreCanHold) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kDram, kSsd);
  EXPECT_EQ(h.master().GetNode(node)->ssd_capacity, kSsd);
  SsdReport report;
  report.capacity_bytes = kSsd;
  report.put_limit_bytes = 1000 * kObj;
  report.file_bytes = 500 * kObj;
  report.live_value_bytes = 400 * kObj;   // 16 KiB values in
  report.live_record_bytes = 500 * kObj;  // 20 KiB records: 0.8
  ASSERT_TRUE(h.master().Heartbeat(node, report).ok());
  // 1000 KiB x 0.98 (room for dead records) x 0.8 (record overhead).
  EXPECT_EQ(h.master().GetNode(node)->ssd_capacity, 784 * kObj);
  // A report of refused writes pauses offloads there.
  report.no_space_refusals = 3;
  ASSERT_TRUE(h.master().Heartbeat(node, report).ok());
  EXPECT_EQ(h.master().GetStats().offload_pauses, 1u);
}

TEST(MasterTieringTest, AnOffloadPauseEndsWhenTheNodeReportsRoom) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kDram, kSsd);
  SsdReport report;
  report.capacity_bytes = kSsd;
  report.put_limit_bytes = 1000 * kObj;
  report.file_bytes = 999 * kObj;
  ASSERT_TRUE(h.master().Heartbeat(node, report).ok());
  Fill(h, 0, 90);
  ASSERT_GT(h.master().WriteBack(), 0u);
  Result<NodeTasks> work = h.master().PullTasks(node);
  ASSERT_TRUE(work.ok());
  ASSERT_FALSE(work->offloads.empty());
  for (const Task& task : work->offloads) {
    ASSERT_TRUE(h.master()
                    .NotifyOffloadFailure(node, task.id,
                                          Status(ErrorReason::kNoSpace, "full"))
                    .ok());
  }
  ASSERT_TRUE(h.master().GetNode(node)->offloads_paused_until >
              h.clock().Now());
  // Still full (1 of 1000 blocks free): the pause holds.
  ASSERT_TRUE(h.master().Heartbeat(node, report).ok());
  EXPECT_TRUE(h.master().GetNode(node)->offloads_paused_until >
              h.clock().Now());
  EXPECT_EQ(h.master().WriteBack(), 0u);
  // Eviction and compaction freed a tenth of it: offloads go on at once,
  // long before the pause would have run out.
  report.file_bytes = 900 * kObj;
  ASSERT_TRUE(h.master().Heartbeat(node, report).ok());
  EXPECT_FALSE(h.master().GetNode(node)->offloads_paused_until >
               h.clock().Now());
  EXPECT_GT(h.master().WriteBack(), 0u);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterTieringTest, DeadRecordsBeyondTheAllowanceAreEvictedFor) {
  // LRU from 90 % down to 85 %, so that the coldest go first.
  MasterConfig config = OnEvict();
  config.ssd_eviction_policy = EvictionPolicyKind::kLru;
  config.ssd_high_watermark = 0.9;
  config.ssd_eviction_ratio = 0.05;
  MasterHarness h(config);
  const NodeId node = h.AddNode("n", kDram, kSsd);
  Fill(h, 0, 40);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(h.master().EvictObject(Key(i)).ok());
  ASSERT_EQ(CompleteAll(h, node), 40u);  // 40 objects on SSD only
  SsdReport report;
  report.capacity_bytes = 102 * kObj;   // headroom: no cap below 0.96
  report.put_limit_bytes = 100 * kObj;  // capacity: 98 objects
  report.live_value_bytes = 40 * kObj;
  report.live_record_bytes = 40 * kObj;
  report.file_bytes = 50 * kObj;  // dead: 10, 8 beyond the allowance
  ASSERT_TRUE(h.master().Heartbeat(node, report).ok());
  ASSERT_EQ(h.master().GetNode(node)->ssd_capacity, 98 * kObj);
  EXPECT_EQ(h.master().EvictSsd(), 0u);  // 40 of 98: room, nothing counted
  // Compaction fell behind: 52 dead, 50 beyond the allowance, but room
  // for 8 more: compaction may catch up, nothing goes for them.
  report.file_bytes = 92 * kObj;
  ASSERT_TRUE(h.master().Heartbeat(node, report).ok());
  EXPECT_EQ(h.master().EvictSsd(), 0u);
  // About to refuse writes (room for 2, less than 1/32 of the limit): 58
  // dead, 56 beyond the allowance, so the store is as full as 96 objects
  // would make it (over 0.9 x 98): the coldest go until 0.85 of it (83.3).
  report.file_bytes = 98 * kObj;
  ASSERT_TRUE(h.master().Heartbeat(node, report).ok());
  const uint64_t evicted = h.master().EvictSsd();
  EXPECT_GE(evicted, 11 * kObj);
  EXPECT_LT(evicted, 20 * kObj);
  EXPECT_TRUE(h.Tiers(Key(0)).empty());  // the coldest went first
  EXPECT_EQ(h.Tiers(Key(39)), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterTieringTest, PromotionNeverTakesTheRoomWritersNeed) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kDram, kSsd);
  // Two objects on SSD only, each read twice (the admission threshold).
  for (const char* key : {"hot", "later"}) {
    ASSERT_TRUE(h.Put(key, 8 * kObj).ok());
    ASSERT_TRUE(h.master().EvictObject(key).ok());
  }
  CompleteAll(h, node);
  ASSERT_EQ(h.Tiers("hot"), std::vector<Tier>{Tier::kLocalDisk});
  const auto read_twice = [&](const std::string& key) {
    for (int i = 0; i < 2; ++i) {
      Result<ObjectReplicas> r = h.Get(key);
      ASSERT_TRUE(r.ok());
      h.master().ReleaseLeases(std::vector<LeaseRelease>{{key, r->lease_id}});
    }
  };
  // DRAM 70% full of dirty units: 30% at hand, well over a round's worth
  // (5%) plus the 8 KiB copy. It is promoted.
  Fill(h, 0, 70);
  h.master().EvictMemory();  // a round sees the node as it is
  read_twice("hot");
  EXPECT_EQ(h.master().GetStats().promotion_queued, 1u);
  // At 84% with every unit dirty, 16% is at hand, but the copy would take
  // the node to 92%, past its high watermark: the room is the writers'.
  Fill(h, 70, 84);
  h.master().EvictMemory();
  read_twice("later");
  EXPECT_EQ(h.master().GetStats().promotion_queued, 1u);
  EXPECT_EQ(h.master().GetStats().promotion_watermark_gated, 1u);
}

// The store under a stream of puts many times its DRAM, groups and single
// objects, with reads mixed in; nodes run their offloads as they come.
// No put may fail while room can be made, no group may be partly in DRAM,
// and at the end every pin and lease is back to 0.
TEST(MasterTieringTest, AWriteStreamManyTimesDramNeverFailsNorSplitsGroups) {
  MasterConfig config = OnEvict();
  config.shard_count = 64;
  MasterHarness h(config);
  const NodeId nodes[] = {h.AddNode("a", kDram, 4 * kSsd),
                          h.AddNode("b", kDram, 4 * kSsd)};
  std::mt19937_64 rng(7);
  std::vector<std::string> stored;
  std::vector<std::vector<std::string>> groups;
  int next_key = 0;
  // The nodes' work (offloads land, promotions are staged and land), then
  // the background steps.
  const auto run_nodes = [&] {
    for (NodeId n : nodes) {
      while (true) {
        Result<NodeTasks> work = h.master().PullTasks(n);
        ASSERT_TRUE(work.ok());
        if (work->offloads.empty() && work->promotions.empty()) break;
        for (const Task& t : work->offloads) {
          ASSERT_TRUE(h.master().NotifyOffloadSuccess(n, t.id).ok());
        }
        for (const Task& t : work->promotions) {
          if (h.master().PromotionAllocStart(n, t.id).ok()) {
            h.master().NotifyPromotionSuccess(n, t.id).IgnoreError();
          }
        }
      }
    }
  };
  const auto drive = [&] {
    run_nodes();
    h.master().Tick();
  };
  const auto put = [&](const std::vector<PutStartRequest>& requests) {
    std::vector<Result<ReplicaDescriptor>> placed =
        h.master().PutStart(requests);
    std::vector<PutStartRequest> again;
    for (size_t i = 0; i < placed.size(); ++i) {
      if (!placed[i].ok()) {
        ASSERT_EQ(placed[i].status().reason(), ErrorReason::kNoSpace);
        again.push_back(requests[i]);
      }
    }
    if (!again.empty()) {
      drive();  // writeback lands: room can be made now
      placed = h.master().PutStart(again);
      for (auto& p : placed) {
        ASSERT_TRUE(p.ok()) << "a put failed while room could be made: "
                            << p.status().ToString();
      }
    }
    std::vector<std::string> keys;
    for (const PutStartRequest& r : requests) keys.push_back(r.key);
    for (const Status& s : h.master().PutEnd(MasterHarness::kClient, keys)) {
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    stored.insert(stored.end(), keys.begin(), keys.end());
  };
  for (int step = 0; step < 600; ++step) {
    std::vector<PutStartRequest> requests;
    if (step % 2 == 0) {  // a group of 4
      std::vector<std::string> members;
      for (uint32_t m = 0; m < 4; ++m) {
        PutOptions options;
        options.group = GroupSpec{"g" + std::to_string(step), 4, m};
        members.push_back(Key(next_key++));
        requests.push_back(
            {members.back(), kObj, options, MasterHarness::kClient});
      }
      groups.push_back(members);
    } else {
      for (int i = 0; i < 2; ++i) {
        requests.push_back({Key(next_key++), kObj, {}, MasterHarness::kClient});
      }
    }
    put(requests);
    if (HasFatalFailure()) return;
    // Two reads of earlier keys; readers release their leases.
    for (int r = 0; r < 2; ++r) {
      const std::string& key = stored[rng() % stored.size()];
      Result<ObjectReplicas> read = h.Get(key);
      if (read.ok()) {
        h.master().ReleaseLeases(
            std::vector<LeaseRelease>{{key, read->lease_id}});
      }
    }
    h.clock().Advance(std::chrono::milliseconds(50));
    if (step % 3 == 0) drive();
    // Every group whole: all members in DRAM or none, each readable.
    for (const std::vector<std::string>& members : groups) {
      size_t in_dram = 0;
      size_t readable = 0;
      for (const std::string& key : members) {
        const std::vector<Tier> tiers = h.Tiers(key);
        in_dram += !tiers.empty() && tiers.front() == Tier::kMemory;
        readable += !tiers.empty();
      }
      ASSERT_TRUE(in_dram == 0 || in_dram == members.size())
          << "group of " << members.front() << " partly in DRAM at step "
          << step;
      ASSERT_TRUE(readable == 0 || readable == members.size())
          << "group of " << members.front() << " partly readable";
    }
  }
  // The stream stops: what is queued lands, and no new work is made.
  for (int i = 0; i < 10; ++i) {
    drive();
    run_nodes();
    if (h.master().ListTasks(TaskKind::kOffload).empty() &&
        h.master().ListTasks(TaskKind::kPromotion).empty()) {
      break;
    }
  }
  const AuditReport audit = h.master().Audit();
  EXPECT_TRUE(audit.consistent());
  EXPECT_EQ(audit.total_refcnt, 0u);
  for (size_t i = 0; i < stored.size(); i += 7) {
    Result<ObjectDescription> d = h.master().DescribeObject(stored[i]);
    if (d.ok()) {
      EXPECT_EQ(d->leases, 0u) << stored[i];
    }
  }
  const MasterStats stats = h.master().GetStats();
  EXPECT_GT(stats.writeback_completed, 0u);
  EXPECT_GT(stats.put_evictions + stats.evicted_memory_objects, 0u);
}

}  // namespace
}  // namespace master_tiering_test
}  // namespace mooncake_tier
