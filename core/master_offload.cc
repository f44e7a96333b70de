// Master: offload tasks (DRAM -> the same node's SSD) and task pins.

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
  task.source = replica.desc;
  task.drop_source_on_success = intent == OffloadIntent::kMove;
  task.frees_dram = intent != OffloadIntent::kCopy;
  task.forced = forced;
  Result<TaskId> queued =
      tasks_.Enqueue(std::move(task), knobs_.offload_queue_limit());
  if (!queued.ok()) {
    if (queued.status().reason() == ErrorReason::kQueueFull) {
      counters_.offload_queue_full.fetch_add(1, std::memory_order_relaxed);
    }
    return queued.status();
  }
  ++replica.refcnt;
  counters_.offload_queued.fetch_add(1, std::memory_order_relaxed);
  if (intent == OffloadIntent::kCopy) {
    counters_.writeback_queued.fetch_add(1, std::memory_order_relaxed);
  }
  return *queued;
}

Result<Task> Master::CompleteOffloadLocked(NodeId node, TaskId id) {
  return tasks_.Complete(node, id);
}

template <typename Fn>
Status Master::WithCompletedOffload(NodeId node, TaskId id, Fn&& fn) {
  std::optional<Task> booked = tasks_.Find(node, id);
  if (!booked) {
    return Status(ErrorReason::kTaskNotFound,
                  "task " + std::to_string(id) +
                      " is unknown to this master (reaped or never issued)");
  }
  // A promotion's id reported as an offload (a confused or hostile node)
  // must not settle the promotion: its in-flight count and pins would
  // never be released. Refused, changing nothing. (Ids are never reused
  // and a task keeps its kind, so the check holds under the lock too.)
  if (booked->kind != TaskKind::kOffload) {
    return Status(ErrorReason::kTaskNotFound,
                  "task " + std::to_string(id) + " is a " +
                      std::string(TaskKindName(booked->kind)) +
                      " task, not an offload");
  }
  return index_.Update(booked->key,
                       [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                           object_stripe_role) -> Status {
                         // Reaped between the lookup and the lock: its reaper
                         // settled it.
                         MT_ASSIGN_OR_RETURN(const Task task,
                                             CompleteOffloadLocked(node, id));
                         fn(object, task);
                         return Status::Ok();
                       });
}

void Master::UnpinLocked(ObjectSlot& object, const Task& task) {
  if (object) {
    if (Replica* r = object->Find(task.source.id)) {
      if (r->refcnt > 0) --r->refcnt;
      return;
    }
  }
  // The object (or this replica) was removed while pinned.
  if (auto freed = detached_.Unpin(task.source.id)) {
    if (freed->tier == Tier::kMemory) {
      nodes_.FreeMemory(freed->node, freed->offset, freed->size);
    }
  }
}

void Master::SettleUncommittedLocked(ObjectSlot& object, const Task& task,
                                     bool delete_copy) {
  UnpinLocked(object, task);
  if (!delete_copy) return;
  const bool replica_there = object && object->FindDisk(task.node) != nullptr;
  // Queued under the stripe lock: it reaches the node before any later
  // offload of this key, so it can only drop this task's copy.
  if (!replica_there) tasks_.EnqueueSsdDelete(task.node, task.key);
}

Status Master::NotifyOffloadSuccess(NodeId node, TaskId task_id) {
  // A forced group eviction is finished once the stripe is released (group
  // stripes rank first).
  std::optional<std::string> finish_group;
  Status done = CommitOffload(node, task_id, &finish_group);
  if (finish_group) FinishForcedGroupEviction(*finish_group);
  return done;
}

Status Master::CommitOffload(NodeId node, TaskId task_id,
                             std::optional<std::string>* finish_group) {
  return WithCompletedOffload(
      node, task_id,
      [&](ObjectSlot& object,
          const Task& task) ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
        Replica* source = !object ? nullptr : object->Find(task.source.id);
        if (source == nullptr || !nodes_.IsAlive(node)) {
          // Removed meanwhile: nothing is committed and the node's copy goes.
          counters_.offload_discarded.fetch_add(1, std::memory_order_relaxed);
          SettleUncommittedLocked(object, task, /*delete_copy=*/true);
          return;
        }
        ObjectMeta& meta = *object;
        if (source->refcnt > 0) --source->refcnt;
        if (meta.FindDisk(node) == nullptr) AddDiskReplica(meta, node);
        nodes_.ResumeOffloads(node);  // its SSD takes writes again
        if (task.forced && task.group) *finish_group = task.group->group_id;
        counters_.offload_completed.fetch_add(1, std::memory_order_relaxed);
        counters_.offload_bytes.fetch_add(meta.size, std::memory_order_relaxed);
        if (!task.frees_dram) {
          counters_.writeback_completed.fetch_add(1, std::memory_order_relaxed);
          counters_.writeback_bytes.fetch_add(meta.size,
                                              std::memory_order_relaxed);
        }
        // Clean now (or about to be dropped): a waiting put may take it.
        space_.Notify();
        source = meta.Find(task.source.id);  // push_back may have moved it
        if (task.drop_source_on_success && source->refcnt == 0 &&
            !meta.Leased(clock_->Now()) && !meta.hard_pin) {
          const Replica dropped = *source;
          meta.Erase(dropped.desc.id);
          ReleaseReplicaLocked(task.key, dropped, /*node_alive=*/true);
          counters_.evicted_memory_objects.fetch_add(1,
                                                     std::memory_order_relaxed);
          counters_.evicted_memory_bytes.fetch_add(dropped.desc.size,
                                                   std::memory_order_relaxed);
        }
      });
}

Status Master::NotifyOffloadFailure(NodeId node, TaskId task_id,
                                    const Status& cause) {
  return WithCompletedOffload(
      node, task_id,
      [&](ObjectSlot& object, const Task& task)
          ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
            counters_.offload_failed.fetch_add(1, std::memory_order_relaxed);
            // A failed SSD write stores nothing, but an older copy the master
            // wanted deleted may still be there.
            SettleUncommittedLocked(object, task, task.delete_copy_on_failure);
            if (cause.reason() == ErrorReason::kNoSpace &&
                !nodes_.OffloadsPaused(node, clock_->Now())) {
              // Its SSD is full: the object stays dirty, offloads there wait
              // (no retry loop) while SSD eviction makes room.
              nodes_.PauseOffloads(node, clock_->Now(), kOffloadPause,
                                   kMaxOffloadPause);
              counters_.offload_pauses.fetch_add(1, std::memory_order_relaxed);
            }
          });
}

size_t Master::ReapOffloadTasks() {
  size_t reaped = 0;
  for (const Task& expired :
       tasks_.ListExpired(TaskKind::kOffload, config_.offload_task_timeout)) {
    Status s = WithCompletedOffload(
        expired.node, expired.id,
        [&](ObjectSlot& object, const Task& task) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
            object_stripe_role) {
          counters_.offload_timed_out.fetch_add(1, std::memory_order_relaxed);
          // The node may still write its copy; the delete follows it.
          SettleUncommittedLocked(object, task, /*delete_copy=*/true);
          ++reaped;
        });
    s.IgnoreError();  // reported meanwhile: settled by the report
  }
  return reaped;
}

std::vector<Task> Master::ListTasks(TaskKind kind) const {
  return tasks_.List(kind);
}

}  // namespace mooncake_tier
