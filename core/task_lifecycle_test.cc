// The task lifecycle on its own: a real object index and task table, with
// a recording policy per kind standing in for the master's.

#include "core/task_lifecycle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/two_choice_strategy.h"

namespace mooncake_tier {
namespace task_lifecycle_test {
namespace {

constexpr ReplicaId kSourceId = 7;

// Records every step it is asked for; abandon and commit unpin the source.
class RecordingPolicy final : public TaskPolicy {
 public:
  RecordingPolicy(TaskLifecycle* life, bool grouped_staging)
      : life_(life), grouped_staging_(grouped_staging) {}
  bool stages() const override { return grouped_staging_; }
  bool grouped() const override { return grouped_staging_; }
  Result<ReplicaDescriptor> Stage(ObjectSlot&, const Task& task) override {
    if (!stage_error.ok()) return stage_error;
    ReplicaDescriptor desc;
    desc.id = 1000 + task.id;
    desc.tier = Tier::kMemory;
    desc.node = task.node;
    desc.size = task.source.size;
    return desc;
  }
  void Commit(ObjectSlot& object, const Task& task) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
    life_->Unpin(object, task);
    MutexLock lock(&mu_);
    commits.push_back(task.key);
  }
  void Abandon(ObjectSlot& object, const Task& task, TaskEnd end,
               const Status&) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
    life_->Unpin(object, task);
    MutexLock lock(&mu_);
    ends.emplace_back(task.key, end);
  }
  void Doomed(const Task& task, TaskEnd end, const Status&) override {
    MutexLock lock(&mu_);
    doomed.emplace_back(task.key, end);
  }
  void Committed(const Task& task) override {
    MutexLock lock(&mu_);
    after_commit.push_back(task.key);
  }

  Status stage_error;
  // Read by the test once the steps it checks have returned.
  std::vector<std::string> commits;
  std::vector<std::pair<std::string, TaskEnd>> ends;
  std::vector<std::pair<std::string, TaskEnd>> doomed;
  std::vector<std::string> after_commit;

 private:
  TaskLifecycle* const life_;
  const bool grouped_staging_;
  Mutex mu_;
};

class TaskLifecycleTest : public ::testing::Test {
 protected:
  TaskLifecycleTest()
      : nodes_(&clock_, 64, std::make_unique<TwoChoiceStrategy>()),
        life_(&clock_, &index_, &nodes_, PromotionOptions{}),
        offload_(&life_, false),
        promotion_(&life_, true) {
    life_.SetPolicy(TaskKind::kOffload, &offload_);
    life_.SetPolicy(TaskKind::kPromotion, &promotion_);
    life_.AddNode(1);
    life_.AddNode(2);
  }

  // An object `key` with one complete replica on `node`.
  void AddObject(const std::string& key, NodeId node = 1) {
    index_.Update(key, [&](ObjectSlot& object) {
      ObjectMeta& meta = object.Insert();
      meta.size = 100;
      Replica r;
      r.desc.id = kSourceId;
      r.desc.node = node;
      r.desc.size = 100;
      r.desc.tier = Tier::kLocalDisk;
      r.desc.state = ReplicaState::kComplete;
      meta.replicas.push_back(r);
    });
  }

  // A complete group `id` whose member i lives on nodes[i].
  std::vector<std::string> AddGroup(const std::string& id,
                                    const std::vector<NodeId>& nodes) {
    const auto size = static_cast<uint32_t>(nodes.size());
    std::vector<std::string> keys;
    for (uint32_t i = 0; i < size; ++i) {
      const std::string key = id + "/" + std::to_string(i);
      keys.push_back(key);
      AddObject(key, nodes[i]);
      index_.UpdateGroup(id, [&](GroupSlot& group) {
        if (!group) group.Create();
        ASSERT_TRUE(
            group.Reserve(GroupSpec{id, size, i}, key, TimePoint()).ok());
        GroupRef record = group->record;
        index_.Update(key, [&](ObjectSlot& object) {
          object->group = record;
          object->group_index = i;
        });
      });
    }
    return keys;
  }

  Result<TaskId> Queue(TaskKind kind, const std::string& key) {
    return index_.Update(key,
                         [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                             object_stripe_role) -> Result<TaskId> {
                           Task task;
                           task.kind = kind;
                           task.node = object->replicas[0].desc.node;
                           task.key = key;
                           task.group = object->group_spec();
                           return life_.Queue(object->replicas[0],
                                              std::move(task), 1000);
                         });
  }

  // Queues a promotion of every member of `keys`' group, as the master
  // does: the gate's slots first.
  std::vector<TaskId> QueueGroup(const std::vector<std::string>& keys) {
    EXPECT_TRUE(life_.gate().Reserve(static_cast<uint32_t>(keys.size()), 64));
    std::vector<TaskId> ids;
    for (const std::string& key : keys) {
      Result<TaskId> id = Queue(TaskKind::kPromotion, key);
      EXPECT_TRUE(id.ok()) << id.status().ToString();
      ids.push_back(id.ok() ? *id : 0);
    }
    return ids;
  }

  uint32_t Pins(const std::string& key) {
    return index_.Read(key, [](const ObjectMeta* meta) {
      return meta == nullptr ? 0u : meta->replicas[0].refcnt;
    });
  }

  Status Report(NodeId node, TaskKind kind, TaskId id,
                Status outcome = Status::Ok()) {
    const TaskLifecycle::Outcome o{id, std::move(outcome)};
    return life_.Report(node, kind, std::span(&o, 1)).front();
  }

  ManualClock clock_;
  ObjectIndex index_{8, 4};
  NodeRegistry nodes_;
  TaskLifecycle life_;
  RecordingPolicy offload_;
  RecordingPolicy promotion_;
};

TEST_F(TaskLifecycleTest, QueuePinsAndAReportCommitsOnce) {
  AddObject("k");
  Result<TaskId> id = Queue(TaskKind::kOffload, "k");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(Pins("k"), 1u);
  EXPECT_EQ(Queue(TaskKind::kOffload, "k").status().reason(),
            ErrorReason::kObjectBusy);
  EXPECT_EQ(Pins("k"), 1u);

  const NodeTasks work = life_.Dispatch(1, 10, 10, 10);
  ASSERT_EQ(work.offloads.size(), 1u);
  EXPECT_EQ(work.offloads[0].source.id, kSourceId);

  EXPECT_TRUE(Report(1, TaskKind::kOffload, *id).ok());
  EXPECT_EQ(offload_.commits, std::vector<std::string>{"k"});
  EXPECT_EQ(offload_.after_commit, std::vector<std::string>{"k"});
  EXPECT_EQ(Pins("k"), 0u);
  EXPECT_EQ(Report(1, TaskKind::kOffload, *id).reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(offload_.commits.size(), 1u);
  EXPECT_FALSE(life_.HasTask(TaskKind::kOffload, "k"));
}

TEST_F(TaskLifecycleTest, AReportOfAnotherKindOrNodeChangesNothing) {
  AddObject("k");
  const TaskId id = *Queue(TaskKind::kOffload, "k");
  life_.Dispatch(1, 10, 10, 10);
  EXPECT_EQ(Report(1, TaskKind::kPromotion, id).reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(Report(2, TaskKind::kOffload, id).reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_TRUE(offload_.commits.empty());
  EXPECT_TRUE(offload_.ends.empty());
  EXPECT_EQ(Pins("k"), 1u);
  EXPECT_TRUE(Report(1, TaskKind::kOffload, id).ok());
}

TEST_F(TaskLifecycleTest, ABatchIsAnsweredItemByItemInOrder) {
  for (const char* key : {"a", "b", "c"}) AddObject(key);
  const TaskId a = *Queue(TaskKind::kOffload, "a");
  const TaskId b = *Queue(TaskKind::kOffload, "b");
  const TaskId c = *Queue(TaskKind::kOffload, "c");
  life_.Dispatch(1, 10, 10, 10);
  const std::vector<TaskLifecycle::Outcome> batch = {
      {a, Status::Ok()},
      {b, Status(ErrorReason::kNoSpace, "ssd full")},
      {999, Status::Ok()},
      {c, Status::Ok()}};
  const std::vector<Status> out = life_.Report(1, TaskKind::kOffload, batch);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[0].ok());
  EXPECT_TRUE(out[1].ok());
  EXPECT_EQ(out[2].reason(), ErrorReason::kTaskNotFound);
  EXPECT_TRUE(out[3].ok());
  EXPECT_EQ(offload_.commits, (std::vector<std::string>{"a", "c"}));
  ASSERT_EQ(offload_.ends.size(), 1u);
  EXPECT_EQ(offload_.ends[0],
            std::make_pair(std::string("b"), TaskEnd::kFailed));
  EXPECT_EQ(Pins("b"), 0u);
}

TEST_F(TaskLifecycleTest, UnreportedTasksEndAfterTheirTimeout) {
  AddObject("k");
  const TaskId id = *Queue(TaskKind::kOffload, "k");
  life_.Dispatch(1, 10, 10, 10);
  clock_.Advance(std::chrono::seconds(9));
  EXPECT_EQ(life_.Reap(TaskKind::kOffload, std::chrono::seconds(10)), 0u);
  EXPECT_EQ(life_.Reap(TaskKind::kPromotion, std::chrono::seconds(1)), 0u);
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(life_.Reap(TaskKind::kOffload, std::chrono::seconds(10)), 1u);
  ASSERT_EQ(offload_.ends.size(), 1u);
  EXPECT_EQ(offload_.ends[0].second, TaskEnd::kTimedOut);
  EXPECT_EQ(Pins("k"), 0u);
  // The node's late report finds it gone and changes nothing.
  EXPECT_EQ(Report(1, TaskKind::kOffload, id).reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_TRUE(offload_.commits.empty());
}

TEST_F(TaskLifecycleTest, AGroupCommitsTogetherOnceEveryMemberIsStaged) {
  const std::vector<std::string> keys = AddGroup("g", {1, 1, 2});
  const std::vector<TaskId> ids = QueueGroup(keys);
  EXPECT_EQ(life_.gate().in_flight(), 3u);
  life_.Dispatch(1, 10, 10, 10);
  life_.Dispatch(2, 10, 10, 10);
  // A success before its space was staged is refused.
  EXPECT_EQ(Report(1, TaskKind::kPromotion, ids[0]).reason(),
            ErrorReason::kInvalidArgument);
  Result<ReplicaDescriptor> staged = life_.Stage(1, ids[0]);
  ASSERT_TRUE(staged.ok()) << staged.status().ToString();
  // A retried call gets the same answer.
  EXPECT_EQ(life_.Stage(1, ids[0])->id, staged->id);
  ASSERT_TRUE(life_.Stage(1, ids[1]).ok());
  ASSERT_TRUE(life_.Stage(2, ids[2]).ok());

  EXPECT_TRUE(Report(1, TaskKind::kPromotion, ids[0]).ok());
  EXPECT_TRUE(Report(2, TaskKind::kPromotion, ids[2]).ok());
  EXPECT_TRUE(promotion_.commits.empty());  // one member is not staged yet
  EXPECT_TRUE(Report(1, TaskKind::kPromotion, ids[1]).ok());
  std::vector<std::string> committed = promotion_.commits;
  std::sort(committed.begin(), committed.end());
  EXPECT_EQ(committed, keys);
  EXPECT_EQ(promotion_.after_commit.size(), 3u);
  EXPECT_EQ(life_.gate().in_flight(), 0u);
  for (const std::string& key : keys) EXPECT_EQ(Pins(key), 0u);
}

// A member whose object left the group while staged has nothing to commit
// into: it ends with the group's commit, and its gate slot comes back once
// (it was given back twice before the lifecycle: at the commit and again
// when the reaper ended the task left behind).
TEST_F(TaskLifecycleTest, AStagedMemberWhoseObjectLeftEndsWithTheCommit) {
  const std::vector<std::string> keys = AddGroup("g", {1, 1});
  const std::vector<TaskId> ids = QueueGroup(keys);
  life_.Dispatch(1, 10, 10, 10);
  ASSERT_TRUE(life_.Stage(1, ids[0]).ok());
  ASSERT_TRUE(life_.Stage(1, ids[1]).ok());
  ASSERT_TRUE(Report(1, TaskKind::kPromotion, ids[1]).ok());
  index_.Update(keys[1], [](ObjectSlot& object) { object.Erase(); });
  ASSERT_TRUE(Report(1, TaskKind::kPromotion, ids[0]).ok());
  EXPECT_EQ(promotion_.commits, std::vector<std::string>{keys[0]});
  EXPECT_EQ(promotion_.ends, (std::vector<std::pair<std::string, TaskEnd>>{
                                 {keys[1], TaskEnd::kSourceLost}}));
  EXPECT_FALSE(life_.HasTask(TaskKind::kPromotion, keys[1]));
  EXPECT_EQ(life_.gate().in_flight(), 0u);
  clock_.Advance(std::chrono::hours(1));
  EXPECT_EQ(life_.Reap(TaskKind::kPromotion, std::chrono::seconds(1)), 0u);
  EXPECT_EQ(life_.gate().in_flight(), 0u);
}

TEST_F(TaskLifecycleTest, AFailedMemberEndsItsGroupAndDoomsWhatIsBeingWritten) {
  const std::vector<std::string> keys = AddGroup("g", {1, 1, 1, 1});
  const std::vector<TaskId> ids = QueueGroup(keys);
  life_.Dispatch(1, 3, 10, 3);               // ids[3] stays queued
  ASSERT_TRUE(life_.Stage(1, ids[0]).ok());  // being written
  ASSERT_TRUE(life_.Stage(1, ids[1]).ok());
  ASSERT_TRUE(Report(1, TaskKind::kPromotion, ids[1]).ok());  // staged
  const Status cause(ErrorReason::kUnavailable, "rdma write failed");
  ASSERT_TRUE(Report(1, TaskKind::kPromotion, ids[2], cause).ok());

  // The failed member, the staged one and the queued one end now; the one
  // whose bytes may still be arriving is only doomed (counted now).
  std::vector<std::pair<std::string, TaskEnd>> ends = promotion_.ends;
  std::sort(ends.begin(), ends.end());
  EXPECT_EQ(ends, (std::vector<std::pair<std::string, TaskEnd>>{
                      {keys[1], TaskEnd::kFailed},
                      {keys[2], TaskEnd::kFailed},
                      {keys[3], TaskEnd::kFailed}}));
  EXPECT_EQ(promotion_.doomed, (std::vector<std::pair<std::string, TaskEnd>>{
                                   {keys[0], TaskEnd::kFailed}}));
  EXPECT_EQ(Pins(keys[0]), 1u);
  EXPECT_EQ(life_.gate().in_flight(), 1u);

  // Its node's report ends it without a commit and without counting again.
  ASSERT_TRUE(Report(1, TaskKind::kPromotion, ids[0]).ok());
  EXPECT_TRUE(promotion_.commits.empty());
  EXPECT_EQ(promotion_.ends.back(),
            std::make_pair(keys[0], TaskEnd::kDoomedEnd));
  EXPECT_EQ(Pins(keys[0]), 0u);
  EXPECT_EQ(life_.gate().in_flight(), 0u);
}

TEST_F(TaskLifecycleTest, NoRoomToStageEndsTheWholeGroup) {
  const std::vector<std::string> keys = AddGroup("g", {1, 1});
  const std::vector<TaskId> ids = QueueGroup(keys);
  life_.Dispatch(1, 10, 10, 10);
  promotion_.stage_error = Status(ErrorReason::kNoSpace, "dram full");
  EXPECT_EQ(life_.Stage(1, ids[0]).status().reason(), ErrorReason::kNoSpace);
  ASSERT_EQ(promotion_.ends.size(), 2u);
  for (const auto& [key, end] : promotion_.ends) {
    EXPECT_EQ(end, TaskEnd::kNoRoom) << key;
  }
  EXPECT_EQ(life_.Stage(1, ids[1]).status().reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(life_.gate().in_flight(), 0u);
}

TEST_F(TaskLifecycleTest, ALostNodeEndsItsTasksAndTheirGroupsElsewhere) {
  const std::vector<std::string> keys = AddGroup("g", {1, 2});
  QueueGroup(keys);
  AddObject("solo", 1);
  ASSERT_TRUE(Queue(TaskKind::kOffload, "solo").ok());
  AddObject("other", 2);
  ASSERT_TRUE(Queue(TaskKind::kOffload, "other").ok());

  life_.DropNode(1);
  EXPECT_EQ(offload_.ends, (std::vector<std::pair<std::string, TaskEnd>>{
                               {"solo", TaskEnd::kNodeLost}}));
  std::vector<std::pair<std::string, TaskEnd>> ends = promotion_.ends;
  std::sort(ends.begin(), ends.end());
  EXPECT_EQ(ends,
            (std::vector<std::pair<std::string, TaskEnd>>{
                {keys[0], TaskEnd::kNodeLost}, {keys[1], TaskEnd::kNodeLost}}));
  EXPECT_TRUE(life_.HasTask(TaskKind::kOffload, "other"));
  EXPECT_EQ(life_.gate().in_flight(), 0u);
  // Its queues are closed: nothing more is booked for it.
  EXPECT_EQ(Queue(TaskKind::kOffload, "solo").status().reason(),
            ErrorReason::kNodeNotFound);
}

TEST_F(TaskLifecycleTest, CancelTakesBackAQueuedTaskAndItsSlot) {
  AddObject("k");
  ASSERT_TRUE(life_.gate().Reserve(1, 8));
  const TaskId id = *Queue(TaskKind::kPromotion, "k");
  index_.Update("k", [&](ObjectSlot& object)
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
                           EXPECT_TRUE(life_.Cancel(object, id));
                           EXPECT_FALSE(life_.Cancel(object, id));
                         });
  EXPECT_EQ(promotion_.ends, (std::vector<std::pair<std::string, TaskEnd>>{
                                 {"k", TaskEnd::kCancelled}}));
  EXPECT_EQ(Pins("k"), 0u);
  EXPECT_EQ(life_.gate().in_flight(), 0u);
}

// Reports and the reaper race for the same tasks: each task ends exactly
// once, committed or timed out, and every pin is dropped.
TEST_F(TaskLifecycleTest, ReportsRacingTheReaperEndEachTaskOnce) {
  constexpr int kTasks = 400;
  std::vector<TaskId> ids;
  for (int i = 0; i < kTasks; ++i) {
    const std::string key = "k" + std::to_string(i);
    AddObject(key);
    ids.push_back(*Queue(TaskKind::kOffload, key));
  }
  life_.Dispatch(1, kTasks, 10, 0);
  clock_.Advance(std::chrono::seconds(5));
  std::atomic<int> reported{0};
  std::thread reporter([&] {
    for (int i = 0; i < kTasks; i += 8) {
      std::vector<TaskLifecycle::Outcome> batch;
      for (int j = i; j < i + 8; ++j) batch.push_back({ids[j], Status::Ok()});
      for (const Status& s : life_.Report(1, TaskKind::kOffload, batch)) {
        if (s.ok()) reported.fetch_add(1);
      }
    }
  });
  const size_t reaped = life_.Reap(TaskKind::kOffload, std::chrono::seconds(1));
  reporter.join();
  EXPECT_EQ(static_cast<size_t>(reported.load()), offload_.commits.size());
  EXPECT_EQ(reaped, offload_.ends.size());
  EXPECT_EQ(offload_.commits.size() + offload_.ends.size(),
            static_cast<size_t>(kTasks));
  for (int i = 0; i < kTasks; ++i) {
    EXPECT_EQ(Pins("k" + std::to_string(i)), 0u);
  }
  EXPECT_EQ(life_.Counts(TaskKind::kOffload).dispatched, 0u);
}

}  // namespace
}  // namespace task_lifecycle_test
}  // namespace mooncake_tier
