#include "core/task_table.h"

#include <gtest/gtest.h>

namespace mooncake_tier {
namespace task_table_test {
namespace {

Task OffloadOf(const std::string& key, NodeId node) {
  Task task;
  task.kind = TaskKind::kOffload;
  task.node = node;
  task.key = key;
  return task;
}

TEST(TaskTableTest, DispatchIsBoundedAndOldestFirst) {
  ManualClock clock;
  TaskTable table(&clock);
  table.AddNode(1);
  table.AddNode(2);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(table.Enqueue(OffloadOf("k" + std::to_string(i), 1), 100).ok());
  }
  std::vector<Task> first = table.Dispatch(1, TaskKind::kOffload, 3);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0].key, "k0");
  EXPECT_EQ(first[2].key, "k2");
  EXPECT_EQ(table.Dispatch(1, TaskKind::kOffload, 10).size(), 2u);
  EXPECT_TRUE(table.Dispatch(1, TaskKind::kOffload, 10).empty());
  EXPECT_TRUE(table.Dispatch(2, TaskKind::kOffload, 10).empty());
  EXPECT_EQ(table.Counts(TaskKind::kOffload).dispatched, 5u);
}

TEST(TaskTableTest, QueueLimitAndDedupPerKey) {
  ManualClock clock;
  TaskTable table(&clock);
  table.AddNode(1);
  table.AddNode(2);
  ASSERT_TRUE(table.Enqueue(OffloadOf("a", 1), 2).ok());
  EXPECT_EQ(table.Enqueue(OffloadOf("a", 1), 2).status().reason(),
            ErrorReason::kObjectBusy);
  ASSERT_TRUE(table.Enqueue(OffloadOf("b", 1), 2).ok());
  EXPECT_EQ(table.Enqueue(OffloadOf("c", 1), 2).status().reason(),
            ErrorReason::kQueueFull);
  EXPECT_TRUE(table.Enqueue(OffloadOf("c", 2), 2).ok());  // other node
}

TEST(TaskTableTest, CompleteOnlyByTheOwningNode) {
  ManualClock clock;
  TaskTable table(&clock);
  table.AddNode(1);
  table.AddNode(2);
  Result<TaskId> id = table.Enqueue(OffloadOf("a", 1), 10);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(table.Complete(2, *id).status().reason(),
            ErrorReason::kTaskNotFound);
  Result<Task> done = table.Complete(1, *id);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->key, "a");
  EXPECT_FALSE(table.HasTask(TaskKind::kOffload, "a"));
  EXPECT_EQ(table.Complete(1, *id).status().reason(),
            ErrorReason::kTaskNotFound);
}

TEST(TaskTableTest, ReapsExpiredAndWholeNodes) {
  ManualClock clock;
  TaskTable table(&clock);
  table.AddNode(1);
  table.AddNode(2);
  ASSERT_TRUE(table.Enqueue(OffloadOf("old", 1), 10).ok());
  clock.Advance(std::chrono::seconds(20));
  ASSERT_TRUE(table.Enqueue(OffloadOf("new", 1), 10).ok());
  ASSERT_TRUE(table.Enqueue(OffloadOf("other", 2), 10).ok());
  std::vector<Task> expired =
      table.ListExpired(TaskKind::kOffload, std::chrono::seconds(15));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].key, "old");
  ASSERT_TRUE(table.Find(1, expired[0].id).has_value());
  EXPECT_FALSE(table.Find(2, expired[0].id).has_value());
  ASSERT_TRUE(table.Complete(1, expired[0].id).ok());
  EXPECT_EQ(table.ReapNode(1).size(), 1u);
  EXPECT_EQ(table.List(TaskKind::kOffload).size(), 1u);
  // Reaped tasks are never dispatched.
  EXPECT_TRUE(table.Dispatch(1, TaskKind::kOffload, 10).empty());
}

TEST(TaskTableTest, SsdDeletesAreHandedOutInBoundedBatches) {
  ManualClock clock;
  TaskTable table(&clock);
  table.AddNode(1);
  table.AddNode(2);
  for (int i = 0; i < 5; ++i)
    table.EnqueueSsdDelete(1, "k" + std::to_string(i));
  EXPECT_EQ(table.DispatchSsdDeletes(1, 3).size(), 3u);
  EXPECT_EQ(table.PendingSsdDeletes(), 2u);
  EXPECT_EQ(table.DispatchSsdDeletes(1, 3).size(), 2u);
}

// A deletion by key must never reach a node after a newer copy of the key
// was written there: with an offload of the key pending on that node, the
// deletion rides on the task instead of the queue.
TEST(TaskTableTest, DeleteOfAKeyWithAPendingOffloadFoldsIntoTheTask) {
  ManualClock clock;
  TaskTable table(&clock);
  table.AddNode(1);
  table.AddNode(2);
  Result<TaskId> id = table.Enqueue(OffloadOf("k", 1), 10);
  ASSERT_TRUE(id.ok());
  ASSERT_EQ(table.Dispatch(1, TaskKind::kOffload, 10).size(), 1u);
  EXPECT_TRUE(table.EnqueueSsdDelete(1, "k"));
  EXPECT_EQ(table.PendingSsdDeletes(), 0u);
  EXPECT_TRUE(table.EnqueueSsdDelete(2, "k"));  // another node: queued
  EXPECT_EQ(table.PendingSsdDeletes(), 1u);
  Result<Task> done = table.Complete(1, *id);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->delete_copy_on_failure);
  // With the task gone, a deletion of the key is queued again.
  EXPECT_TRUE(table.EnqueueSsdDelete(1, "k"));
  EXPECT_EQ(table.PendingSsdDeletes(), 2u);
}

TEST(TaskTableTest, NodeWorkHoldsOffloadsWhileDeletesAreBackedUp) {
  ManualClock clock;
  TaskTable table(&clock);
  table.AddNode(1);
  for (int i = 0; i < 5; ++i)
    table.EnqueueSsdDelete(1, "d" + std::to_string(i));
  ASSERT_TRUE(table.Enqueue(OffloadOf("k", 1), 10).ok());
  TaskTable::NodeWork first = table.DispatchNodeWork(1, 10, 3);
  EXPECT_EQ(first.ssd_deletes.size(), 3u);
  EXPECT_TRUE(first.offloads.empty());
  TaskTable::NodeWork second = table.DispatchNodeWork(1, 10, 3);
  EXPECT_EQ(second.ssd_deletes.size(), 2u);
  ASSERT_EQ(second.offloads.size(), 1u);
  EXPECT_EQ(second.offloads[0].key, "k");
  EXPECT_TRUE(table.DispatchNodeWork(7, 10, 10).offloads.empty());  // unknown
}

}  // namespace
}  // namespace task_table_test
}  // namespace mooncake_tier

namespace mooncake_tier {
namespace task_table_test {
namespace {

TEST(TaskTableTest, WorkForUnknownOrReapedNodesIsRefused) {
  ManualClock clock;
  TaskTable table(&clock);
  EXPECT_EQ(table.Enqueue(OffloadOf("a", 7), 10).status().reason(),
            ErrorReason::kNodeNotFound);
  EXPECT_FALSE(table.EnqueueSsdDelete(7, "a"));
  table.AddNode(7);
  EXPECT_TRUE(table.EnqueueSsdDelete(7, "a"));
  table.ReapNode(7);
  EXPECT_FALSE(table.EnqueueSsdDelete(7, "b"));
  EXPECT_EQ(table.PendingSsdDeletes(), 0u);
}

}  // namespace
}  // namespace task_table_test
}  // namespace mooncake_tier
