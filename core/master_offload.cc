// Master: offload tasks (DRAM -> the same node's SSD) as a kind of the task
// lifecycle (core/task_lifecycle.h), and the task reports of every kind.

#include "core/master.h"

namespace mooncake_tier {

Result<TaskId> Master::QueueOffloadLocked(std::string_view key,
                                          ObjectMeta& meta, Replica& replica,
                                          OffloadIntent intent, bool forced) {
  if (OffloadsPausedFor(replica.desc.node)) {
    return Status(ErrorReason::kQueueFull,
                  "the SSD of node " + std::to_string(replica.desc.node) +
                      " is full: offloads wait while SSD eviction makes room");
  }
  Task task;
  task.kind = TaskKind::kOffload;
  task.node = replica.desc.node;
  task.key = std::string(key);
  task.group = meta.group_spec();
  task.drop_source_on_success = intent == OffloadIntent::kMove;
  task.frees_dram = intent != OffloadIntent::kCopy;
  task.forced = forced;
  Result<TaskId> queued =
      lifecycle_.Queue(replica, std::move(task), knobs_.offload_queue_limit());
  if (!queued.ok()) {
    if (queued.status().reason() == ErrorReason::kQueueFull) {
      counters_.offload_queue_full.fetch_add(1, std::memory_order_relaxed);
    }
    return queued.status();
  }
  counters_.offload_queued.fetch_add(1, std::memory_order_relaxed);
  if (intent == OffloadIntent::kCopy) {
    counters_.writeback_queued.fetch_add(1, std::memory_order_relaxed);
  }
  return *queued;
}

// ---- Reports (the lifecycle finds each task once and settles it under its
// object's stripe) ----

namespace {

std::vector<TaskLifecycle::Outcome> Successes(std::span<const TaskId> tasks) {
  std::vector<TaskLifecycle::Outcome> out;
  out.reserve(tasks.size());
  for (TaskId id : tasks) out.push_back({id, Status::Ok()});
  return out;
}

std::vector<TaskLifecycle::Outcome> Failures(
    std::span<const TaskFailure> failures) {
  std::vector<TaskLifecycle::Outcome> out;
  out.reserve(failures.size());
  for (const TaskFailure& f : failures) {
    // A failure without a cause is still a failure.
    out.push_back({f.task, f.cause.ok() ? Status(ErrorReason::kInternal,
                                                 "failure reported without "
                                                 "a cause")
                                        : f.cause});
  }
  return out;
}

}  // namespace

std::vector<Status> Master::NotifyOffloadSuccess(
    NodeId node, std::span<const TaskId> tasks) {
  return lifecycle_.Report(node, TaskKind::kOffload, Successes(tasks));
}

std::vector<Status> Master::NotifyOffloadFailure(
    NodeId node, std::span<const TaskFailure> failures) {
  return lifecycle_.Report(node, TaskKind::kOffload, Failures(failures));
}

Status Master::NotifyOffloadSuccess(NodeId node, TaskId task) {
  return NotifyOffloadSuccess(node, std::span<const TaskId>(&task, 1)).front();
}

Status Master::NotifyOffloadFailure(NodeId node, TaskId task,
                                    const Status& cause) {
  const TaskFailure failure{task, cause};
  return NotifyOffloadFailure(node, std::span<const TaskFailure>(&failure, 1))
      .front();
}

std::vector<Status> Master::NotifyPromotionSuccess(
    NodeId node, std::span<const TaskId> tasks) {
  return lifecycle_.Report(node, TaskKind::kPromotion, Successes(tasks));
}

std::vector<Status> Master::NotifyPromotionFailure(
    NodeId node, std::span<const TaskFailure> failures) {
  return lifecycle_.Report(node, TaskKind::kPromotion, Failures(failures));
}

Status Master::NotifyPromotionSuccess(NodeId node, TaskId task) {
  return NotifyPromotionSuccess(node, std::span<const TaskId>(&task, 1))
      .front();
}

Status Master::NotifyPromotionFailure(NodeId node, TaskId task,
                                      const Status& cause) {
  const TaskFailure failure{task, cause};
  return NotifyPromotionFailure(node,
                                std::span<const TaskFailure>(&failure, 1))
      .front();
}

std::vector<Result<ReplicaDescriptor>> Master::PromotionAllocStart(
    NodeId node, std::span<const TaskId> tasks) {
  std::vector<Result<ReplicaDescriptor>> out;
  out.reserve(tasks.size());
  for (TaskId id : tasks) out.push_back(lifecycle_.Stage(node, id));
  return out;
}

Result<ReplicaDescriptor> Master::PromotionAllocStart(NodeId node,
                                                      TaskId task) {
  return lifecycle_.Stage(node, task);
}

size_t Master::ReapOffloadTasks() {
  return lifecycle_.Reap(TaskKind::kOffload, config_.offload_task_timeout);
}

// ---- The offload policy ----

void Master::OffloadTasks::Settle(ObjectSlot& object, const Task& task,
                                  bool delete_copy) {
  m_.lifecycle_.Unpin(object, task);
  if (!delete_copy) return;
  const bool replica_there = object && object->FindDisk(task.node) != nullptr;
  // Queued under the stripe lock: it reaches the node before any later
  // offload of this key, so it can only drop this task's copy.
  if (!replica_there) m_.lifecycle_.QueueSsdDelete(task.node, task.key);
}

void Master::OffloadTasks::Commit(ObjectSlot& object, const Task& task) {
  MasterCounters& counters = m_.counters_;
  const NodeId node = task.node;
  Replica* source = !object ? nullptr : object->Find(task.source.id);
  if (source == nullptr || !m_.nodes_.IsAlive(node)) {
    // Removed meanwhile: nothing is committed and the node's copy goes.
    counters.offload_discarded.fetch_add(1, std::memory_order_relaxed);
    Settle(object, task, /*delete_copy=*/true);
    return;
  }
  ObjectMeta& meta = *object;
  if (source->refcnt > 0) --source->refcnt;
  if (meta.FindDisk(node) == nullptr) m_.AddDiskReplica(meta, node);
  m_.nodes_.ResumeOffloads(node);  // its SSD takes writes again
  counters.offload_completed.fetch_add(1, std::memory_order_relaxed);
  counters.offload_bytes.fetch_add(meta.size, std::memory_order_relaxed);
  if (!task.frees_dram) {
    counters.writeback_completed.fetch_add(1, std::memory_order_relaxed);
    counters.writeback_bytes.fetch_add(meta.size, std::memory_order_relaxed);
  }
  // Clean now (or about to be dropped): a waiting put may take it.
  m_.space_.Notify();
  source = meta.Find(task.source.id);  // push_back may have moved it
  if (task.drop_source_on_success && source->refcnt == 0 &&
      !meta.Leased(m_.clock_->Now()) && !meta.hard_pin) {
    const Replica dropped = *source;
    meta.Erase(dropped.desc.id);
    m_.ReleaseReplicaLocked(task.key, dropped, /*node_alive=*/true);
    counters.evicted_memory_objects.fetch_add(1, std::memory_order_relaxed);
    counters.evicted_memory_bytes.fetch_add(dropped.desc.size,
                                            std::memory_order_relaxed);
  }
}

void Master::OffloadTasks::Committed(const Task& task) {
  // With the stripe released (group stripes rank first).
  if (task.forced && task.group) {
    m_.FinishForcedGroupEviction(task.group->group_id);
  }
}

void Master::OffloadTasks::Abandon(ObjectSlot& object, const Task& task,
                                   TaskEnd end, const Status& cause) {
  MasterCounters& counters = m_.counters_;
  switch (end) {
    case TaskEnd::kFailed:
      counters.offload_failed.fetch_add(1, std::memory_order_relaxed);
      // A failed SSD write stores nothing, but an older copy the master
      // wanted deleted may still be there.
      Settle(object, task, task.delete_copy_on_failure);
      if (cause.reason() == ErrorReason::kNoSpace &&
          !m_.nodes_.OffloadsPaused(task.node, m_.clock_->Now())) {
        // Its SSD is full: the object stays dirty, offloads there wait (no
        // retry loop) while SSD eviction makes room.
        m_.nodes_.PauseOffloads(task.node, m_.clock_->Now(), kOffloadPause,
                                kMaxOffloadPause);
        counters.offload_pauses.fetch_add(1, std::memory_order_relaxed);
      }
      return;
    case TaskEnd::kTimedOut:
      counters.offload_timed_out.fetch_add(1, std::memory_order_relaxed);
      // The node may still write its copy; the delete follows it.
      Settle(object, task, /*delete_copy=*/true);
      return;
    case TaskEnd::kNodeLost:
      // Its node is gone, and its copies with it.
      counters.offload_node_lost.fetch_add(1, std::memory_order_relaxed);
      m_.lifecycle_.Unpin(object, task);
      return;
    default:  // not reported on (cancelled): nothing was written
      m_.lifecycle_.Unpin(object, task);
      return;
  }
}

std::vector<Task> Master::ListTasks(TaskKind kind) const {
  return lifecycle_.List(kind);
}

}  // namespace mooncake_tier
