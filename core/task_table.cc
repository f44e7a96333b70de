#include "core/task_table.h"

#include <algorithm>

namespace mooncake_tier {
namespace {

size_t KindIndex(TaskKind kind) { return static_cast<size_t>(kind); }

}  // namespace

void TaskTable::AddNode(NodeId node) {
  MutexLock lock(&mu_);
  per_node_.try_emplace(node);
}

Result<TaskId> TaskTable::Enqueue(Task task, uint32_t per_node_limit) {
  MutexLock lock(&mu_);
  const size_t k = KindIndex(task.kind);
  auto queues = per_node_.find(task.node);
  if (queues == per_node_.end()) {
    return Status(ErrorReason::kNodeNotFound,
                  "node " + std::to_string(task.node) + " is gone");
  }
  PerNode& node = queues->second;
  if (node.count[k] >= per_node_limit) {
    return Status(ErrorReason::kQueueFull,
                  std::string(TaskKindName(task.kind)) + " queue of node " +
                      std::to_string(task.node) + " is full");
  }
  if (by_key_[k].contains(task.key)) {
    return Status(
        ErrorReason::kObjectBusy,
        std::string(TaskKindName(task.kind)) + " already in flight for key");
  }
  task.id = next_id_++;
  task.state = TaskState::kQueued;
  task.created = task.dispatched = clock_->Now();
  node.queued[k].push_back(task.id);
  ++node.count[k];
  if (task.kind == TaskKind::kOffload) {
    node.offload_bytes.all += task.source.size;
    if (task.frees_dram) node.offload_bytes.freeing += task.source.size;
  }
  by_key_[k].emplace(task.key, task.id);
  const TaskId id = task.id;
  tasks_.emplace(id, std::move(task));
  work_cv_.SignalAll();
  return id;
}

std::vector<Task> TaskTable::Dispatch(NodeId node_id, TaskKind kind,
                                      uint32_t max) {
  MutexLock lock(&mu_);
  auto it = per_node_.find(node_id);
  if (it == per_node_.end()) return {};
  return DispatchLocked(it->second, kind, max);
}

TaskTable::NodeWork TaskTable::DispatchNodeWork(NodeId node_id,
                                                uint32_t max_offloads,
                                                uint32_t max_deletes) {
  MutexLock lock(&mu_);
  NodeWork work;
  auto it = per_node_.find(node_id);
  if (it == per_node_.end()) return work;
  work.ssd_deletes = DispatchSsdDeletesLocked(it->second, max_deletes);
  if (it->second.ssd_deletes.empty()) {
    work.offloads =
        DispatchLocked(it->second, TaskKind::kOffload, max_offloads);
  }
  return work;
}

std::vector<Task> TaskTable::DispatchLocked(PerNode& node, TaskKind kind,
                                            uint32_t max) {
  std::vector<Task> out;
  auto& queue = node.queued[KindIndex(kind)];
  const TimePoint now = clock_->Now();
  while (!queue.empty() && out.size() < max) {
    const TaskId id = queue.front();
    queue.pop_front();
    auto task = tasks_.find(id);
    if (task == tasks_.end()) continue;  // reaped while queued
    task->second.state = TaskState::kDispatched;
    task->second.dispatched = now;
    out.push_back(task->second);
  }
  return out;
}

void TaskTable::EraseLocked(absl::flat_hash_map<TaskId, Task>::iterator it) {
  const Task& task = it->second;
  const size_t k = KindIndex(task.kind);
  by_key_[k].erase(task.key);
  auto node = per_node_.find(task.node);
  if (node != per_node_.end()) {
    --node->second.count[k];
    if (task.kind == TaskKind::kOffload) {
      OffloadBytes& bytes = node->second.offload_bytes;
      bytes.all -= std::min(bytes.all, task.source.size);
      if (task.frees_dram) {
        bytes.freeing -= std::min(bytes.freeing, task.source.size);
      }
    }
    // A queued id left behind is skipped by Dispatch; drop it eagerly when
    // it is at the front so the deque does not keep dead ids.
    auto& queue = node->second.queued[k];
    if (task.state == TaskState::kQueued) {
      auto pos = std::find(queue.begin(), queue.end(), task.id);
      if (pos != queue.end()) queue.erase(pos);
    }
  }
  tasks_.erase(it);
}

Result<Task> TaskTable::Complete(NodeId node, TaskId id) {
  MutexLock lock(&mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end() || it->second.node != node) {
    return Status(ErrorReason::kTaskNotFound,
                  "task " + std::to_string(id) +
                      " is unknown to this master (reaped or never issued)");
  }
  Task task = it->second;
  EraseLocked(it);
  return task;
}

std::optional<Task> TaskTable::FindByKey(TaskKind kind,
                                         std::string_view key) const {
  MutexLock lock(&mu_);
  const auto& index = by_key_[KindIndex(kind)];
  auto it = index.find(absl::string_view(key.data(), key.size()));
  if (it == index.end()) return std::nullopt;
  return tasks_.at(it->second);
}

bool TaskTable::SetTarget(TaskId id, const ReplicaDescriptor& target) {
  MutexLock lock(&mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return false;
  it->second.target = target;
  return true;
}

Result<Task> TaskTable::MarkStaged(NodeId node, TaskId id) {
  MutexLock lock(&mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end() || it->second.node != node) {
    return Status(ErrorReason::kTaskNotFound,
                  "task " + std::to_string(id) + " is no longer booked");
  }
  if (!it->second.doomed) it->second.state = TaskState::kStaged;
  return it->second;
}

bool TaskTable::MarkDoomed(TaskId id) {
  MutexLock lock(&mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return false;
  it->second.doomed = true;
  return true;
}

Result<Task> TaskTable::Take(TaskId id) {
  MutexLock lock(&mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) {
    return Status(ErrorReason::kTaskNotFound,
                  "task " + std::to_string(id) + " is no longer booked");
  }
  Task task = it->second;
  EraseLocked(it);
  return task;
}

std::optional<Task> TaskTable::Find(NodeId node, TaskId id) const {
  MutexLock lock(&mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end() || it->second.node != node) return std::nullopt;
  return it->second;
}

std::vector<std::optional<Task>> TaskTable::FindAll(
    NodeId node, std::span<const TaskId> ids) const {
  std::vector<std::optional<Task>> out;
  out.reserve(ids.size());
  MutexLock lock(&mu_);
  for (TaskId id : ids) {
    auto it = tasks_.find(id);
    if (it == tasks_.end() || it->second.node != node) {
      out.emplace_back();
    } else {
      out.emplace_back(it->second);
    }
  }
  return out;
}

std::vector<Task> TaskTable::ListExpired(TaskKind kind,
                                         Duration timeout) const {
  const TimePoint now = clock_->Now();
  MutexLock lock(&mu_);
  std::vector<Task> out;
  for (const auto& [id, task] : tasks_) {
    if (task.kind == kind && now - task.dispatched >= timeout) {
      out.push_back(task);
    }
  }
  return out;
}

std::vector<Task> TaskTable::ReapNode(NodeId node) {
  MutexLock lock(&mu_);
  std::vector<Task> out;
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    auto current = it++;
    if (current->second.node != node) continue;
    out.push_back(current->second);
    EraseLocked(current);
  }
  per_node_.erase(node);
  return out;
}

bool TaskTable::EnqueueSsdDelete(NodeId node, std::string key) {
  MutexLock lock(&mu_);
  auto queues = per_node_.find(node);
  if (queues == per_node_.end()) return false;
  const auto& offloads = by_key_[KindIndex(TaskKind::kOffload)];
  if (auto pending = offloads.find(key); pending != offloads.end()) {
    Task& task = tasks_.at(pending->second);
    if (task.node == node) {
      task.delete_copy_on_failure = true;  // folded: see the header
      return true;
    }
  }
  queues->second.ssd_deletes.push_back(std::move(key));
  work_cv_.SignalAll();
  return true;
}

std::vector<std::string> TaskTable::DispatchSsdDeletes(NodeId node,
                                                       uint32_t max) {
  MutexLock lock(&mu_);
  auto it = per_node_.find(node);
  if (it == per_node_.end()) return {};
  return DispatchSsdDeletesLocked(it->second, max);
}

std::vector<std::string> TaskTable::DispatchSsdDeletesLocked(PerNode& node,
                                                             uint32_t max) {
  std::vector<std::string> out;
  auto& deletes = node.ssd_deletes;
  while (!deletes.empty() && out.size() < max) {
    out.push_back(std::move(deletes.front()));
    deletes.pop_front();
  }
  return out;
}

bool TaskTable::HasTask(TaskKind kind, std::string_view key) const {
  MutexLock lock(&mu_);
  return by_key_[KindIndex(kind)].contains(
      absl::string_view(key.data(), key.size()));
}

std::vector<Task> TaskTable::List(TaskKind kind) const {
  MutexLock lock(&mu_);
  std::vector<Task> out;
  for (const auto& [id, task] : tasks_) {
    if (task.kind == kind) out.push_back(task);
  }
  std::sort(out.begin(), out.end(),
            [](const Task& a, const Task& b) { return a.id < b.id; });
  return out;
}

TaskCounts TaskTable::Counts(TaskKind kind) const {
  MutexLock lock(&mu_);
  TaskCounts counts;
  for (const auto& [id, task] : tasks_) {
    if (task.kind != kind) continue;
    (task.state == TaskState::kQueued ? counts.queued : counts.dispatched)++;
  }
  return counts;
}

OffloadBytes TaskTable::OffloadBytesOf(NodeId node) const {
  MutexLock lock(&mu_);
  auto it = per_node_.find(node);
  return it == per_node_.end() ? OffloadBytes{} : it->second.offload_bytes;
}

bool TaskTable::HasWorkLocked(NodeId node) const {
  auto it = per_node_.find(node);
  if (it == per_node_.end()) return false;
  const PerNode& n = it->second;
  return !n.ssd_deletes.empty() || !n.queued[0].empty() || !n.queued[1].empty();
}

bool TaskTable::WaitForWork(NodeId node, Duration timeout) {
  MutexLock lock(&mu_);
  const bool woken =
      work_cv_.WaitFor(timeout, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        auto it = per_node_.find(node);
        return HasWorkLocked(node) ||
               (it != per_node_.end() && it->second.interrupted);
      });
  if (auto it = per_node_.find(node); it != per_node_.end()) {
    it->second.interrupted = false;
  }
  return woken;
}

bool TaskTable::HasWork(NodeId node) const {
  MutexLock lock(&mu_);
  return HasWorkLocked(node);
}

void TaskTable::Interrupt(NodeId node) {
  MutexLock lock(&mu_);
  auto it = per_node_.find(node);
  if (it == per_node_.end()) return;
  it->second.interrupted = true;
  work_cv_.SignalAll();
}

size_t TaskTable::PendingSsdDeletes() const {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [node, state] : per_node_) n += state.ssd_deletes.size();
  return n;
}

}  // namespace mooncake_tier
