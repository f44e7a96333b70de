#pragma once

// Work the master hands to nodes: offload and promotion tasks (each pinning
// its source replica while it exists) and SSD deletions. Tasks are queued per
// node, handed out with the node's heartbeat in bounded batches, and leave
// the table when the node reports, when they time out, or with their node.
//
// The table only books tasks; pinning and unpinning replicas is the
// job of the TaskLifecycle that owns it (core/task_lifecycle.h), done
// outside this lock.
//
// Thread safety: thread-safe. Its mutex ranks after the object-table shard
// locks and the node registry: callers may hold those when calling in.

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "mooncake_tier/status.h"
#include "protocol/task.h"
#include "protocol/types.h"

namespace mooncake_tier {

struct TaskCounts {
  uint64_t queued = 0;
  uint64_t dispatched = 0;
};

// Bytes of one node's offload tasks in the table (queued or dispatched).
struct OffloadBytes {
  uint64_t all = 0;
  // Of tasks whose DRAM copy goes once they land (Task::frees_dram): DRAM
  // already on its way out, which eviction does not count as used.
  uint64_t freeing = 0;
};

class TaskTable {
 public:
  explicit TaskTable(const Clock* clock) : clock_(clock) {}

  // Opens the queues of a newly registered node. Work for a node id that
  // was never opened, or was reaped, is refused: ids are never reused, so
  // nothing can pile up for a node that is gone.
  void AddNode(NodeId node);

  // Books a task for `task.node` and returns its id. QUEUE_FULL when that
  // node already has `per_node_limit` tasks of the kind, NODE_NOT_FOUND
  // when the node has no queues (gone).
  Result<TaskId> Enqueue(Task task, uint32_t per_node_limit);

  // Up to `max` queued tasks of `kind` for `node`, oldest first; they become
  // dispatched (their timeout clock restarts).
  std::vector<Task> Dispatch(NodeId node, TaskKind kind, uint32_t max);

  // Removes a task the node reports on. TASK_NOT_FOUND when it is unknown
  // (already reaped) or belongs to another node.
  Result<Task> Complete(NodeId node, TaskId id);

  // A copy of a task still in the table, if it belongs to `node`.
  std::optional<Task> Find(NodeId node, TaskId id) const;
  // Find for each of `ids`, under one lock.
  std::vector<std::optional<Task>> FindAll(NodeId node,
                                           std::span<const TaskId> ids) const;
  // The task of `kind` booked for `key` (at most one), if any.
  std::optional<Task> FindByKey(TaskKind kind, std::string_view key) const;
  // Records a promotion's staged replica. False if the task is gone.
  bool SetTarget(TaskId id, const ReplicaDescriptor& target);
  // Marks `node`'s task kStaged (its part is done; it waits for its group)
  // unless it is doomed, and returns it as it is then. TASK_NOT_FOUND if it
  // is gone or belongs to another node.
  Result<Task> MarkStaged(NodeId node, TaskId id);
  // Marks a promotion doomed (see Task::doomed). False if the task is gone.
  bool MarkDoomed(TaskId id);
  // Removes a task whatever its node. TASK_NOT_FOUND if it is gone.
  Result<Task> Take(TaskId id);
  // Copies of the tasks of `kind` older than `timeout` since they were last
  // queued or dispatched; they stay in the table (remove with Complete).
  std::vector<Task> ListExpired(TaskKind kind, Duration timeout) const;
  // Removes and returns every task of a node and closes its queues.
  std::vector<Task> ReapNode(NodeId node);

  // SSD deletions: keys a node must drop from its SSD store. Dropped (false)
  // for a node that is gone: its store is not reachable any more.
  // Deletions are by key, so one must never reach a node after a newer copy
  // of the key was written there. Two rules make sure of it: if an offload
  // of `key` to `node` is queued or in flight, the deletion is not queued
  // but folded into that task (delete_copy_on_failure: its write replaces
  // the copy, and if it fails the master deletes the key then); and
  // DispatchNodeWork hands out no offload while deletions are backed up, so
  // a deletion reaches the node no later than any offload queued after it.
  bool EnqueueSsdDelete(NodeId node, std::string key);
  std::vector<std::string> DispatchSsdDeletes(NodeId node, uint32_t max);

  struct NodeWork {
    std::vector<std::string> ssd_deletes;  // apply these first
    std::vector<Task> offloads;
  };
  // One heartbeat's work, atomically: up to `max_deletes` deletions, then,
  // only if none are left behind, up to `max_offloads` offload tasks (which
  // become dispatched).
  NodeWork DispatchNodeWork(NodeId node, uint32_t max_offloads,
                            uint32_t max_deletes);

  OffloadBytes OffloadBytesOf(NodeId node) const;

  // Waits until `node` has queued work (a task of either kind or an SSD
  // deletion), Interrupt(node) was called, or `timeout` (real time)
  // passed; true unless the timeout passed. An interrupt is consumed by the
  // wait it ends. A node without queues (never opened, or reaped) has no
  // work.
  bool WaitForWork(NodeId node, Duration timeout);
  // Ends the current (or next) WaitForWork of `node`: its node is stopping.
  void Interrupt(NodeId node);
  bool HasWork(NodeId node) const;

  bool HasTask(TaskKind kind, std::string_view key) const;
  std::vector<Task> List(TaskKind kind) const;
  TaskCounts Counts(TaskKind kind) const;
  size_t PendingSsdDeletes() const;

 private:
  struct PerNode {
    std::deque<TaskId> queued[2];  // by TaskKind
    uint32_t count[2] = {0, 0};    // queued + dispatched, by TaskKind
    std::deque<std::string> ssd_deletes;
    OffloadBytes offload_bytes;
    bool interrupted = false;
  };

  void EraseLocked(absl::flat_hash_map<TaskId, Task>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<Task> DispatchLocked(PerNode& node, TaskKind kind, uint32_t max)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<std::string> DispatchSsdDeletesLocked(PerNode& node, uint32_t max)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  bool HasWorkLocked(NodeId node) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Clock* const clock_;
  mutable Mutex mu_;
  CondVar work_cv_{&mu_};  // signalled when work is queued
  TaskId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<TaskId, Task> tasks_ ABSL_GUARDED_BY(mu_);
  // (kind, key) -> task id, for de-duplication and lookups.
  absl::flat_hash_map<std::string, TaskId> by_key_[2] ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<NodeId, PerNode> per_node_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier
