// Forced eviction (Master::EvictObject, EvictGroup): what is freed now,
// what is offloaded first, and every refusal, which must change nothing.
// Each scenario ends with every pin released and the books consistent.

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_forced_eviction_test {
namespace {

using testing::MasterHarness;

constexpr uint64_t kObj = 1024;
constexpr uint64_t kDram = 100 * kObj;
constexpr uint64_t kSsd = 1000 * kObj;

MasterConfig WithMode(OffloadMode mode) {
  MasterConfig c = MasterHarness::DefaultConfig();
  c.group_shard_count = 8;
  c.offload_mode = mode;
  return c;
}

PutOptions Member(const std::string& group, uint32_t size, uint32_t index) {
  PutOptions o;
  o.group = GroupSpec{group, size, index};
  return o;
}

std::string MemberKey(const std::string& group, uint32_t index) {
  return group + "/" + std::to_string(index);
}

void PutGroup(MasterHarness& h, const std::string& g, uint32_t size,
              uint32_t present) {
  for (uint32_t i = 0; i < present; ++i) {
    ASSERT_TRUE(h.Put(MemberKey(g, i), kObj, Member(g, size, i)).ok());
  }
}

void ExpectSettled(MasterHarness& h) {
  const AuditReport audit = h.master().Audit();
  EXPECT_TRUE(audit.consistent());
  EXPECT_EQ(audit.total_refcnt, 0u);
  EXPECT_EQ(audit.tasks, 0u);
}

const std::vector<Tier> kDramOnly{Tier::kMemory};
const std::vector<Tier> kSsdOnly{Tier::kLocalDisk};
const std::vector<Tier> kBoth{Tier::kMemory, Tier::kLocalDisk};

TEST(ForcedEvictionTest, OffModeDropsTheOnlyCopyNow) {
  MasterHarness h(WithMode(OffloadMode::kOff));
  h.AddNode("n", kDram);
  ASSERT_TRUE(h.Put("k", kObj).ok());
  ASSERT_TRUE(h.Put("other", kObj).ok());
  Result<ForcedEviction> out = h.master().EvictObject("k");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->bytes_freed, kObj);
  EXPECT_TRUE(out->offloads.empty());
  EXPECT_FALSE(h.Exists("k")->exists);  // no other copy: it left the store
  EXPECT_TRUE(h.Exists("other")->exists);
  const MasterStats s = h.master().GetStats();
  EXPECT_EQ(s.memory.used, kObj);
  EXPECT_EQ(s.evicted_memory_bytes, kObj);
  EXPECT_EQ(s.objects_evicted, 1u);
  ExpectSettled(h);
}

TEST(ForcedEvictionTest, UnknownKeysAndGroupsAreNotFound) {
  MasterHarness h;
  h.AddNode("n", kDram);
  EXPECT_EQ(h.master().EvictObject("nope").status().reason(),
            ErrorReason::kObjectNotFound);
  EXPECT_EQ(h.master().EvictGroup("nope").status().reason(),
            ErrorReason::kGroupNotFound);
  EXPECT_EQ(h.master().EvictObject("").status().reason(),
            ErrorReason::kInvalidKey);
}

TEST(ForcedEvictionTest, RefusalsNameTheReasonAndChangeNothing) {
  MasterHarness h(WithMode(OffloadMode::kWriteThrough));
  const NodeId node = h.AddNode("n", kDram, kSsd);
  PutOptions pinned;
  pinned.hard_pin = true;
  ASSERT_TRUE(h.Put("pinned", kObj, pinned).ok());
  ASSERT_TRUE(h.PutStart("processing", kObj).ok());
  ASSERT_TRUE(h.Put("leased", kObj).ok());
  ASSERT_TRUE(h.CompleteOffloads(node) > 0);    // pinned and leased on SSD
  ASSERT_TRUE(h.Put("offloading", kObj).ok());  // write-through in flight
  ASSERT_TRUE(h.Get("leased").ok());
  const MasterStats before = h.master().GetStats();
  const TimePoint access = h.master().DescribeObject("leased")->last_access;
  h.clock().Advance(std::chrono::seconds(1));

  EXPECT_EQ(h.master().EvictObject("pinned").status().reason(),
            ErrorReason::kNotApplicable);
  EXPECT_EQ(h.master().EvictObject("processing").status().reason(),
            ErrorReason::kObjectBusy);
  EXPECT_EQ(h.master().EvictObject("offloading").status().reason(),
            ErrorReason::kObjectBusy);
  const Result<ForcedEviction> leased = h.master().EvictObject("leased");
  EXPECT_EQ(leased.status().reason(), ErrorReason::kObjectLeased);
  // It says when the lease ends: lease_ttl after the read, 1 s ago.
  const std::string when =
      "the lease ends within " +
      std::to_string(
          std::chrono::duration_cast<std::chrono::milliseconds>(
              h.master().config().lease_ttl - std::chrono::seconds(1))
              .count() /
          1000) +
      ".0 s";
  EXPECT_NE(leased.status().message().find(when), std::string::npos)
      << leased.status().message() << " lacks " << when;

  EXPECT_EQ(h.Tiers("pinned"), kBoth);
  EXPECT_EQ(h.Tiers("leased"), kBoth);
  EXPECT_EQ(h.Tiers("offloading"), kDramOnly);
  const MasterStats after = h.master().GetStats();
  EXPECT_EQ(after.memory.used, before.memory.used);
  EXPECT_EQ(after.offload_queued, before.offload_queued);
  // An operator's call is no access.
  EXPECT_EQ(h.master().DescribeObject("leased")->last_access, access);

  // Once the lease ran out the SSD copy lets the DRAM copy go now.
  h.clock().Advance(h.master().config().lease_ttl);
  Result<ForcedEviction> out = h.master().EvictObject("leased");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->bytes_freed, kObj);
  EXPECT_TRUE(out->offloads.empty());
  EXPECT_EQ(h.Tiers("leased"), kSsdOnly);
  EXPECT_EQ(h.master().DescribeObject("leased")->last_access, access);
  // Now it has no DRAM copy at all.
  EXPECT_EQ(h.master().EvictObject("leased").status().reason(),
            ErrorReason::kNotApplicable);
  ASSERT_TRUE(h.master()
                  .PutRevoke(MasterHarness::kClient,
                             std::vector<std::string>{"processing"})[0]
                  .ok());
  h.CompleteOffloads(node);
  ExpectSettled(h);
}

TEST(ForcedEvictionTest, OnEvictOffloadsFirstAndDropsWhenItLands) {
  MasterHarness h(WithMode(OffloadMode::kOnEvict));
  const NodeId node = h.AddNode("n", kDram, kSsd);
  ASSERT_TRUE(h.Put("k", kObj).ok());
  Result<ForcedEviction> out = h.master().EvictObject("k");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->bytes_freed, 0u);
  ASSERT_EQ(out->offloads.size(), 1u);
  const std::vector<Task> tasks = h.master().ListTasks(TaskKind::kOffload);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].id, out->offloads[0]);
  EXPECT_EQ(h.Tiers("k"), kDramOnly);  // not before the SSD copy exists
  // A second request while it is in flight is busy, not a second task.
  EXPECT_EQ(h.master().EvictObject("k").status().reason(),
            ErrorReason::kObjectBusy);
  EXPECT_EQ(h.CompleteOffloads(node), 1u);
  EXPECT_EQ(h.Tiers("k"), kSsdOnly);
  EXPECT_EQ(h.master().GetStats().memory.used, 0u);
  ExpectSettled(h);
}

TEST(ForcedEvictionTest, OnEvictWithoutAnSsdTierDropsNow) {
  MasterHarness h(WithMode(OffloadMode::kOnEvict));
  h.AddNode("n", kDram);  // no SSD
  ASSERT_TRUE(h.Put("k", kObj).ok());
  Result<ForcedEviction> out = h.master().EvictObject("k");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->bytes_freed, kObj);
  EXPECT_TRUE(out->offloads.empty());
  EXPECT_FALSE(h.Exists("k")->exists);
  ExpectSettled(h);
}

TEST(ForcedEvictionTest, WriteThroughDropsNowOrRetriesAFailedOffload) {
  MasterHarness h(WithMode(OffloadMode::kWriteThrough));
  const NodeId node = h.AddNode("n", kDram, kSsd);
  ASSERT_TRUE(h.Put("landed", kObj).ok());
  ASSERT_EQ(h.CompleteOffloads(node), 1u);
  ASSERT_TRUE(h.Put("failed", kObj).ok());
  ASSERT_EQ(h.CompleteOffloads(node, /*succeed=*/false), 1u);

  Result<ForcedEviction> now = h.master().EvictObject("landed");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->bytes_freed, kObj);
  EXPECT_TRUE(now->offloads.empty());
  EXPECT_EQ(h.Tiers("landed"), kSsdOnly);

  Result<ForcedEviction> first = h.master().EvictObject("failed");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->bytes_freed, 0u);
  EXPECT_EQ(first->offloads.size(), 1u);
  EXPECT_EQ(h.Tiers("failed"), kDramOnly);
  EXPECT_EQ(h.CompleteOffloads(node), 1u);
  EXPECT_EQ(h.Tiers("failed"), kSsdOnly);
  ExpectSettled(h);
}

TEST(ForcedEvictionTest, QueueFullIsReportedAndChangesNothing) {
  MasterConfig c = WithMode(OffloadMode::kOnEvict);
  c.offload_queue_limit = 1;
  MasterHarness h(c);
  h.AddNode("n", kDram, kSsd);
  ASSERT_TRUE(h.Put("a", kObj).ok());
  ASSERT_TRUE(h.Put("b", kObj).ok());
  ASSERT_TRUE(h.master().EvictObject("a").ok());
  EXPECT_EQ(h.master().EvictObject("b").status().reason(),
            ErrorReason::kQueueFull);
  EXPECT_EQ(h.Tiers("b"), kDramOnly);
  EXPECT_EQ(h.master().DescribeObject("b")->replicas[0].refcnt, 0u);
}

TEST(ForcedEvictionTest, AMemberEvictsItsCompleteGroupWhole) {
  MasterHarness h(WithMode(OffloadMode::kOff));
  h.AddNode("n", kDram);
  PutGroup(h, "g", 3, 3);
  ASSERT_TRUE(h.Put("alone", kObj).ok());
  Result<ForcedEviction> out = h.master().EvictObject(MemberKey("g", 1));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->bytes_freed, 3 * kObj);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(h.Exists(MemberKey("g", i))->exists) << i;
  }
  EXPECT_TRUE(h.Exists("alone")->exists);
  const std::string id = "g";
  EXPECT_EQ(h.master().GetGroup({&id, 1})[0].status().reason(),
            ErrorReason::kGroupNotFound);
  EXPECT_EQ(h.master().GetStats().group_counters.groups_evicted_memory, 1u);
  ExpectSettled(h);
}

TEST(ForcedEvictionTest, FillingGroupsAndLeasedMembersAreRefused) {
  MasterHarness h(WithMode(OffloadMode::kOff));
  h.AddNode("n", kDram);
  PutGroup(h, "filling", 3, 2);
  PutGroup(h, "read", 2, 2);
  ASSERT_TRUE(h.Get(MemberKey("read", 1)).ok());
  EXPECT_EQ(h.master().EvictGroup("filling").status().reason(),
            ErrorReason::kNotApplicable);
  EXPECT_EQ(h.master().EvictObject(MemberKey("filling", 0)).status().reason(),
            ErrorReason::kNotApplicable);
  EXPECT_EQ(h.master().EvictGroup("read").status().reason(),
            ErrorReason::kObjectLeased);
  for (const std::string& key :
       {MemberKey("filling", 0), MemberKey("filling", 1), MemberKey("read", 0),
        MemberKey("read", 1)}) {
    EXPECT_EQ(h.Tiers(key), kDramOnly) << key;
  }
  EXPECT_EQ(h.master().GetStats().memory.used, 4 * kObj);
}

TEST(ForcedEvictionTest, OnEvictGroupLeavesDramOnlyWhenEveryMemberLanded) {
  MasterHarness h(WithMode(OffloadMode::kOnEvict));
  const NodeId node = h.AddNode("n", kDram, kSsd);
  PutGroup(h, "g", 3, 3);
  Result<ForcedEviction> out = h.master().EvictGroup("g");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->bytes_freed, 0u);
  EXPECT_EQ(out->offloads.size(), 3u);
  EXPECT_EQ(h.master().EvictGroup("g").status().reason(),
            ErrorReason::kObjectBusy);
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->offloads.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        h.master().NotifyOffloadSuccess(node, reply->offloads[i].id).ok());
    if (i == 2) break;
    // Not every member is on SSD yet: every DRAM copy stays.
    for (uint32_t m = 0; m < 3; ++m) {
      EXPECT_EQ(h.Tiers(MemberKey("g", m)).front(), Tier::kMemory)
          << "after " << i << ": member " << m;
    }
  }
  // Below the watermark no round runs: the last landing finished it.
  for (uint32_t m = 0; m < 3; ++m) {
    EXPECT_EQ(h.Tiers(MemberKey("g", m)), kSsdOnly) << m;
  }
  EXPECT_EQ(h.master().GetStats().memory.used, 0u);
  EXPECT_EQ(h.master().GetStats().group_counters.groups_evicted_memory, 1u);
  ExpectSettled(h);
}

TEST(ForcedEvictionTest, WriteThroughGroupOffloadsOnlyTheMissingMember) {
  MasterHarness h(WithMode(OffloadMode::kWriteThrough));
  const NodeId node = h.AddNode("n", kDram, kSsd);
  PutGroup(h, "g", 3, 3);
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->offloads.size(), 3u);
  std::string failed = reply->offloads[0].key;
  ASSERT_TRUE(h.master()
                  .NotifyOffloadFailure(node, reply->offloads[0].id,
                                        Status(ErrorReason::kIoError, "x"))
                  .ok());
  for (size_t i = 1; i < 3; ++i) {
    ASSERT_TRUE(
        h.master().NotifyOffloadSuccess(node, reply->offloads[i].id).ok());
  }
  Result<ForcedEviction> out = h.master().EvictGroup("g");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->bytes_freed, 0u);
  ASSERT_EQ(out->offloads.size(), 1u);
  EXPECT_EQ(h.Tiers(failed), kDramOnly);
  EXPECT_EQ(h.CompleteOffloads(node), 1u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(h.Tiers(MemberKey("g", i)), kSsdOnly) << i;
  }
  ExpectSettled(h);
}

TEST(ForcedEvictionTest, GroupAlreadyOnSsdLeavesDramNow) {
  MasterHarness h(WithMode(OffloadMode::kWriteThrough));
  const NodeId node = h.AddNode("n", kDram, kSsd);
  PutGroup(h, "g", 2, 2);
  ASSERT_EQ(h.CompleteOffloads(node), 2u);
  Result<ForcedEviction> out = h.master().EvictObject(MemberKey("g", 0));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->bytes_freed, 2 * kObj);
  EXPECT_TRUE(out->offloads.empty());
  EXPECT_EQ(h.Tiers(MemberKey("g", 0)), kSsdOnly);
  EXPECT_EQ(h.Tiers(MemberKey("g", 1)), kSsdOnly);
  EXPECT_EQ(h.master().EvictGroup("g").status().reason(),
            ErrorReason::kNotApplicable);  // no member in DRAM now
  ExpectSettled(h);
}

// Forced evictions racing with reads, eviction rounds, the clock and a node
// reporting its offloads (some failing): when everything has settled, the
// books balance, no pin is left, and every complete group is wholly in
// DRAM or wholly out of it.
TEST(ForcedEvictionTest, ConcurrentForcedEvictionsKeepGroupsWhole) {
  MasterHarness h(WithMode(OffloadMode::kOnEvict));
  const NodeId node = h.AddNode("n", 400 * kObj, 100 * kSsd);
  constexpr int kGroups = 40;
  constexpr uint32_t kMembers = 4;
  for (int g = 0; g < kGroups; ++g) {
    PutGroup(h, "g" + std::to_string(g), kMembers, kMembers);
  }
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(h.Put("k" + std::to_string(i), kObj).ok());
  }
  auto expect_groups_whole = [&] {
    for (int g = 0; g < kGroups; ++g) {
      const std::string id = "g" + std::to_string(g);
      Result<GroupDescription> group =
          std::move(h.master().GetGroup({&id, 1})[0]);
      if (!group.ok() || group->status.state != GroupState::kComplete) continue;
      size_t in_dram = 0;
      for (const GroupDescription::Member& m : group->members) {
        if (!m.tiers.empty() && m.tiers.front() == Tier::kMemory) ++in_dram;
      }
      EXPECT_TRUE(in_dram == 0 || in_dram == kMembers)
          << id << ": " << in_dram << " of " << kMembers << " in DRAM";
    }
  };
  std::atomic<bool> stop{false};
  auto group_of = [](std::mt19937& rng) {
    return "g" + std::to_string(rng() % kGroups);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 400; ++i) {
        if (rng() % 2) {
          h.master().EvictGroup(group_of(rng)).status().IgnoreError();
        } else if (rng() % 2) {
          h.master()
              .EvictObject(MemberKey(group_of(rng), rng() % kMembers))
              .status()
              .IgnoreError();
        } else {
          h.master()
              .EvictObject("k" + std::to_string(rng() % 40))
              .status()
              .IgnoreError();
        }
      }
    });
  }
  threads.emplace_back([&] {  // readers: leases and promotions
    std::mt19937 rng(7);
    while (!stop.load()) {
      h.Get(MemberKey(group_of(rng), rng() % kMembers)).status().IgnoreError();
    }
  });
  threads.emplace_back([&] {  // the node, the clock and rounds
    std::mt19937 rng(9);
    while (!stop.load()) {
      Result<NodeTasks> reply = h.master().PullTasks(node);
      if (!reply.ok()) continue;
      for (const Task& task : reply->offloads) {
        Status s = rng() % 8 == 0
                       ? h.master().NotifyOffloadFailure(
                             node, task.id, Status(ErrorReason::kIoError, "x"))
                       : h.master().NotifyOffloadSuccess(node, task.id);
        s.IgnoreError();
      }
      for (const Task& task : reply->promotions) {
        if (h.master().PromotionAllocStart(node, task.id).ok()) {
          h.master().NotifyPromotionSuccess(node, task.id).IgnoreError();
        }
      }
      h.clock().Advance(std::chrono::seconds(1));
      h.master().EvictMemory();
    }
  });
  threads[0].join();
  threads[1].join();
  stop = true;
  for (size_t i = 2; i < threads.size(); ++i) threads[i].join();
  // Settle: readers gone, every task reported (the last landing of a
  // forced group eviction finishes it), then every group asked once more.
  h.clock().Advance(h.master().config().lease_ttl);
  auto settle = [&] {
    for (int round = 0; round < 100 && h.master().Audit().tasks > 0; ++round) {
      Result<NodeTasks> reply = h.master().PullTasks(node);
      ASSERT_TRUE(reply.ok());
      for (const Task& task : reply->offloads) {
        h.master().NotifyOffloadSuccess(node, task.id).IgnoreError();
      }
      for (const Task& task : reply->promotions) {
        h.master()
            .NotifyPromotionFailure(node, task.id,
                                    Status(ErrorReason::kIoError, "x"))
            .IgnoreError();
      }
    }
  };
  settle();
  ExpectSettled(h);
  expect_groups_whole();
  for (int g = 0; g < kGroups; ++g) {
    h.master().EvictGroup("g" + std::to_string(g)).status().IgnoreError();
  }
  settle();
  ExpectSettled(h);
  expect_groups_whole();
  const MasterStats stats = h.master().GetStats();
  EXPECT_GT(stats.offload_completed, 0u);
  EXPECT_GT(stats.group_counters.groups_evicted_memory, 0u);
}

}  // namespace
}  // namespace master_forced_eviction_test
}  // namespace mooncake_tier
