// Offload tasks: the Offloader (core/offloader.h).

#include "core/offloader.h"

#include <string>
#include <utility>

namespace mooncake_tier {

Offloader::Offloader(MasterState* state, ForcedLanded forced_landed)
    : s_(*state), forced_landed_(std::move(forced_landed)) {
  s_.lifecycle.SetPolicy(TaskKind::kOffload, &tasks_);
}

Result<TaskId> Offloader::QueueLocked(std::string_view key, ObjectMeta& meta,
                                      Replica& replica, OffloadIntent intent,
                                      bool forced) {
  if (PausedFor(replica.desc.node)) {
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
  Result<TaskId> queued = s_.lifecycle.Queue(replica, std::move(task),
                                             s_.knobs.offload_queue_limit());
  if (!queued.ok()) {
    if (queued.status().reason() == ErrorReason::kQueueFull) {
      s_.counters.offload_queue_full.fetch_add(1, std::memory_order_relaxed);
    }
    return queued.status();
  }
  s_.counters.offload_queued.fetch_add(1, std::memory_order_relaxed);
  if (intent == OffloadIntent::kCopy) {
    s_.counters.writeback_queued.fetch_add(1, std::memory_order_relaxed);
  }
  return *queued;
}

bool Offloader::QueueGroupLocked(GroupSlot& group, OffloadIntent intent,
                                 bool forced, std::vector<TaskId>* queued,
                                 Status* failed) {
  bool possible = true;
  group.ForEachMember([&](ObjectSlot& member) {
    const Replica* memory =
        member->FindTier(Tier::kMemory, ReplicaState::kComplete);
    if (!member->HasComplete(Tier::kLocalDisk) &&
        (memory == nullptr || !s_.NodeHasSsd(memory->desc.node) ||
         PausedFor(memory->desc.node))) {
      possible = false;
    }
  });
  if (!possible) return false;
  group.ForEachMember([&](ObjectSlot& member) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                          object_stripe_role) {
    ObjectMeta& meta = *member;
    if (meta.HasComplete(Tier::kLocalDisk)) return;
    Replica* memory = meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
    // Already on its way (a writeback before this eviction):
    // that task counts; a second one for the key would be
    // refused anyway.
    if (memory->refcnt > 0) return;
    Result<TaskId> task =
        QueueLocked(member.key(), meta, *memory, intent, forced);
    if (task.ok()) {
      if (queued != nullptr) queued->push_back(*task);
    } else if (failed != nullptr && failed->ok()) {
      *failed = task.status();
    }
  });
  return true;
}

bool Offloader::GroupPausedLocked(const GroupSlot& group) const {
  bool paused = false;
  group.ForEachMember([&](ObjectSlot& member) {
    const Replica* memory =
        member->FindTier(Tier::kMemory, ReplicaState::kComplete);
    if (memory != nullptr && !member->HasComplete(Tier::kLocalDisk) &&
        PausedFor(memory->desc.node)) {
      paused = true;
    }
  });
  return paused;
}

void Offloader::PauseFor(NodeId node) {
  const TimePoint now = s_.clock->Now();
  if (s_.nodes.OffloadsPaused(node, now)) return;
  s_.nodes.PauseOffloads(node, now, kPause, kMaxPause);
  s_.counters.offload_pauses.fetch_add(1, std::memory_order_relaxed);
}

size_t Offloader::Reap() {
  return s_.lifecycle.Reap(TaskKind::kOffload, s_.config.offload_task_timeout);
}

// ---- The offload policy ----

void Offloader::Tasks::Settle(ObjectSlot& object, const Task& task,
                              bool delete_copy) {
  s_.lifecycle.Unpin(object, task);
  if (!delete_copy) return;
  const bool replica_there = object && object->FindDisk(task.node) != nullptr;
  // Queued under the stripe lock: it reaches the node before any later
  // offload of this key, so it can only drop this task's copy.
  if (!replica_there) s_.lifecycle.QueueSsdDelete(task.node, task.key);
}

void Offloader::Tasks::Commit(ObjectSlot& object, const Task& task) {
  MasterCounters& counters = s_.counters;
  const NodeId node = task.node;
  Replica* source = !object ? nullptr : object->Find(task.source.id);
  if (source == nullptr || !s_.nodes.IsAlive(node)) {
    // Removed meanwhile: nothing is committed and the node's copy goes.
    counters.offload_discarded.fetch_add(1, std::memory_order_relaxed);
    Settle(object, task, /*delete_copy=*/true);
    return;
  }
  ObjectMeta& meta = *object;
  if (source->refcnt > 0) --source->refcnt;
  if (meta.FindDisk(node) == nullptr) s_.AddDiskReplica(meta, node);
  s_.nodes.ResumeOffloads(node);  // its SSD takes writes again
  counters.offload_completed.fetch_add(1, std::memory_order_relaxed);
  counters.offload_bytes.fetch_add(meta.size, std::memory_order_relaxed);
  if (!task.frees_dram) {
    counters.writeback_completed.fetch_add(1, std::memory_order_relaxed);
    counters.writeback_bytes.fetch_add(meta.size, std::memory_order_relaxed);
  }
  // Clean now (or about to be dropped): a waiting put may take it.
  s_.space.Notify();
  source = meta.Find(task.source.id);  // push_back may have moved it
  if (task.drop_source_on_success && source->refcnt == 0 &&
      !meta.Leased(s_.clock->Now()) && !meta.hard_pin) {
    const Replica dropped = *source;
    meta.Erase(dropped.desc.id);
    s_.ReleaseReplicaLocked(meta, task.key, dropped, /*node_alive=*/true);
    counters.evicted_memory_objects.fetch_add(1, std::memory_order_relaxed);
    counters.evicted_memory_bytes.fetch_add(dropped.desc.size,
                                            std::memory_order_relaxed);
  }
}

void Offloader::Tasks::Committed(const Task& task) {
  // With the stripe released (group stripes rank first).
  if (task.forced && task.group) {
    o_.forced_landed_(task.group->group_id);
  }
}

void Offloader::Tasks::Abandon(ObjectSlot& object, const Task& task,
                               TaskEnd end, const Status& cause) {
  MasterCounters& counters = s_.counters;
  switch (end) {
    case TaskEnd::kFailed:
      counters.offload_failed.fetch_add(1, std::memory_order_relaxed);
      // A failed SSD write stores nothing, but an older copy the master
      // wanted deleted may still be there.
      Settle(object, task, task.delete_copy_on_failure);
      // Its SSD is full: the object stays dirty, offloads there wait (no
      // retry loop) while SSD eviction makes room.
      if (cause.reason() == ErrorReason::kNoSpace) o_.PauseFor(task.node);
      return;
    case TaskEnd::kTimedOut:
      counters.offload_timed_out.fetch_add(1, std::memory_order_relaxed);
      // The node may still write its copy; the delete follows it.
      Settle(object, task, /*delete_copy=*/true);
      return;
    case TaskEnd::kNodeLost:
      // Its node is gone, and its copies with it.
      counters.offload_node_lost.fetch_add(1, std::memory_order_relaxed);
      s_.lifecycle.Unpin(object, task);
      return;
    default:  // not reported on (cancelled): nothing was written
      s_.lifecycle.Unpin(object, task);
      return;
  }
}

}  // namespace mooncake_tier
