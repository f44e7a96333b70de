// A node that leaves cleanly (Master::DeregisterNode): the node-loss path of
// node_ttl expiry, run at once. Time is a ManualClock that these tests
// never advance unless they say so, so "at once" means at the same instant.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "base/byte_units.h"
#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_deregister_test {
namespace {

using testing::MasterHarness;

constexpr uint64_t kObj = 64 * 1024;

MasterConfig OnEvict() {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.offload_mode = OffloadMode::kOnEvict;
  config.promotion.proactive_low_watermark = 0;  // promotions only on reads
  return config;
}

PutOptions On(const std::string& node) {
  PutOptions options;
  options.preferred_node = node;
  return options;
}

PutOptions MemberOn(const std::string& node, uint32_t index) {
  PutOptions options = On(node);
  options.group = GroupSpec{"g", 2, index};
  return options;
}

// Everything a refused call must leave as it was.
struct Snapshot {
  uint64_t objects, nodes_alive, nodes_dead, nodes_expired, nodes_deregistered,
      objects_lost, memory_used, disk_used, offload_tasks, promotion_tasks;
  bool operator==(const Snapshot&) const = default;
};

Snapshot Take(Master& m) {
  const MasterStats s = m.GetStats();
  return {s.objects,
          s.nodes_alive,
          s.nodes_dead,
          s.nodes_expired,
          s.nodes_deregistered,
          s.objects_lost,
          s.memory.used,
          s.local_disk.used,
          m.ListTasks(TaskKind::kOffload).size(),
          m.ListTasks(TaskKind::kPromotion).size()};
}

TEST(MasterDeregisterTest, LeavingNodeIsDroppedAtOnceLikeAnExpiredOne) {
  MasterHarness h(OnEvict());
  // "a" holds an SSD-only object from its inventory, to be promoted.
  const NodeId a = h.AddNode("a", kMiB, 64 * kMiB, {{"s", kObj, std::nullopt}});
  const NodeId b = h.AddNode("b", kMiB, 64 * kMiB);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(h.Put("a" + std::to_string(i), kObj, On("a")).ok());
    ASSERT_TRUE(h.Put("b" + std::to_string(i), kObj, On("b")).ok());
  }
  ASSERT_TRUE(h.PutStart("a-inflight", kObj, On("a")).ok());
  // A complete group with one member on each node.
  ASSERT_TRUE(h.Put("m0", kObj, MemberOn("a", 0)).ok());
  ASSERT_TRUE(h.Put("m1", kObj, MemberOn("b", 1)).ok());
  // Work in flight on a: offloads queued by eviction, and a promotion of
  // "s" (read twice: the default admission threshold), dispatched and
  // staged, never reported. b finishes its own offloads.
  h.master().EvictMemory(2 * kMiB);
  ASSERT_TRUE(h.Get("s").ok());
  ASSERT_TRUE(h.Get("s").ok());
  h.CompleteOffloads(b);
  Result<NodeTasks> work = h.master().PullTasks(a);
  ASSERT_TRUE(work.ok());
  ASSERT_FALSE(work->offloads.empty());
  ASSERT_EQ(work->promotions.size(), 1u);
  ASSERT_TRUE(h.master().PromotionAllocStart(a, work->promotions[0].id).ok());
  ASSERT_GT(h.master().Audit().total_refcnt, 0u);
  const TimePoint before = h.clock().Now();

  ASSERT_TRUE(h.master().DeregisterNode(a).ok());

  EXPECT_EQ(h.clock().Now(), before);  // no time passed: not by node_ttl
  EXPECT_FALSE(h.master().GetNode(a).has_value());
  EXPECT_EQ(h.master().FindNode(a).status().reason(),
            ErrorReason::kNodeNotFound);
  // Its replicas went; objects left with none went with them.
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(h.Exists("a" + std::to_string(i))->exists) << i;
    EXPECT_TRUE(h.Exists("b" + std::to_string(i))->exists) << i;
  }
  EXPECT_FALSE(h.master().DescribeObject("a-inflight").ok());
  EXPECT_FALSE(h.Exists("s")->exists);
  // The group that lost a member is broken, by node loss.
  Result<GroupDescription> g =
      std::move(h.master().GetGroup(std::vector<std::string>{"g"})[0]);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->status.state, GroupState::kBroken);
  EXPECT_EQ(g->break_cause, BreakCause::kNodeLost);
  EXPECT_EQ(h.Get("m1").status().reason(), ErrorReason::kGroupIncomplete);
  // Its tasks were reaped and every pin released; late reports are refused.
  EXPECT_TRUE(h.master().ListTasks(TaskKind::kOffload).empty());
  EXPECT_TRUE(h.master().ListTasks(TaskKind::kPromotion).empty());
  const AuditReport audit = h.master().Audit();
  EXPECT_TRUE(audit.consistent());
  EXPECT_EQ(audit.total_refcnt, 0u);
  EXPECT_EQ(audit.tasks, 0u);
  EXPECT_EQ(h.master().NotifyOffloadSuccess(a, work->offloads[0].id).reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(h.master().Heartbeat(a).reason(), ErrorReason::kNodeNotFound);

  const MasterStats s = h.master().GetStats();
  EXPECT_EQ(s.nodes_deregistered, 1u);
  EXPECT_EQ(s.nodes_expired, 0u);  // no death by silence
  EXPECT_EQ(s.nodes_dead, 1u);     // kept as dead, as after node_ttl
  EXPECT_EQ(s.nodes_alive, 1u);
  EXPECT_GE(s.objects_lost, 7u);  // a0..a3, a-inflight, m0, s
  EXPECT_EQ(s.offload_node_lost, work->offloads.size());
  EXPECT_EQ(s.promotion_node_lost, 1u);
  EXPECT_EQ(s.group_counters.groups_broken_node_lost, 1u);
  EXPECT_EQ(s.memory.capacity, kMiB);  // only b's segment is left

  // Nothing is left for node_ttl to do.
  h.clock().Advance(h.master().config().node_ttl);
  ASSERT_TRUE(h.master().Heartbeat(b).ok());
  EXPECT_EQ(h.master().ExpireNodes(), 0u);
  EXPECT_EQ(h.master().GetStats().nodes_expired, 0u);
}

TEST(MasterDeregisterTest, UnknownNodeIsRefusedAndChangesNothing) {
  MasterHarness h(OnEvict());
  const NodeId a = h.AddNode("a", kMiB, 64 * kMiB);
  ASSERT_TRUE(h.Put("k", kObj).ok());
  h.master().EvictMemory(kMiB);  // an offload queued: a pin
  const Snapshot before = Take(h.master());

  for (NodeId bogus : {kNoNode, a + 1, NodeId{999}}) {
    const Status s = h.master().DeregisterNode(bogus);
    EXPECT_EQ(s.reason(), ErrorReason::kNodeNotFound) << bogus;
    EXPECT_NE(s.message().find(std::to_string(bogus)), std::string::npos)
        << s.ToString();
  }

  EXPECT_EQ(Take(h.master()), before);
  EXPECT_TRUE(h.master().Heartbeat(a).ok());
  EXPECT_TRUE(h.Exists("k")->exists);
}

TEST(MasterDeregisterTest, SecondDeregisterIsRefusedAndChangesNothing) {
  MasterHarness h;
  const NodeId a = h.AddNode("a", kMiB);
  h.AddNode("b", kMiB);
  ASSERT_TRUE(h.Put("on-b", kObj, On("b")).ok());
  ASSERT_TRUE(h.master().DeregisterNode(a).ok());
  const Snapshot after_first = Take(h.master());
  EXPECT_EQ(after_first.nodes_deregistered, 1u);

  EXPECT_EQ(h.master().DeregisterNode(a).reason(), ErrorReason::kNodeNotFound);

  EXPECT_EQ(Take(h.master()), after_first);
  EXPECT_TRUE(h.Exists("on-b")->exists);
}

TEST(MasterDeregisterTest, ExpiredOrReplacedNodeIsRefused) {
  MasterHarness h;
  const NodeId silent = h.AddNode("silent", kMiB);
  const NodeId old_r = h.AddNode("r", kMiB);
  const NodeId new_r = h.AddNode("r", kMiB);  // restarted: replaces old_r
  ASSERT_NE(old_r, new_r);
  h.clock().Advance(h.master().config().node_ttl);
  ASSERT_TRUE(h.master().Heartbeat(new_r).ok());
  ASSERT_EQ(h.master().ExpireNodes(), 1u);  // silent
  const Snapshot before = Take(h.master());

  EXPECT_EQ(h.master().DeregisterNode(silent).reason(),
            ErrorReason::kNodeNotFound);
  EXPECT_EQ(h.master().DeregisterNode(old_r).reason(),
            ErrorReason::kNodeNotFound);

  EXPECT_EQ(Take(h.master()), before);
  EXPECT_TRUE(h.master().GetNode(new_r).has_value());  // untouched
}

TEST(MasterDeregisterTest, NodeComesBackWithItsSsdObjects) {
  MasterHarness h;
  const SsdInventoryEntry on_ssd{"s", kObj, std::nullopt};
  const NodeId first = h.AddNode("a", kMiB, 64 * kMiB, {on_ssd});
  ASSERT_TRUE(h.Put("dram", kObj).ok());
  ASSERT_TRUE(h.master().DeregisterNode(first).ok());
  EXPECT_FALSE(h.Exists("s")->exists);
  EXPECT_EQ(h.master().GetStats().nodes_dead, 1u);

  const NodeId second = h.AddNode("a", kMiB, 64 * kMiB, {on_ssd});
  ASSERT_NE(second, kNoNode);
  EXPECT_NE(second, first);
  EXPECT_EQ(h.Tiers("s"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_FALSE(h.Exists("dram")->exists);
  const MasterStats s = h.master().GetStats();
  EXPECT_EQ(s.nodes_dead, 0u);  // back: no longer lost
  EXPECT_EQ(s.nodes_alive, 1u);
  EXPECT_EQ(s.nodes_expired, 0u);  // a fresh registration, no replacement
  EXPECT_TRUE(h.master().Audit().consistent());
}

// Deregistration racing expiry, re-registration and client traffic: the
// node is lost exactly once, and the books balance.
TEST(MasterDeregisterTest, RacingExpiryAndRegistrationLoseTheNodeOnce) {
  for (int round = 0; round < 20; ++round) {
    MasterHarness h(OnEvict());
    const NodeId a = h.AddNode("a", kMiB, 64 * kMiB);
    const NodeId b = h.AddNode("b", kMiB, 64 * kMiB);
    for (int i = 0; i < 8; ++i) {
      ASSERT_TRUE(
          h.Put("k" + std::to_string(i), kObj, On(i % 2 ? "a" : "b")).ok());
    }
    h.master().EvictMemory(kMiB);
    ASSERT_TRUE(h.master().Heartbeat(a).ok());
    h.clock().Advance(h.master().config().node_ttl);
    ASSERT_TRUE(h.master().Heartbeat(b).ok());

    std::atomic<int> refused{0};
    std::thread leave([&] {
      if (!h.master().DeregisterNode(a).ok()) ++refused;
    });
    std::thread expire([&] { h.master().ExpireNodes(); });
    std::thread restart([&] {
      if (round % 2) h.AddNode("a", kMiB, 64 * kMiB);
    });
    std::thread reader([&] {
      for (int i = 0; i < 8; ++i)
        h.Get("k" + std::to_string(i)).status().IgnoreError();
    });
    leave.join();
    expire.join();
    restart.join();
    reader.join();

    const MasterStats s = h.master().GetStats();
    // One of the three retired a: leaving (deregistered), silence or the
    // restart's replacement (both expired).
    EXPECT_EQ(s.nodes_deregistered + s.nodes_expired, 1u) << round;
    EXPECT_EQ(refused.load(), s.nodes_deregistered == 1 ? 0 : 1) << round;
    EXPECT_FALSE(h.master().GetNode(a).has_value());
    for (const Task& task : h.master().ListTasks(TaskKind::kOffload)) {
      EXPECT_EQ(task.node, b) << round;  // a's were reaped
    }
    EXPECT_TRUE(h.master().Audit().consistent()) << round;
  }
}

}  // namespace
}  // namespace master_deregister_test
}  // namespace mooncake_tier
