#include <gtest/gtest.h>

#include "base/byte_units.h"
#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_nodes_test {
namespace {

using testing::MasterHarness;

MasterConfig OnEvict() {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.offload_mode = OffloadMode::kOnEvict;
  return config;
}

TEST(MasterNodesTest, UnknownNodeAndTaskAreClearErrors) {
  MasterHarness h;
  EXPECT_EQ(h.master().Heartbeat(42).reason(), ErrorReason::kNodeNotFound);
  const NodeId node = h.AddNode("n", kMiB);
  EXPECT_EQ(h.master().NotifyOffloadSuccess(node, 999).reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(h.PutStart("k", 10).status().ok(), true);
}

TEST(MasterNodesTest, ExpiryDropsReplicasRemovesOrphansAndReleasesPins) {
  MasterHarness h(OnEvict());
  const NodeId a = h.AddNode("a", kMiB, 64 * kMiB);
  const NodeId b = h.AddNode("b", kMiB, 64 * kMiB);
  PutOptions on_a, on_b;
  on_a.preferred_node = "a";
  on_b.preferred_node = "b";
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(h.Put("a" + std::to_string(i), 64 * 1024, on_a).ok());
    ASSERT_TRUE(h.Put("b" + std::to_string(i), 64 * 1024, on_b).ok());
  }
  ASSERT_TRUE(h.PutStart("a-inflight", 1024, on_a).ok());
  // Pins on a: offloads queued by eviction and dispatched, never reported.
  h.master().EvictMemory(2 * kMiB);
  ASSERT_TRUE(h.master().Heartbeat(a).ok());
  EXPECT_GT(h.master().Audit().total_refcnt, 0u);

  // Only b keeps heartbeating.
  for (int i = 0; i < 11; ++i) {
    h.clock().Advance(std::chrono::seconds(1));
    h.CompleteOffloads(b);  // heartbeats b and finishes its offloads
    h.master().ExpireNodes();
  }
  EXPECT_FALSE(h.master().GetNode(a).has_value());
  for (int i = 0; i < 8; ++i) {
    EXPECT_FALSE(h.Exists("a" + std::to_string(i))->exists) << i;
  }
  EXPECT_FALSE(h.master().DescribeObject("a-inflight").ok());
  // b's objects survive (their DRAM copy may have been offloaded to b's SSD).
  for (int i = 0; i < 8; ++i)
    EXPECT_TRUE(h.Exists("b" + std::to_string(i))->exists);
  const AuditReport audit = h.master().Audit();
  EXPECT_EQ(audit.total_refcnt, 0u);
  EXPECT_EQ(audit.tasks, 0u);
  EXPECT_TRUE(audit.consistent());
  EXPECT_GE(h.master().GetStats().objects_lost, 9u);
  EXPECT_EQ(h.master().GetStats().nodes_expired, 1u);
  EXPECT_EQ(h.master().Heartbeat(a).reason(), ErrorReason::kNodeNotFound);
}

TEST(MasterNodesTest, DeadNodesAreCountedUntilTheyComeBack) {
  MasterHarness h;
  h.AddNode("a", kMiB);
  const NodeId b = h.AddNode("b", kMiB);
  h.AddNode("c", kMiB);
  EXPECT_EQ(h.master().GetStats().nodes_dead, 0u);
  h.clock().Advance(h.master().config().node_ttl);
  ASSERT_TRUE(h.master().Heartbeat(b).ok());
  EXPECT_EQ(h.master().ExpireNodes(), 2u);
  MasterStats s = h.master().GetStats();
  EXPECT_EQ(s.nodes_dead, 2u);
  EXPECT_EQ(s.nodes_alive, 1u);
  EXPECT_EQ(s.nodes_expired, 2u);
  h.AddNode("a", kMiB);  // a restarted and registered again
  s = h.master().GetStats();
  EXPECT_EQ(s.nodes_dead, 1u);
  EXPECT_EQ(s.nodes_alive, 2u);
}

TEST(MasterNodesTest, InventoryOnRegistrationRebuildsSsdObjects) {
  MasterHarness h;
  std::vector<SsdInventoryEntry> inventory = {
      {"x", 100, std::nullopt},
      {"y", 200, GroupSpec{"g", 2, 1}},
      {"", 5, std::nullopt},  // garbage is ignored
  };
  const NodeId node = h.AddNode("n", kMiB, 64 * kMiB, inventory);
  ASSERT_NE(node, kNoNode);
  EXPECT_EQ(h.Tiers("x"), std::vector<Tier>{Tier::kLocalDisk});
  Result<ObjectDescription> y = h.master().DescribeObject("y");
  ASSERT_TRUE(y.ok());
  ASSERT_TRUE(y->group.has_value());
  EXPECT_EQ(y->group->group_index, 1u);
  EXPECT_EQ(h.master().GetStats().inventory_restored, 2u);
  EXPECT_EQ(h.master().GetStats().local_disk.used, 300u);
}

TEST(MasterNodesTest, RestartedNodeLosesDramButKeepsSsd) {
  MasterHarness h(OnEvict());
  const NodeId first = h.AddNode("n", kMiB, 64 * kMiB);
  ASSERT_TRUE(h.Put("dram-only", 1024).ok());
  ASSERT_TRUE(h.Put("offloaded", 1024).ok());
  // Pretend "offloaded" went to SSD: the restarted node reports it.
  const NodeId second =
      h.AddNode("n", kMiB, 64 * kMiB, {{"offloaded", 1024, std::nullopt}});
  EXPECT_NE(second, first);
  EXPECT_FALSE(h.Exists("dram-only")->exists);
  EXPECT_EQ(h.Tiers("offloaded"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterNodesTest, OffloadTimeoutReapsAndUnpins) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kMiB, 64 * kMiB);
  ASSERT_TRUE(h.Put("k", 1024).ok());
  h.master().EvictMemory(kMiB);
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->offloads.size(), 1u);
  EXPECT_EQ(h.master().Audit().total_refcnt, 1u);
  h.clock().Advance(h.master().config().offload_task_timeout);
  EXPECT_EQ(h.master().ReapOffloadTasks(), 1u);
  EXPECT_EQ(h.master().Audit().total_refcnt, 0u);
  // The late report is refused; the object is still in DRAM.
  EXPECT_EQ(
      h.master().NotifyOffloadSuccess(node, reply->offloads[0].id).reason(),
      ErrorReason::kTaskNotFound);
  EXPECT_EQ(h.Tiers("k"), std::vector<Tier>{Tier::kMemory});
  EXPECT_EQ(h.master().GetStats().offload_timed_out, 1u);
  // The node may have written a copy anyway: it is told to drop it, and
  // that deletion comes no later than a new offload of the key.
  h.master().EvictMemory(kMiB);
  reply = h.master().PullTasks(node);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->ssd_deletes, std::vector<std::string>{"k"});
  ASSERT_EQ(reply->offloads.size(), 1u);
  ASSERT_TRUE(
      h.master().NotifyOffloadSuccess(node, reply->offloads[0].id).ok());
  EXPECT_EQ(h.Tiers("k"), std::vector<Tier>{Tier::kLocalDisk});
}

TEST(MasterNodesTest, RemovalDuringOffloadCommitsNothingAndLeaksNothing) {
  MasterHarness h(OnEvict());
  const NodeId node = h.AddNode("n", kMiB, 64 * kMiB);
  ASSERT_TRUE(h.Put("k", 1024).ok());
  h.master().EvictMemory(kMiB);
  Result<NodeTasks> reply = h.master().PullTasks(node);
  ASSERT_EQ(reply->offloads.size(), 1u);
  ASSERT_TRUE(h.Remove("k").ok());
  // The pinned DRAM range is not freed while the node may still read it.
  EXPECT_EQ(h.master().Audit().detached_replicas, 1u);
  EXPECT_GT(h.master().Audit().allocated_memory_bytes, 0u);
  ASSERT_TRUE(
      h.master().NotifyOffloadSuccess(node, reply->offloads[0].id).ok());
  EXPECT_FALSE(h.master().DescribeObject("k").ok());
  const AuditReport audit = h.master().Audit();
  EXPECT_EQ(audit.allocated_memory_bytes, 0u);
  EXPECT_EQ(audit.detached_replicas, 0u);
  EXPECT_EQ(audit.ssd_used_bytes, 0u);
  // The node is told to drop the copy it wrote.
  reply = h.master().PullTasks(node);
  EXPECT_EQ(reply->ssd_deletes, std::vector<std::string>{"k"});
}

TEST(MasterNodesTest, CorruptSsdRecordDropsTheReplica) {
  MasterHarness h;
  const NodeId node =
      h.AddNode("n", kMiB, 64 * kMiB, {{"x", 100, std::nullopt}});
  std::vector<std::string> bad = {"x", "unknown"};
  h.master().ReportSsdCorruption(node, bad);
  EXPECT_FALSE(h.Exists("x")->exists);
  EXPECT_EQ(h.master().GetStats().ssd_corruptions, 2u);
  EXPECT_TRUE(h.master().Audit().consistent());
}

}  // namespace
}  // namespace master_nodes_test
}  // namespace mooncake_tier
