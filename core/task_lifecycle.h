#pragma once

// The task lifecycle: every movement of bytes between tiers that the
// master asks a node for (offloads DRAM -> SSD, forced eviction's
// offloads, promotions SSD -> DRAM) and the SSD deletions that clean up
// after them, as one sequence:
//
//   queue     Queue(): book the task and pin its source replica
//   dispatch  Dispatch(): hand it to its node with a pull
//   stage     Stage(): where the node writes (kinds that stage: promotion)
//   commit    Report(OK): the bytes landed; the kind's policy commits
//   abandon   Report(error), Reap(), DropNode(), Cancel(): the policy
//             undoes what the task held (pins, staged space, the copy)
//   reap      Reap(): tasks without a report within the kind's timeout
//
// What differs by kind is a TaskPolicy (what commit changes, what abandon
// undoes, what is counted); the master implements one per kind. The
// lifecycle owns the tables the tasks live in (TaskTable, the detached
// replicas their pins keep alive, and the promotion gate whose in-flight
// slots promotion tasks hold) and the rule every step keeps: a task leaves
// the table only under its object's stripe (and, for a grouped kind's
// member, under its group's stripe first), so its exit is ordered with any
// other change to the object, for example a later task of the same key.
//
// Finding a task: a step locates the task by id once (one table lookup,
// which names its key and group), takes the stripes, and then takes or
// changes it in one table operation that also checks it is still booked
// (a report and the reaper may race for it; whichever comes second finds
// it gone). Reports of a batch are located under one table lock.
//
// Grouped kinds (promotion): a group's members are queued together or not
// at all, commit together once every member's bytes are staged, and fail
// together: when one fails, the others end too, except a member whose
// node may still be writing into its staged space (dispatched and staged):
// that one is doomed and ends when its node reports or it times out, so
// its space is not handed out while being written.
//
// Lock order: stripes (the index's) -> node registry -> task table ->
// detached replicas. The steps that take stripes must be called with none
// held; Queue, Cancel and Unpin are called with the object's stripe held.
//
// Thread safety: thread-safe.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/clock.h"
#include "core/detached_replicas.h"
#include "core/dram_directory_log.h"
#include "core/node_registry.h"
#include "core/object_index.h"
#include "core/promotion_gate.h"
#include "core/task_table.h"
#include "mooncake_tier/status.h"
#include "protocol/messages.h"
#include "protocol/task.h"

namespace mooncake_tier {

// Why a task ends without a commit.
enum class TaskEnd : uint8_t {
  kFailed,      // its node reported a failure (the cause says which)
  kTimedOut,    // no report within the kind's task timeout
  kNodeLost,    // its node left (expired or deregistered)
  kNoRoom,      // staging found no room for the bytes
  kSourceLost,  // its object or source replica went before it committed
  kDoomedEnd,   // a doomed member's end (counted when it was doomed)
  kCancelled,   // taken back by the code that queued it
};

// What one kind of task does at each step. Every call but Committed runs
// under the task's object's stripe, with the task already out of the table
// (Stage: still in it).
class TaskPolicy {
 public:
  virtual ~TaskPolicy() = default;
  // Whether the node writes into space the master stages first (Stage).
  virtual bool stages() const { return false; }
  // Whether a group's members commit and fail together.
  virtual bool grouped() const { return false; }
  // Space for the task's bytes; an error ends the task (and its group's)
  // with kNoRoom (NO_SPACE) or kSourceLost (anything else).
  virtual Result<ReplicaDescriptor> Stage(ObjectSlot& object, const Task& task)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  // The node's part landed: make it visible. The policy itself abandons
  // what it cannot commit (its object changed meanwhile).
  virtual void Commit(ObjectSlot& object, const Task& task)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) = 0;
  // Nothing is committed: undo what the task held, count the end.
  virtual void Abandon(ObjectSlot& object, const Task& task, TaskEnd end,
                       const Status& cause)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) = 0;
  // A member doomed by its group's end `end`: count it now (its Abandon
  // comes later with kDoomedEnd).
  virtual void Doomed(const Task& task, TaskEnd end, const Status& cause) {}
  // After a report's Commit, with no stripe held.
  virtual void Committed(const Task& task) {}
};

class TaskLifecycle {
 public:
  // REQUIRES: the promotion options pass Validate(). The index, the
  // registry and the directory log outlive the lifecycle. A complete DRAM
  // replica freed at its last unpin goes through `directory` (its node's
  // entry dropped first) when its node keeps one.
  TaskLifecycle(const Clock* clock, ObjectIndex* index, NodeRegistry* nodes,
                const PromotionOptions& promotion,
                DramDirectoryLog* directory = nullptr);
  TaskLifecycle(const TaskLifecycle&) = delete;
  TaskLifecycle& operator=(const TaskLifecycle&) = delete;

  // The policy of `kind`. REQUIRES: set for every kind before any step;
  // it outlives the lifecycle's use.
  void SetPolicy(TaskKind kind, TaskPolicy* policy);

  // ---- queue ----
  // Opens the queues of a newly registered node.
  void AddNode(NodeId node) { tasks_.AddNode(node); }
  // Books `task` (task.source is `source`'s descriptor) and pins `source`.
  // QUEUE_FULL when its node has `per_node_limit` tasks of the kind,
  // OBJECT_BUSY when the key has one already, NODE_NOT_FOUND when the node
  // is gone. A promotion holds one of the gate's in-flight slots from then
  // on: the caller reserved it (gate().Reserve) and keeps it on an error.
  Result<TaskId> Queue(Replica& source, Task task, uint32_t per_node_limit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  // Takes back a task this caller queued and that no node reported on:
  // abandoned with kCancelled. False when it is no longer booked.
  // `object` is the slot of the task's key.
  bool Cancel(ObjectSlot& object, TaskId id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  // The booked task of `kind` for `key`, if any.
  std::optional<Task> Booked(TaskKind kind, std::string_view key) const {
    return tasks_.FindByKey(kind, key);
  }
  bool HasTask(TaskKind kind, std::string_view key) const {
    return tasks_.HasTask(kind, key);
  }
  // Tells `node` to drop its SSD copy of `key` (see
  // TaskTable::EnqueueSsdDelete). False when the node is gone.
  bool QueueSsdDelete(NodeId node, std::string key) {
    return tasks_.EnqueueSsdDelete(node, std::move(key));
  }

  // ---- dispatch ----
  // One pull's work for `node`: up to `max_deletes` SSD deletions, then
  // (only if none are left behind) up to `max_offloads` offloads, and up
  // to `max_promotions` promotions; the tasks become dispatched.
  NodeTasks Dispatch(NodeId node, uint32_t max_offloads, uint32_t max_deletes,
                     uint32_t max_promotions);
  bool WaitForWork(NodeId node, Duration timeout) {
    return tasks_.WaitForWork(node, timeout);
  }
  bool HasWork(NodeId node) const { return tasks_.HasWork(node); }
  void Interrupt(NodeId node) { tasks_.Interrupt(node); }

  // ---- stage ----
  // Space for the bytes of `node`'s task `id` (a kind that stages). The
  // same answer again for a retried call. TASK_NOT_FOUND when it is not
  // booked (or not of such a kind); the policy's error when there is no
  // space or no source, which ends the task (and its group's).
  Result<ReplicaDescriptor> Stage(NodeId node, TaskId id)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role);

  // ---- commit or abandon ----
  // What `node` reports of its tasks of `kind`: OK (the bytes landed: the
  // policy commits) or why not (the policy abandons). One status per
  // task, in order: TASK_NOT_FOUND for a task unknown, reaped, of another
  // node or another kind; INVALID_ARGUMENT for a success of a staging
  // kind that was never staged.
  struct Outcome {
    TaskId task = 0;
    Status status;  // OK: done
  };
  std::vector<Status> Report(NodeId node, TaskKind kind,
                             std::span<const Outcome> outcomes)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role);

  // ---- reap ----
  // Ends the tasks of `kind` not reported within `timeout` of their
  // dispatch (kTimedOut). Returns how many ended (a grouped kind's
  // siblings included; doomed members ending are not counted again).
  size_t Reap(TaskKind kind, Duration timeout)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role);
  // `node` left: every task it held ends (kNodeLost), a grouped kind's
  // siblings on other nodes too, and its detached replicas are forgotten
  // (its segment is gone). Its queues close.
  void DropNode(NodeId node)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role);

  // ---- pins ----
  // Drops one pin of the task's source replica, wherever it lives now: in
  // the object, or detached (freed at its last pin). `object` is the slot
  // of the task's key.
  void Unpin(ObjectSlot& object, const Task& task)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  // Drops one pin of a detached replica (`id`), freeing its DRAM at the
  // last one.
  void UnpinDetached(ReplicaId id);
  // A pinned replica left its object: it lives on until its last pin, and
  // its range is handed out again not before `reuse_after`.
  void Detach(const Replica& replica, TimePoint reuse_after) {
    detached_.Add(replica, reuse_after);
  }

  // ---- views ----
  std::vector<Task> List(TaskKind kind) const { return tasks_.List(kind); }
  TaskCounts Counts(TaskKind kind) const { return tasks_.Counts(kind); }
  size_t PendingSsdDeletes() const { return tasks_.PendingSsdDeletes(); }
  OffloadBytes OffloadBytesOf(NodeId node) const {
    return tasks_.OffloadBytesOf(node);
  }
  const DetachedReplicas& detached() const { return detached_; }
  PromotionGate& gate() { return gate_; }
  const PromotionGate& gate() const { return gate_; }

 private:
  TaskPolicy& policy(TaskKind kind) const {
    return *policies_[static_cast<size_t>(kind)];
  }
  bool Grouped(const Task& task) const {
    return task.group.has_value() && policy(task.kind).grouped();
  }
  Status ReportOne(NodeId node, TaskKind kind, const Task& found,
                   const Status& outcome)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role);
  // A grouped member's success: staged until every member is, then all
  // commit.
  Status StageMember(NodeId node, const Task& found)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role);
  // Ends `task` without commit and, for a grouped kind's member, its
  // group's other tasks (dooming those being written). Each task's end is
  // counted once (by its policy).
  struct Ended {
    bool self = false;   // `task` itself ended here (not settled meanwhile)
    size_t counted = 0;  // tasks whose end was counted here (doomed too)
  };
  Ended Fail(const Task& task, TaskEnd end, const Status& cause)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role);
  // Ends a doomed task (kDoomedEnd) the node reported on or that timed out.
  void EndDoomed(const Task& task)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role);
  // Takes task `id` of `key` out of the table if still booked and
  // abandons it (a doomed one with kDoomedEnd: counted when it was doomed).
  enum class Abandoned : uint8_t { kNone, kEnded, kDoomedEnded };
  Abandoned TakeAndAbandon(TaskId id, const std::string& key, TaskEnd end,
                           const Status& cause)
      ABSL_LOCKS_EXCLUDED(object_stripe_role);
  // Book-keeping of a task leaving the table (the gate's slot).
  void Left(const Task& task);

  ObjectIndex* const index_;
  NodeRegistry* const nodes_;
  TaskPolicy* policies_[2] = {nullptr, nullptr};  // by TaskKind
  TaskTable tasks_;
  DetachedReplicas detached_;
  PromotionGate gate_;
  DramDirectoryLog* const directory_;
};

}  // namespace mooncake_tier
