#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "base/byte_units.h"
#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_groups_test {
namespace {

using testing::MasterHarness;

constexpr uint64_t kObj = 1024;

PutOptions Member(const std::string& group, uint32_t size, uint32_t index) {
  PutOptions o;
  o.group = GroupSpec{group, size, index};
  return o;
}

std::string MemberKey(const std::string& group, uint32_t index) {
  return group + "/" + std::to_string(index);
}

MasterConfig Config(OffloadMode mode = OffloadMode::kOff) {
  MasterConfig c = MasterHarness::DefaultConfig();
  c.group_shard_count = 8;
  c.offload_mode = mode;
  return c;
}

GroupDescription Describe(Master& m, const std::string& id) {
  Result<GroupDescription> d = std::move(m.GetGroup({&id, 1})[0]);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : GroupDescription{};
}

// Puts every member of a group of `size`, oldest access first.
void PutGroup(MasterHarness& h, const std::string& g, uint32_t size) {
  for (uint32_t i = 0; i < size; ++i) {
    ASSERT_TRUE(h.Put(MemberKey(g, i), kObj, Member(g, size, i)).ok());
  }
}

// 23 groups of 4 (92 objects) put one second apart, then left unread for
// a lease: more than a 100-object DRAM keeps under its watermark.
void PutAgedGroups(MasterHarness& h) {
  for (int g = 0; g < 23; ++g) {
    PutGroup(h, "g" + std::to_string(g), 4);
    h.clock().Advance(std::chrono::seconds(1));
  }
  h.clock().Advance(h.master().config().lease_ttl);
}

TEST(MasterGroupsTest, PipelineParallelMembersFromEightThreads) {
  MasterHarness h(Config());
  h.AddNode("n", kMiB);
  std::atomic<int> turn{-1};  // no rank may start before the loop below
  std::vector<std::thread> ranks;
  for (uint32_t rank = 0; rank < 8; ++rank) {
    ranks.emplace_back([&, rank] {
      while (turn.load() != static_cast<int>(rank)) std::this_thread::yield();
      // Put in reverse rank order: completion must not depend on order.
      const uint32_t index = 7 - rank;
      EXPECT_TRUE(
          h.Put(MemberKey("blk", index), kObj, Member("blk", 8, index)).ok());
      turn.store(100 + static_cast<int>(rank));
    });
  }
  for (int rank = 0; rank < 8; ++rank) {
    turn.store(rank);
    while (turn.load() != 100 + rank) std::this_thread::yield();
    Result<ExistsInfo> probe = h.Exists(MemberKey("blk", 7));
    ASSERT_TRUE(probe.ok());
    ASSERT_TRUE(probe->group.has_value());
    EXPECT_EQ(probe->group->expected, 8u);
    EXPECT_EQ(probe->group->present, static_cast<uint32_t>(rank + 1));
    const bool last = rank == 7;
    EXPECT_EQ(probe->group->state,
              last ? GroupState::kComplete : GroupState::kFilling);
    for (uint32_t i = 0; i < 8; ++i) {
      Result<ObjectReplicas> got = h.Get(MemberKey("blk", i));
      if (last) {
        EXPECT_TRUE(got.ok()) << i;
      } else if (i >= 7 - static_cast<uint32_t>(rank)) {
        EXPECT_EQ(got.status().reason(), ErrorReason::kGroupIncomplete) << i;
      }
    }
  }
  for (std::thread& t : ranks) t.join();
  EXPECT_EQ(h.master().GetStats().get_group_incomplete, 28u);
}

// Members count themselves present under their own stripes and only the
// last put of a group takes the group stripe: eight threads end one member
// of each of many groups at once while a prober reads the groups. No
// reading may see a filling group with every member present, counts and
// flags disagree, or a complete group with an unreadable member; every
// group completes exactly once.
TEST(MasterGroupsTest, ConcurrentPutEndsCompleteEachGroupExactlyOnce) {
  MasterHarness h(Config());
  h.AddNode("n", 64 * kMiB);
  constexpr uint32_t kGroups = 200;
  constexpr uint32_t kSize = 8;
  std::vector<PutStartRequest> starts;
  for (uint32_t g = 0; g < kGroups; ++g) {
    for (uint32_t i = 0; i < kSize; ++i) {
      const std::string id = "c" + std::to_string(g);
      starts.push_back({MemberKey(id, i), kObj, Member(id, kSize, i),
                        MasterHarness::kClient});
    }
  }
  for (const Result<ReplicaDescriptor>& r : h.master().PutStart(starts)) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  std::atomic<bool> done{false};
  std::thread prober([&] {
    while (!done.load()) {
      for (uint32_t g = 0; g < kGroups; g += 7) {
        const std::string id = "c" + std::to_string(g);
        Result<GroupDescription> d =
            std::move(h.master().GetGroup({&id, 1})[0]);
        ASSERT_TRUE(d.ok());
        uint32_t flagged = 0;
        for (const GroupDescription::Member& m : d->members)
          flagged += m.present;
        EXPECT_EQ(flagged, d->status.present) << id;
        if (d->status.state == GroupState::kFilling) {
          EXPECT_LT(d->status.present, kSize) << id;
        } else {
          EXPECT_EQ(d->status.state, GroupState::kComplete) << id;
          EXPECT_EQ(d->status.present, kSize) << id;
          EXPECT_TRUE(h.Get(MemberKey(id, g % kSize)).ok()) << id;
        }
      }
    }
  });
  std::vector<std::thread> enders;
  for (uint32_t rank = 0; rank < kSize; ++rank) {
    enders.emplace_back([&, rank] {
      for (uint32_t g = 0; g < kGroups; ++g) {
        const std::string key = MemberKey("c" + std::to_string(g), rank);
        EXPECT_TRUE(
            h.master().PutEnd(MasterHarness::kClient, {&key, 1})[0].ok());
      }
    });
  }
  for (std::thread& t : enders) t.join();
  done.store(true);
  prober.join();
  for (uint32_t g = 0; g < kGroups; ++g) {
    const GroupDescription d = Describe(h.master(), "c" + std::to_string(g));
    EXPECT_EQ(d.status.state, GroupState::kComplete);
    EXPECT_EQ(d.status.present, kSize);
  }
  EXPECT_EQ(h.master().GetStats().group_counters.groups_completed, kGroups);
}

// A batch holds runs of two groups around a plain key. DRAM is full of old
// plain objects, so members find no space halfway through a run: the run
// leaves its group stripe for the eviction round and carries on. Results
// come back in request order and both groups complete.
TEST(MasterGroupsTest, BatchedGroupRunsEvictMidRunAndKeepTheirOrder) {
  MasterHarness h(Config());
  h.AddNode("n", 64 * kObj);
  for (int i = 0; i < 64; ++i) {
    ASSERT_TRUE(h.Put("old" + std::to_string(i), kObj).ok());
  }
  h.clock().Advance(h.master().config().lease_ttl);
  std::vector<PutStartRequest> batch;
  std::vector<std::string> keys;
  const auto add = [&](const std::string& key, PutOptions options) {
    batch.push_back({key, kObj, std::move(options), MasterHarness::kClient});
    keys.push_back(key);
  };
  for (uint32_t i = 0; i < 3; ++i) add(MemberKey("a", i), Member("a", 3, i));
  add("plain", PutOptions{});
  for (uint32_t i = 0; i < 2; ++i) add(MemberKey("b", i), Member("b", 2, i));
  const std::vector<Result<ReplicaDescriptor>> started =
      h.master().PutStart(batch);
  ASSERT_EQ(started.size(), batch.size());
  std::vector<ReplicaId> ids;
  for (size_t i = 0; i < started.size(); ++i) {
    ASSERT_TRUE(started[i].ok()) << i << ": " << started[i].status().ToString();
    ids.push_back(started[i]->id);
  }
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));  // placed in order
  EXPECT_GT(h.master().GetStats().evicted_memory_objects, 0u);
  for (const Status& s : h.master().PutEnd(MasterHarness::kClient, keys)) {
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_EQ(Describe(h.master(), "a").status.state, GroupState::kComplete);
  EXPECT_EQ(Describe(h.master(), "b").status.state, GroupState::kComplete);
  for (const std::string& key : keys) EXPECT_TRUE(h.Get(key).ok()) << key;
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterGroupsTest, ConcurrentMembersCompleteTheGroupOnce) {
  MasterHarness h(Config());
  h.AddNode("n", kMiB);
  std::vector<std::thread> ranks;
  for (uint32_t i = 0; i < 8; ++i) {
    ranks.emplace_back([&, i] {
      EXPECT_TRUE(h.Put(MemberKey("g", i), kObj, Member("g", 8, i)).ok());
    });
  }
  for (std::thread& t : ranks) t.join();
  const GroupDescription d = Describe(h.master(), "g");
  EXPECT_EQ(d.status.state, GroupState::kComplete);
  EXPECT_EQ(d.status.present, 8u);
  ASSERT_EQ(d.members.size(), 8u);
  EXPECT_EQ(d.members[3].key, MemberKey("g", 3));
  EXPECT_EQ(d.members[3].tiers, std::vector<Tier>{Tier::kMemory});
  for (uint32_t i = 0; i < 8; ++i) EXPECT_TRUE(h.Get(MemberKey("g", i)).ok());
  const MasterStats stats = h.master().GetStats();
  EXPECT_EQ(stats.groups.complete, 1u);
  EXPECT_EQ(stats.group_counters.groups_created, 1u);
  EXPECT_EQ(stats.group_counters.groups_completed, 1u);
}

TEST(MasterGroupsTest, ViolationsAreInvalidAndStoreNothing) {
  MasterHarness h(Config());
  h.AddNode("n", kMiB);
  ASSERT_TRUE(h.Put("a", kObj, Member("g", 4, 0)).ok());
  EXPECT_EQ(h.PutStart("b", kObj, Member("g", 5, 1)).status().reason(),
            ErrorReason::kInvalidGroup);
  EXPECT_EQ(h.PutStart("c", kObj, Member("g", 4, 0)).status().reason(),
            ErrorReason::kObjectExists);
  EXPECT_EQ(h.PutStart("d", kObj, Member("g", 4, 4)).status().reason(),
            ErrorReason::kInvalidGroup);
  EXPECT_EQ(h.PutStart("e", kObj, Member("huge", 100000, 1)).status().reason(),
            ErrorReason::kInvalidGroup);
  for (const char* key : {"b", "c", "d", "e"}) {
    EXPECT_FALSE(h.master().DescribeObject(key).ok()) << key;
  }
  const GroupDescription d = Describe(h.master(), "g");
  EXPECT_EQ(d.status.present, 1u);
  EXPECT_EQ(d.members.size(), 1u);
  std::string unknown = "nope";
  EXPECT_EQ(h.master().GetGroup({&unknown, 1})[0].status().reason(),
            ErrorReason::kGroupNotFound);
  EXPECT_TRUE(h.master().Audit().consistent());
}

// A bad group id or shape is refused with INVALID_GROUP and a message that
// says what is wrong, alone or in a run of members sharing the id (which
// is checked once for the run), and stores nothing.
TEST(MasterGroupsTest, BadGroupIdsAndShapesAreRefusedWithTheirReason) {
  MasterHarness h(Config());
  h.AddNode("n", kMiB);
  const auto refused = [&](const std::string& key, const PutOptions& options,
                           std::string_view says) {
    const Status s = h.PutStart(key, kObj, options).status();
    EXPECT_EQ(s.reason(), ErrorReason::kInvalidGroup) << key;
    EXPECT_NE(s.message().find(says), std::string::npos) << s.ToString();
  };
  refused("empty-id", Member("", 2, 0), "group_id must be 1..256 bytes");
  refused("long-id", Member(std::string(kMaxGroupIdBytes + 1, 'g'), 2, 0),
          "group_id must be 1..256 bytes");
  refused("nul-id", Member(std::string("g\0h", 3), 2, 0), "without NUL");
  refused("size-0", Member("g", 0, 0), "group_size must be > 0");
  refused("index-2", Member("g", 2, 2),
          "group_index 2 is not below group_size 2");

  // A run of members with one bad id: every member refused.
  std::vector<PutStartRequest> run;
  for (uint32_t i = 0; i < 3; ++i) {
    run.push_back({MemberKey("bad", i), kObj,
                   Member(std::string("b\0d", 3), 3, i),
                   MasterHarness::kClient});
  }
  const auto refused_run = h.master().PutStart(run);
  ASSERT_EQ(refused_run.size(), 3u);
  for (const auto& started : refused_run) {
    EXPECT_EQ(started.status().reason(), ErrorReason::kInvalidGroup);
    EXPECT_NE(started.status().message().find("without NUL"),
              std::string::npos);
  }
  // A run with a good id and one bad shape: only that member refused.
  run.clear();
  for (uint32_t i = 0; i < 3; ++i) {
    run.push_back({MemberKey("good", i), kObj, Member("good", 2, i),
                   MasterHarness::kClient});
  }
  const auto started = h.master().PutStart(run);
  ASSERT_EQ(started.size(), 3u);
  EXPECT_TRUE(started[0].ok());
  EXPECT_TRUE(started[1].ok());
  EXPECT_EQ(started[2].status().reason(), ErrorReason::kInvalidGroup);
  EXPECT_EQ(h.master().GetStats().objects, 2u);
  EXPECT_EQ(h.master().GetStats().group_counters.groups_created, 1u);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterGroupsTest, BestEffortMembersAreReadableAlone) {
  MasterConfig c = Config();
  c.group_visibility = GroupVisibility::kBestEffort;
  MasterHarness h(c);
  h.AddNode("n", kMiB);
  ASSERT_TRUE(h.Put("a", kObj, Member("g", 2, 0)).ok());
  EXPECT_TRUE(h.Get("a").ok());
  EXPECT_EQ(h.Exists("a")->group->state, GroupState::kFilling);
}

TEST(MasterGroupsTest, RevokedOrTimedOutMemberLeavesTheGroupFilling) {
  MasterHarness h(Config());
  h.AddNode("n", kMiB);
  ASSERT_TRUE(h.Put("a", kObj, Member("g", 3, 0)).ok());
  ASSERT_TRUE(h.PutStart("b", kObj, Member("g", 3, 1)).ok());
  std::string b = "b";
  ASSERT_TRUE(h.master().PutRevoke(MasterHarness::kClient, {&b, 1})[0].ok());
  ASSERT_TRUE(h.PutStart("c", kObj, Member("g", 3, 2)).ok());
  h.clock().Advance(h.master().config().put_timeout);
  EXPECT_EQ(h.master().ReapStalledPuts(), 1u);
  GroupDescription d = Describe(h.master(), "g");
  EXPECT_EQ(d.status.state, GroupState::kFilling);
  EXPECT_EQ(d.members.size(), 1u);
  // Both indexes may be put again, by any key.
  ASSERT_TRUE(h.Put("b2", kObj, Member("g", 3, 1)).ok());
  ASSERT_TRUE(h.Put("c2", kObj, Member("g", 3, 2)).ok());
  EXPECT_EQ(Describe(h.master(), "g").status.state, GroupState::kComplete);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterGroupsTest, RemovePolicyGroupRemovesEveryMember) {
  MasterHarness h(Config());
  h.AddNode("n", kMiB);
  PutGroup(h, "g", 4);
  ASSERT_TRUE(h.Remove(MemberKey("g", 2)).ok());
  for (uint32_t i = 0; i < 4; ++i)
    EXPECT_FALSE(h.Exists(MemberKey("g", i))->exists);
  std::string g = "g";
  EXPECT_EQ(h.master().GetGroup({&g, 1})[0].status().reason(),
            ErrorReason::kGroupNotFound);
  EXPECT_EQ(h.master().Audit().allocated_memory_bytes, 0u);
}

TEST(MasterGroupsTest, RemovePolicyMemberBreaksTheGroup) {
  MasterConfig c = Config();
  c.group_remove_policy = GroupRemovePolicy::kMember;
  MasterHarness h(c);
  h.AddNode("n", kMiB);
  PutGroup(h, "g", 4);
  ASSERT_TRUE(h.Remove(MemberKey("g", 2)).ok());
  const GroupDescription d = Describe(h.master(), "g");
  EXPECT_EQ(d.status.state, GroupState::kBroken);
  EXPECT_EQ(d.break_cause, BreakCause::kRemoved);
  EXPECT_TRUE(h.Exists(MemberKey("g", 0))->exists);
  EXPECT_EQ(h.Get(MemberKey("g", 0)).status().reason(),
            ErrorReason::kGroupIncomplete);
  // Survivors are collected after group_broken_ttl.
  h.clock().Advance(c.group_broken_ttl);
  h.master().SweepGroups();
  EXPECT_FALSE(h.Exists(MemberKey("g", 0))->exists);
  EXPECT_EQ(h.master().Audit().allocated_memory_bytes, 0u);
}

TEST(MasterGroupsTest, RemoveGroupRespectsLeasesUnlessForced) {
  MasterHarness h(Config());
  h.AddNode("n", kMiB);
  PutGroup(h, "g", 2);
  ASSERT_TRUE(h.Get(MemberKey("g", 1)).ok());
  std::string g = "g";
  EXPECT_EQ(h.master().RemoveGroup({&g, 1}, {})[0].reason(),
            ErrorReason::kObjectLeased);
  EXPECT_TRUE(h.Exists(MemberKey("g", 0))->exists);  // nothing changed
  EXPECT_TRUE(h.master().RemoveGroup({&g, 1}, RemoveOptions{true})[0].ok());
  EXPECT_FALSE(h.Exists(MemberKey("g", 1))->exists);
}

TEST(MasterGroupsTest, FillTimeoutExpiresAndRemovesMembers) {
  MasterHarness h(Config());
  h.AddNode("n", kMiB);
  ASSERT_TRUE(h.Put("a", kObj, Member("g", 3, 0)).ok());
  h.clock().Advance(h.master().config().group_fill_timeout -
                    std::chrono::seconds(1));
  h.master().SweepGroups();
  EXPECT_EQ(Describe(h.master(), "g").status.state, GroupState::kFilling);
  h.clock().Advance(std::chrono::seconds(1));
  h.master().SweepGroups();
  EXPECT_EQ(Describe(h.master(), "g").status.state, GroupState::kExpired);
  EXPECT_EQ(h.master().GetStats().group_counters.groups_expired, 1u);
  EXPECT_EQ(h.master().GetStats().groups.expired, 1u);
  EXPECT_FALSE(h.Exists("a")->exists);
  // The record stays for operators, without the removed members.
  EXPECT_TRUE(Describe(h.master(), "g").members.empty());
  EXPECT_EQ(Describe(h.master(), "g").status.present, 0u);
  h.clock().Advance(h.master().config().group_broken_ttl);
  h.master().SweepGroups();
  EXPECT_EQ(h.master().GetStats().groups.total(), 0u);  // collected
  EXPECT_EQ(h.master().GetStats().objects, 0u);
}

TEST(MasterGroupsTest, ExpiredGroupIdCanBePutAgain) {
  MasterHarness h(Config());
  h.AddNode("n", kMiB);
  ASSERT_TRUE(h.Put("a", kObj, Member("g", 2, 0)).ok());
  h.clock().Advance(h.master().config().group_fill_timeout);
  h.master().SweepGroups();
  ASSERT_EQ(Describe(h.master(), "g").status.state, GroupState::kExpired);
  // An engine re-puts the whole block: the id starts afresh.
  ASSERT_TRUE(h.Put("a", kObj, Member("g", 2, 0)).ok());
  ASSERT_TRUE(h.Put("b", kObj, Member("g", 2, 1)).ok());
  EXPECT_EQ(Describe(h.master(), "g").status.state, GroupState::kComplete);
  EXPECT_TRUE(h.Get("a").ok());
}

TEST(MasterGroupsTest, MemberLostWithItsNodeBreaksTheGroup) {
  MasterHarness h(Config());
  h.AddNode("a", kMiB);
  const NodeId b = h.AddNode("b", kMiB);
  PutOptions on_a = Member("g", 2, 0), on_b = Member("g", 2, 1);
  on_a.preferred_node = "a";
  on_b.preferred_node = "b";
  ASSERT_TRUE(h.Put("m0", kObj, on_a).ok());
  ASSERT_TRUE(h.Put("m1", kObj, on_b).ok());
  for (int i = 0; i < 11; ++i) {
    h.clock().Advance(std::chrono::seconds(1));
    ASSERT_TRUE(h.master().Heartbeat(b).ok());
    h.master().ExpireNodes();
  }
  const GroupDescription d = Describe(h.master(), "g");
  EXPECT_EQ(d.status.state, GroupState::kBroken);
  EXPECT_EQ(d.break_cause, BreakCause::kNodeLost);
  EXPECT_EQ(h.master().GetStats().group_counters.groups_broken_node_lost, 1u);
  EXPECT_EQ(h.Get("m1").status().reason(), ErrorReason::kGroupIncomplete);
}

TEST(MasterGroupsTest, OffModeEvictsWholeGroupsOnly) {
  MasterHarness h(Config(OffloadMode::kOff));
  h.AddNode("n", 100 * kObj);
  PutAgedGroups(h);
  EXPECT_GT(h.master().EvictMemory(), 0u);
  int whole = 0;
  for (int g = 0; g < 23; ++g) {
    int present = 0;
    for (uint32_t i = 0; i < 4; ++i) {
      present += h.Exists(MemberKey("g" + std::to_string(g), i))->exists;
    }
    EXPECT_TRUE(present == 0 || present == 4) << g << ": " << present;
    whole += present == 4;
  }
  EXPECT_LT(whole, 23);
  EXPECT_TRUE(h.Exists(MemberKey("g22", 0))->exists);  // the newest stays
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterGroupsTest, OnEvictDropsDramOnlyWhenEveryMemberIsOnSsd) {
  MasterHarness h(Config(OffloadMode::kOnEvict));
  const NodeId node = h.AddNode("n", 100 * kObj, 1000 * kObj);
  PutAgedGroups(h);
  h.master().EvictMemory();
  // Offloads queued for whole groups; a DRAM copy stays until all landed.
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_GE(reply->offloads.size(), 4u);
  ASSERT_TRUE(
      h.master().NotifyOffloadSuccess(node, reply->offloads[0].id).ok());
  const std::string& first = reply->offloads[0].key;
  EXPECT_EQ(h.Tiers(first),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  for (size_t i = 1; i < reply->offloads.size(); ++i) {
    ASSERT_TRUE(
        h.master().NotifyOffloadSuccess(node, reply->offloads[i].id).ok());
  }
  h.master().EvictMemory();
  EXPECT_EQ(h.Tiers(first), std::vector<Tier>{Tier::kLocalDisk});
  for (int g = 0; g < 23; ++g) {
    std::vector<std::vector<Tier>> tiers;
    for (uint32_t i = 0; i < 4; ++i)
      tiers.push_back(h.Tiers(MemberKey("g" + std::to_string(g), i)));
    for (uint32_t i = 1; i < 4; ++i)
      EXPECT_EQ(tiers[i], tiers[0]) << "group " << g;
  }
  const AuditReport audit = h.master().Audit();
  EXPECT_TRUE(audit.consistent());
  EXPECT_EQ(audit.total_refcnt, 0u);
}

// The DRAM of groups whose offloads are in flight counts as about to be
// freed: a second round does not pick more victims for the same need.
TEST(MasterGroupsTest, OnEvictGroupOffloadsCountAsPendingFrees) {
  MasterHarness h(Config(OffloadMode::kOnEvict));
  const NodeId node = h.AddNode("n", 100 * kObj, 1000 * kObj);
  PutAgedGroups(h);
  h.master().EvictMemory();
  const size_t queued = h.master().ListTasks(TaskKind::kOffload).size();
  ASSERT_GT(queued, 0u);
  h.master().EvictMemory();
  EXPECT_EQ(h.master().ListTasks(TaskKind::kOffload).size(), queued);
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  for (const Task& t : reply->offloads) {
    ASSERT_TRUE(h.master()
                    .NotifyOffloadFailure(node, t.id,
                                          Status(ErrorReason::kIoError, "x"))
                    .ok());
  }
  EXPECT_TRUE(h.master().Audit().consistent());
  EXPECT_EQ(h.master().Audit().total_refcnt, 0u);
}

// write_through: a member whose own offload failed is offloaded again when
// its group is evicted, instead of the group leaving the store.
TEST(MasterGroupsTest, WriteThroughRetriesAMissingMemberBeforeEviction) {
  MasterHarness h(Config(OffloadMode::kWriteThrough));
  const NodeId node = h.AddNode("n", 10 * kObj, 1000 * kObj);
  PutGroup(h, "g", 4);
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->offloads.size(), 4u);
  std::string failed;
  for (const Task& t : reply->offloads) {
    if (failed.empty()) {
      failed = t.key;
      ASSERT_TRUE(h.master()
                      .NotifyOffloadFailure(node, t.id,
                                            Status(ErrorReason::kIoError, "x"))
                      .ok());
    } else {
      ASSERT_TRUE(h.master().NotifyOffloadSuccess(node, t.id).ok());
    }
  }
  h.clock().Advance(h.master().config().lease_ttl);
  h.master().EvictMemory(10 * kObj);  // make room for a put of everything
  EXPECT_EQ(Describe(h.master(), "g").status.state, GroupState::kComplete);
  EXPECT_EQ(h.Tiers(failed), std::vector<Tier>{Tier::kMemory});
  reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->offloads.size(), 1u);
  EXPECT_EQ(reply->offloads[0].key, failed);
  ASSERT_TRUE(
      h.master().NotifyOffloadSuccess(node, reply->offloads[0].id).ok());
  h.master().EvictMemory(10 * kObj);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(h.Tiers(MemberKey("g", i)), std::vector<Tier>{Tier::kLocalDisk});
  }
  EXPECT_TRUE(h.Get(failed).ok());
}

// Filling groups cannot be evicted, so their DRAM is capped: past
// group_filling_max_ratio new groups are refused, started ones may finish.
TEST(MasterGroupsTest, FillingGroupsAreCappedButStartedOnesComplete) {
  MasterConfig c = Config();
  c.group_filling_max_ratio = 0.25;
  MasterHarness h(c);
  h.AddNode("n", 16 * kObj);
  ASSERT_TRUE(h.Put(MemberKey("a", 0), kObj, Member("a", 4, 0)).ok());
  ASSERT_TRUE(h.Put(MemberKey("b", 0), kObj, Member("b", 4, 0)).ok());
  ASSERT_TRUE(h.Put(MemberKey("a", 1), kObj, Member("a", 4, 1)).ok());
  ASSERT_TRUE(h.Put(MemberKey("a", 2), kObj, Member("a", 4, 2)).ok());
  // 4 objects of 16 are held by filling groups: a new group is refused...
  Result<ReplicaDescriptor> refused =
      h.PutStart(MemberKey("c", 0), kObj, Member("c", 2, 0));
  EXPECT_EQ(refused.status().reason(), ErrorReason::kFillingGroupsFull);
  EXPECT_EQ(h.master().GetStats().group_counters.groups_refused_filling_full,
            1u);
  EXPECT_FALSE(h.Exists(MemberKey("c", 0))->exists);
  // ...a started one still takes members and completes...
  ASSERT_TRUE(h.Put(MemberKey("a", 3), kObj, Member("a", 4, 3)).ok());
  EXPECT_EQ(Describe(h.master(), "a").status.state, GroupState::kComplete);
  EXPECT_EQ(h.master().GetStats().filling_group_bytes, kObj);  // "b" alone
  // ...and once it did, new groups are welcome again.
  EXPECT_TRUE(h.Put(MemberKey("c", 0), kObj, Member("c", 2, 0)).ok());
  EXPECT_TRUE(h.master().Audit().consistent());
}

// The DRAM filling groups hold follows their members' puts: a retried
// PutStart counts once, a revoked or timed-out put gives its bytes back,
// and a group that completes, breaks or expires holds none.
TEST(MasterGroupsTest, FillingBytesFollowRetriesRevokesAndTimeouts) {
  MasterHarness h(Config());
  h.AddNode("n", 16 * kObj);
  auto filling = [&] { return h.master().GetStats().filling_group_bytes; };
  ASSERT_TRUE(h.PutStart(MemberKey("a", 0), kObj, Member("a", 3, 0)).ok());
  ASSERT_TRUE(h.PutStart(MemberKey("a", 0), kObj, Member("a", 3, 0)).ok());
  EXPECT_EQ(filling(), kObj);  // the retry staged nothing more
  ASSERT_TRUE(h.PutStart(MemberKey("a", 1), kObj, Member("a", 3, 1)).ok());
  EXPECT_EQ(filling(), 2 * kObj);
  const std::string revoked = MemberKey("a", 1);
  ASSERT_TRUE(
      h.master().PutRevoke(MasterHarness::kClient, {&revoked, 1})[0].ok());
  EXPECT_EQ(filling(), kObj);
  EXPECT_EQ(Describe(h.master(), "a").status.state, GroupState::kFilling);
  // The index is free again; a stalled put times out and gives back too.
  ASSERT_TRUE(h.PutStart(MemberKey("a", 1), kObj, Member("a", 3, 1)).ok());
  ASSERT_TRUE(h.PutEnd(MemberKey("a", 0)).ok());
  EXPECT_EQ(filling(), 2 * kObj);
  h.clock().Advance(h.master().config().put_timeout);
  EXPECT_EQ(h.master().ReapStalledPuts(), 1u);
  EXPECT_EQ(filling(), kObj);
  ASSERT_TRUE(h.Put(MemberKey("a", 1), kObj, Member("a", 3, 1)).ok());
  ASSERT_TRUE(h.Put(MemberKey("a", 2), kObj, Member("a", 3, 2)).ok());
  EXPECT_EQ(Describe(h.master(), "a").status.state, GroupState::kComplete);
  EXPECT_EQ(filling(), 0u);
  EXPECT_TRUE(h.master().Audit().consistent());
}

// A member put into a filling group whose object cannot start (its key is
// taken, or DRAM stays full) leaves its index free and the group's DRAM
// count as it was.
TEST(MasterGroupsTest, AMemberWhoseObjectCannotStartLeavesItsIndexFree) {
  MasterHarness h(Config());
  h.AddNode("n", 3 * kObj);
  auto filling = [&] { return h.master().GetStats().filling_group_bytes; };
  ASSERT_TRUE(h.Put(MemberKey("g", 0), kObj, Member("g", 4, 0)).ok());
  ASSERT_TRUE(h.Put("taken", kObj).ok());
  EXPECT_EQ(h.PutStart("taken", kObj, Member("g", 4, 1)).status().reason(),
            ErrorReason::kObjectExists);
  EXPECT_EQ(filling(), kObj);
  EXPECT_EQ(Describe(h.master(), "g").members.size(), 1u);
  ASSERT_TRUE(h.Put(MemberKey("g", 1), kObj, Member("g", 4, 1)).ok());
  EXPECT_EQ(filling(), 2 * kObj);
  // DRAM is full of a filling group's members and a pinned object's
  // bytes: nothing can be evicted for member 2.
  ASSERT_TRUE(h.Remove("taken").ok());
  PutOptions pinned;
  pinned.hard_pin = true;
  ASSERT_TRUE(h.Put("pinned", kObj, pinned).ok());
  EXPECT_EQ(
      h.PutStart(MemberKey("g", 2), kObj, Member("g", 4, 2)).status().reason(),
      ErrorReason::kNoSpace);
  EXPECT_EQ(filling(), 2 * kObj);
  const GroupDescription d = Describe(h.master(), "g");
  EXPECT_EQ(d.status.state, GroupState::kFilling);
  EXPECT_EQ(d.members.size(), 2u);
  // Room again: the index takes its member.
  ASSERT_TRUE(h.Remove("pinned").ok());
  ASSERT_TRUE(h.Put(MemberKey("g", 2), kObj, Member("g", 4, 2)).ok());
  EXPECT_EQ(filling(), 3 * kObj);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterGroupsTest, RestartedNodeRestoresGroupsWithTheirState) {
  MasterHarness h(Config());
  std::vector<SsdInventoryEntry> inventory;
  for (uint32_t i = 0; i < 3; ++i) {
    inventory.push_back({MemberKey("full", i), kObj, GroupSpec{"full", 3, i}});
  }
  inventory.push_back({MemberKey("half", 0), kObj, GroupSpec{"half", 2, 0}});
  h.AddNode("n", kMiB, 64 * kMiB, inventory);
  EXPECT_EQ(Describe(h.master(), "full").status.state, GroupState::kComplete);
  EXPECT_TRUE(h.Get(MemberKey("full", 1)).ok());
  EXPECT_EQ(Describe(h.master(), "half").status.state, GroupState::kFilling);
  EXPECT_EQ(h.Get(MemberKey("half", 0)).status().reason(),
            ErrorReason::kGroupIncomplete);
}

// A restored copy whose index the group gave to another key stays out of
// the group: it never reads as a member of the complete group, and the
// group is untouched. A second copy of a real member changes nothing.
TEST(MasterGroupsTest, RestoredCopyTheGroupDoesNotTakeNeverReadsAsAMember) {
  MasterHarness h(Config());
  h.AddNode("a", kMiB);
  PutGroup(h, "g", 2);
  h.AddNode("b", kMiB, 64 * kMiB,
            {{"stale", kObj, GroupSpec{"g", 2, 0}},
             {"orphan", kObj, GroupSpec{"gone", 2, 1}}});
  EXPECT_EQ(h.Get("stale").status().reason(), ErrorReason::kGroupIncomplete);
  const GroupDescription g = Describe(h.master(), "g");
  EXPECT_EQ(g.status.state, GroupState::kComplete);
  ASSERT_EQ(g.members.size(), 2u);
  EXPECT_EQ(g.members[0].key, MemberKey("g", 0));
  EXPECT_TRUE(h.Get(MemberKey("g", 0)).ok());
  // The other copy started its own group, filling.
  EXPECT_EQ(Describe(h.master(), "gone").status.state, GroupState::kFilling);
  EXPECT_EQ(h.Get("orphan").status().reason(), ErrorReason::kGroupIncomplete);
  EXPECT_TRUE(h.master().Audit().consistent());
}

}  // namespace
}  // namespace master_groups_test
}  // namespace mooncake_tier
