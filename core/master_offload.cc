// Master: offload tasks (DRAM -> the same node's SSD) and task pins.

#include "core/master.h"

namespace mooncake_tier {

bool Master::QueueOffloadLocked(Shard& shard, const std::string& key,
                                ObjectMeta& meta, Replica& replica,
                                bool drop_source) {
  Task task;
  task.kind = TaskKind::kOffload;
  task.node = replica.desc.node;
  task.key = key;
  task.group = meta.group;
  task.source = replica.desc;
  task.drop_source_on_success = drop_source;
  Result<TaskId> queued = tasks_.Enqueue(std::move(task),
                                         config_.offload_queue_limit);
  if (!queued.ok()) {
    if (queued.status().reason() == ErrorReason::kQueueFull) {
      counters_.offload_queue_full.fetch_add(1, std::memory_order_relaxed);
    }
    return false;
  }
  ++replica.refcnt;
  if (drop_source) pending_offload_drop_bytes_.fetch_add(replica.desc.size);
  counters_.offload_queued.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void Master::Unpin(const Task& task) {
  {
    Shard& shard = objects_.ShardFor(task.key);
    absl::MutexLock lock(&shard.mu);
    auto it = shard.objects.find(task.key);
    if (it != shard.objects.end()) {
      if (Replica* r = it->second.Find(task.source.id)) {
        if (r->refcnt > 0) --r->refcnt;
        return;
      }
    }
  }
  // The object (or this replica) was removed while pinned.
  if (auto freed = detached_.Unpin(task.source.id)) {
    if (freed->tier == Tier::kMemory) {
      nodes_.FreeMemory(freed->node, freed->offset, freed->size);
    }
  }
}

Status Master::NotifyOffloadSuccess(NodeId node, TaskId task_id) {
  MT_ASSIGN_OR_RETURN(const Task task, tasks_.Complete(node, task_id));
  if (task.drop_source_on_success) {
    pending_offload_drop_bytes_.fetch_sub(task.source.size);
  }
  Shard& shard = objects_.ShardFor(task.key);
  bool committed = false;
  {
    absl::MutexLock lock(&shard.mu);
    auto it = shard.objects.find(task.key);
    Replica* source =
        it == shard.objects.end() ? nullptr : it->second.Find(task.source.id);
    if (source != nullptr && nodes_.IsAlive(node)) {
      ObjectMeta& meta = it->second;
      if (source->refcnt > 0) --source->refcnt;
      if (meta.FindDisk(node) == nullptr) {
        ReplicaDescriptor disk;
        disk.id = NextReplicaId();
        disk.tier = Tier::kLocalDisk;
        disk.state = ReplicaState::kComplete;
        disk.node = node;
        disk.size = meta.size;
        meta.replicas.push_back(Replica{disk, 0});
        nodes_.AddSsdUsed(node, static_cast<int64_t>(meta.size));
      }
      counters_.offload_completed.fetch_add(1, std::memory_order_relaxed);
      counters_.offload_bytes.fetch_add(meta.size, std::memory_order_relaxed);
      committed = true;
      const TimePoint now = clock_->Now();
      source = meta.Find(task.source.id);  // push_back may have moved it
      if (task.drop_source_on_success && source->refcnt == 0 &&
          !meta.Leased(now) && !meta.hard_pin) {
        const Replica dropped = *source;
        meta.Erase(dropped.desc.id);
        ReleaseReplicaLocked(shard, task.key, dropped, /*node_alive=*/true);
        counters_.evicted_memory_objects.fetch_add(1,
                                                   std::memory_order_relaxed);
        counters_.evicted_memory_bytes.fetch_add(dropped.desc.size,
                                                 std::memory_order_relaxed);
      }
    }
  }
  if (!committed) {
    // Removed meanwhile: nothing is committed and the node's copy goes.
    counters_.offload_discarded.fetch_add(1, std::memory_order_relaxed);
    Unpin(task);
    tasks_.EnqueueSsdDelete(node, task.key);
  }
  return Status::Ok();
}

Status Master::NotifyOffloadFailure(NodeId node, TaskId task_id,
                                    const Status& cause) {
  MT_ASSIGN_OR_RETURN(const Task task, tasks_.Complete(node, task_id));
  counters_.offload_failed.fetch_add(1, std::memory_order_relaxed);
  FinishFailedOffload(task);
  return Status::Ok();
}

void Master::FinishFailedOffload(const Task& task) {
  if (task.drop_source_on_success) {
    pending_offload_drop_bytes_.fetch_sub(task.source.size);
  }
  Unpin(task);
}

size_t Master::ReapOffloadTasks() {
  const std::vector<Task> expired =
      tasks_.ReapExpired(TaskKind::kOffload, config_.offload_task_timeout);
  for (const Task& task : expired) {
    counters_.offload_timed_out.fetch_add(1, std::memory_order_relaxed);
    FinishFailedOffload(task);
  }
  return expired.size();
}

std::vector<Task> Master::ListTasks(TaskKind kind) const {
  return tasks_.List(kind);
}

}  // namespace mooncake_tier
