#include "core/node_registry.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/two_choice_strategy.h"

namespace mooncake_tier {
namespace node_registry_test {
namespace {

class NodeRegistryTest : public ::testing::Test {
 protected:
  NodeRegistryTest()
      : registry_(&clock_, 64, std::make_unique<TwoChoiceStrategy>(1)) {}

  NodeId Add(const std::string& name, uint64_t dram, uint64_t ssd = 0) {
    NodeSpec spec;
    spec.name = name;
    spec.dram_size = dram;
    spec.ssd_capacity = ssd;
    NodeId replaced;
    Result<NodeId> id = registry_.Register(spec, &replaced);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : kNoNode;
  }

  ManualClock clock_;
  NodeRegistry registry_;
};

TEST_F(NodeRegistryTest, RejectsNamelessNode) {
  NodeId replaced;
  Result<NodeId> id = registry_.Register(NodeSpec{}, &replaced);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().reason(), ErrorReason::kInvalidArgument);
  EXPECT_TRUE(registry_.List().empty());
}

TEST_F(NodeRegistryTest, ReRegistrationRetiresThePreviousIncarnation) {
  const NodeId first = Add("n1", 1 << 20);
  NodeSpec spec;
  spec.name = "n1";
  spec.dram_size = 1 << 20;
  NodeId replaced = kNoNode;
  Result<NodeId> second = registry_.Register(spec, &replaced);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(replaced, first);
  EXPECT_NE(*second, first);
  EXPECT_FALSE(registry_.IsAlive(first));
  EXPECT_EQ(registry_.List().size(), 1u);
  EXPECT_EQ(registry_.ListDead().size(), 1u);
}

// The ranges a registering node already holds bytes in are never handed
// out, from the moment the node can be placed on.
TEST_F(NodeRegistryTest, HeldRangesAreTakenBeforeTheNodeIsVisible) {
  NodeSpec spec;
  spec.name = "n";
  spec.dram_size = 256;
  const NodeRegistry::HeldRange held[] = {{0, 64},
                                          {128, 64},
                                          {32, 64} /* overlaps the first */,
                                          {256, 64} /* outside */};
  std::vector<bool> taken;
  NodeRegistry::Registration how;
  how.held = held;
  how.held_taken = &taken;
  NodeId replaced;
  Result<NodeId> id = registry_.Register(spec, &replaced, how);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(taken, (std::vector<bool>{true, true, false, false}));
  std::vector<uint64_t> offsets;
  for (int i = 0; i < 2; ++i) {
    Result<ReplicaDescriptor> r = registry_.AllocateMemory(64, "");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    offsets.push_back(r->offset);
  }
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(offsets, (std::vector<uint64_t>{64, 192}));
  EXPECT_FALSE(registry_.AllocateMemory(64, "").ok());
  // What the caller does not keep, it frees.
  EXPECT_TRUE(registry_.FreeMemory(*id, 128, 64));
  EXPECT_TRUE(registry_.AllocateMemory(64, "").ok());
}

TEST_F(NodeRegistryTest, SilentNodesTurnSuspectThenDead) {
  const NodeId a = Add("a", 1 << 20);
  const NodeId b = Add("b", 1 << 20);
  clock_.Advance(std::chrono::seconds(6));
  ASSERT_TRUE(registry_.Heartbeat(b).ok());
  EXPECT_TRUE(registry_.ExpireSilent(std::chrono::seconds(10)).empty());
  EXPECT_EQ(registry_.Get(a)->state, NodeState::kSuspect);
  EXPECT_EQ(registry_.Get(b)->state, NodeState::kAlive);
  // A suspect node gets no new placements.
  for (int i = 0; i < 8; ++i) {
    Result<ReplicaDescriptor> r = registry_.AllocateMemory(64, "");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->node, b);
  }
  clock_.Advance(std::chrono::seconds(5));
  EXPECT_EQ(registry_.ExpireSilent(std::chrono::seconds(10)),
            std::vector<NodeId>{a});
  EXPECT_EQ(registry_.Heartbeat(a).reason(), ErrorReason::kNodeNotFound);
}

TEST_F(NodeRegistryTest, PreferredNodeWinsWhenItHasRoom) {
  Add("big", 1 << 20);
  const NodeId small = Add("small", 4096);
  Result<ReplicaDescriptor> r = registry_.AllocateMemory(1024, "small");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->node, small);
  // Too big for the preferred node: placed elsewhere.
  r = registry_.AllocateMemory(8192, "small");
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->node, small);
}

TEST_F(NodeRegistryTest, TwoChoicePlacementBalancesNodes) {
  for (int i = 0; i < 4; ++i) Add("n" + std::to_string(i), 1 << 20);
  for (int i = 0; i < 400; ++i)
    ASSERT_TRUE(registry_.AllocateMemory(1024, "").ok());
  for (const NodeView& n : registry_.List()) {
    EXPECT_GT(n.dram_used, 60u * 1024);
    EXPECT_LT(n.dram_used, 140u * 1024);
  }
}

TEST_F(NodeRegistryTest, NoSpaceWhenNothingFitsAndFreeOfDeadNodeIsIgnored) {
  const NodeId n = Add("n", 4096);
  Result<ReplicaDescriptor> r = registry_.AllocateMemory(4096, "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(registry_.AllocateMemory(64, "").status().reason(),
            ErrorReason::kNoSpace);
  EXPECT_TRUE(registry_.FreeMemory(n, r->offset, 4096));
  EXPECT_FALSE(registry_.FreeMemory(n, r->offset, 4096));  // double free
  ASSERT_TRUE(registry_.Retire(n));
  EXPECT_TRUE(registry_.FreeMemory(n, 0, 64));
  EXPECT_EQ(registry_.MemoryUsage().capacity, 0u);
}

TEST(SsdFillCapTest, LeavesTwiceTheStoresHeadroomForDeadRecords) {
  constexpr uint64_t kMiB = 1 << 20;
  SsdReport big;
  big.capacity_bytes = 512 * kMiB;
  big.put_limit_bytes = 508 * kMiB;  // 4 MiB to compact a file and more
  EXPECT_NEAR(SsdFillCap(big), 1 - 8.0 / 508, 1e-9);
  SsdReport small;
  small.capacity_bytes = 32 * kMiB;
  small.put_limit_bytes = 32 * kMiB - 832 * 1024;  // files of 1 MiB
  EXPECT_NEAR(SsdFillCap(small), 0.948, 0.001);
  // No report yet, or no headroom: no cap; a headroom past a quarter of
  // the limit: never below half.
  EXPECT_EQ(SsdFillCap(SsdReport{}), 1.0);
  SsdReport odd;
  odd.capacity_bytes = 100;
  odd.put_limit_bytes = 50;
  EXPECT_EQ(SsdFillCap(odd), 0.5);
}

}  // namespace
}  // namespace node_registry_test
}  // namespace mooncake_tier
