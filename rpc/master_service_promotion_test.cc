// Promotion over the control plane: a real Master behind MasterService,
// the node's side of a promotion (alloc start, success, failure) through
// GrpcMasterLink (the fixture is in master_service_test_util.h).

#include <gtest/gtest.h>

#include "rpc/master_service_test_util.h"

namespace mooncake_tier::rpc {
namespace master_service_promotion_test {
namespace {

using namespace service_test;  // NOLINT(build/namespaces): test helpers

TEST_F(MasterServiceTest, PromotionOverGrpcCommitsADramReplica) {
  // Restored from the node's SSD inventory: the object is SSD-only.
  const NodeId node =
      Register("n1", 4 * kMiB, 64 * kMiB, {{"cold", 1000, std::nullopt}});
  ASSERT_NE(node, kNoNode);
  ASSERT_EQ(harness_.Tiers("cold"), std::vector<Tier>{Tier::kLocalDisk});

  // One read is not enough to promote (admission threshold 2).
  Result<ObjectReplicas> first = Get("cold");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->replicas.size(), 1u);
  EXPECT_EQ(first->replicas[0].tier, Tier::kLocalDisk);
  Result<NodeTasks> quiet =
      link_->PullTasks(node, UINT32_MAX, Duration::zero());
  ASSERT_TRUE(quiet.ok()) << quiet.status().ToString();
  EXPECT_TRUE(quiet->promotions.empty());

  // The second read queues a promotion; the next heartbeat carries it.
  ASSERT_TRUE(Get("cold").ok());
  Result<NodeTasks> reply =
      link_->PullTasks(node, UINT32_MAX, Duration::zero());
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_TRUE(reply->offloads.empty());
  ASSERT_EQ(reply->promotions.size(), 1u);
  const Task task = reply->promotions[0];
  EXPECT_NE(task.id, 0u);
  EXPECT_EQ(task.kind, TaskKind::kPromotion);
  EXPECT_EQ(task.node, node);
  EXPECT_EQ(task.key, "cold");
  EXPECT_FALSE(task.group.has_value());
  EXPECT_EQ(task.source.tier, Tier::kLocalDisk);
  EXPECT_EQ(task.source.node, node);
  EXPECT_EQ(task.source.size, 1000u);
  EXPECT_EQ(task.target.id, 0u);  // nothing staged yet
  EXPECT_FALSE(task.forced);
  EXPECT_EQ(task.state, TaskState::kDispatched);

  // Staging: DRAM on the node's own segment, invisible to readers.
  Result<ReplicaDescriptor> target = AllocStart(*link_, node, task.id);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_NE(target->id, 0u);
  EXPECT_EQ(target->tier, Tier::kMemory);
  EXPECT_EQ(target->state, ReplicaState::kProcessing);
  EXPECT_EQ(target->node, node);
  EXPECT_EQ(target->size, 1000u);
  EXPECT_EQ(harness_.Tiers("cold"), std::vector<Tier>{Tier::kLocalDisk});
  // A retried call gets the same staged replica back.
  Result<ReplicaDescriptor> again = AllocStart(*link_, node, task.id);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->id, target->id);
  EXPECT_EQ(again->offset, target->offset);

  ASSERT_TRUE(PromotionSuccess(*link_, node, task.id).ok());
  EXPECT_EQ(harness_.Tiers("cold"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  Result<ObjectReplicas> after = Get("cold");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_EQ(after->replicas.size(), 2u);
  EXPECT_EQ(after->replicas[0].tier, Tier::kMemory);
  EXPECT_EQ(after->replicas[0].id, target->id);
  EXPECT_EQ(after->replicas[0].offset, target->offset);
  EXPECT_EQ(harness_.master().GetStats().promotion_completed, 1u);

  // The task is gone: every promotion call about it says so.
  EXPECT_EQ(PromotionSuccess(*link_, node, task.id).reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(AllocStart(*link_, node, task.id).status().reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(PromotionFailure(*link_, node, task.id,
                             Status(ErrorReason::kIoError, "eio"))
                .reason(),
            ErrorReason::kTaskNotFound);
  // ... and so does a node that never had it.
  EXPECT_EQ(AllocStart(*link_, node + 100, 12345).status().reason(),
            ErrorReason::kTaskNotFound);
}

TEST_F(MasterServiceTest, PromotionFailureOverGrpcLeavesTheSsdCopy) {
  const NodeId node =
      Register("n1", 4 * kMiB, 64 * kMiB,
               {{"a", 1000, std::nullopt}, {"b", 2000, std::nullopt}});
  ASSERT_NE(node, kNoNode);

  // Staged, then the transfer fails: the staged DRAM copy is freed.
  std::vector<Task> tasks = ReadTwiceAndBeat("a", node);
  ASSERT_EQ(tasks.size(), 1u);
  const TaskId staged = tasks[0].id;
  ASSERT_TRUE(AllocStart(*link_, node, staged).ok());
  ASSERT_TRUE(PromotionFailure(*link_, node, staged,
                               Status(ErrorReason::kIoError, "eio"))
                  .ok());
  EXPECT_EQ(harness_.Tiers("a"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_EQ(harness_.master().GetStats().promotion_transfer_failed, 1u);
  EXPECT_EQ(harness_.master().GetStats().promotion_completed, 0u);
  EXPECT_EQ(PromotionSuccess(*link_, node, staged).reason(),
            ErrorReason::kTaskNotFound);

  // The SSD read fails before anything is staged: counted as source lost.
  tasks = ReadTwiceAndBeat("b", node);
  ASSERT_EQ(tasks.size(), 1u);
  const TaskId unstaged = tasks[0].id;
  // A failure must carry its cause; an OK one is refused, the task stays.
  EXPECT_EQ(PromotionFailure(*link_, node, unstaged, Status::Ok()).reason(),
            ErrorReason::kInvalidArgument);
  ASSERT_TRUE(
      PromotionFailure(*link_, node, unstaged,
                       Status(ErrorReason::kObjectNotFound, "record gone"))
          .ok());
  EXPECT_EQ(harness_.Tiers("b"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_EQ(harness_.master().GetStats().promotion_source_lost, 1u);
  EXPECT_EQ(AllocStart(*link_, node, unstaged).status().reason(),
            ErrorReason::kTaskNotFound);

  // Success before staging is refused and leaves the task alone.
  tasks = ReadTwiceAndBeat("a", node);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(PromotionSuccess(*link_, node, tasks[0].id).reason(),
            ErrorReason::kInvalidArgument);
  ASSERT_TRUE(AllocStart(*link_, node, tasks[0].id).ok());
  ASSERT_TRUE(PromotionSuccess(*link_, node, tasks[0].id).ok());
  EXPECT_EQ(harness_.Tiers("a"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
}

TEST_F(MasterServiceTest, ForcedGroupPromotionOverGrpcCommitsWhole) {
  const NodeId node = Register(
      "n1", 4 * kMiB, 64 * kMiB,
      {{"g0", 100, GroupSpec{"g", 2, 0}}, {"g1", 100, GroupSpec{"g", 2, 1}}});
  ASSERT_NE(node, kNoNode);
  Result<std::vector<TaskId>> queued = harness_.master().PromoteGroup("g");
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  ASSERT_EQ(queued->size(), 2u);

  Result<NodeTasks> reply =
      link_->PullTasks(node, UINT32_MAX, Duration::zero());
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_EQ(reply->promotions.size(), 2u);
  for (const Task& t : reply->promotions) {
    EXPECT_TRUE(t.forced);
    ASSERT_TRUE(t.group.has_value());
    EXPECT_EQ(t.group->group_id, "g");
    EXPECT_EQ(t.key, t.group->group_index == 0 ? "g0" : "g1");
    ASSERT_TRUE(AllocStart(*link_, node, t.id).ok());
  }
  // The first member waits, staged, for the other.
  const Task& first = reply->promotions[0];
  const Task& second = reply->promotions[1];
  ASSERT_TRUE(PromotionSuccess(*link_, node, first.id).ok());
  EXPECT_EQ(harness_.Tiers(first.key), std::vector<Tier>{Tier::kLocalDisk});
  std::vector<Task> listed = harness_.master().ListTasks(TaskKind::kPromotion);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_TRUE(listed[0].state == TaskState::kStaged ||
              listed[1].state == TaskState::kStaged);
  ASSERT_TRUE(PromotionSuccess(*link_, node, second.id).ok());
  EXPECT_EQ(harness_.Tiers("g0"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  EXPECT_EQ(harness_.Tiers("g1"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  EXPECT_EQ(harness_.master().GetStats().promotion_completed, 2u);
}

}  // namespace
}  // namespace master_service_promotion_test
}  // namespace mooncake_tier::rpc
