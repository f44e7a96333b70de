#include "core/dram_directory_log.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace mooncake_tier {

DramDirectoryLog::DramDirectoryLog(FreeFn free) : free_(std::move(free)) {}

void DramDirectoryLog::AddNode(NodeId node) {
  WriterMutexLock lock(&mu_);
  if (nodes_.emplace(node, std::make_shared<NodeLog>()).second) {
    tracked_.fetch_add(1, std::memory_order_relaxed);
  }
}

void DramDirectoryLog::DropNode(NodeId node) {
  std::shared_ptr<NodeLog> log;
  {
    WriterMutexLock lock(&mu_);
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return;
    log = std::move(it->second);
    nodes_.erase(it);
    tracked_.fetch_sub(1, std::memory_order_relaxed);
  }
  MutexLock lock(&log->mu);
  log->gone = true;
  log->pending.clear();
  log->frees.clear();
  log->free_bytes = 0;
  log->changed.SignalAll();
}

std::shared_ptr<DramDirectoryLog::NodeLog> DramDirectoryLog::Find(
    NodeId node) const {
  if (tracked_.load(std::memory_order_relaxed) == 0) return nullptr;
  ReaderMutexLock lock(&mu_);
  auto it = nodes_.find(node);
  return it == nodes_.end() ? nullptr : it->second;
}

bool DramDirectoryLog::Tracks(NodeId node) const {
  return Find(node) != nullptr;
}

uint64_t DramDirectoryLog::Add(NodeId node, DramEntry entry) {
  std::shared_ptr<NodeLog> log = Find(node);
  if (log == nullptr) return 0;
  MutexLock lock(&log->mu);
  if (log->gone) return 0;
  const uint64_t seq = log->next_seq++;
  log->pending.push_back(
      DirectoryOp{seq, DirectoryOp::Kind::kAdd, std::move(entry)});
  log->changed.SignalAll();
  return seq;
}

bool DramDirectoryLog::DropThenFree(NodeId node, std::string_view key,
                                    uint64_t offset, uint64_t size,
                                    TimePoint reuse_after) {
  std::shared_ptr<NodeLog> log = Find(node);
  if (log == nullptr) return false;
  MutexLock lock(&log->mu);
  // Dropped meanwhile: the registry forgot the segment, so there is nothing
  // to free either.
  if (log->gone) return true;
  const uint64_t seq = log->next_seq++;
  DirectoryOp op{seq, DirectoryOp::Kind::kDrop, {}};
  op.entry.key = std::string(key);
  op.entry.offset = offset;
  op.entry.size = size;
  log->pending.push_back(std::move(op));
  log->frees.push_back(PendingFree{seq, offset, size, reuse_after});
  log->free_bytes += size;
  log->changed.SignalAll();
  return true;
}

void DramDirectoryLog::Discard(NodeId node, std::string_view key,
                               uint64_t offset) {
  std::shared_ptr<NodeLog> log = Find(node);
  if (log == nullptr) return;
  MutexLock lock(&log->mu);
  if (log->gone) return;
  DirectoryOp op{log->next_seq++, DirectoryOp::Kind::kDrop, {}};
  op.entry.key = std::string(key);
  op.entry.offset = offset;
  log->pending.push_back(std::move(op));
  log->changed.SignalAll();
}

Status DramDirectoryLog::WaitRecorded(NodeId node, uint64_t seq,
                                      Duration timeout) {
  std::shared_ptr<NodeLog> log = Find(node);
  if (log == nullptr) {
    return Status(ErrorReason::kUnavailable,
                  "node " + std::to_string(node) +
                      " left before it recorded the change in its DRAM "
                      "directory");
  }
  const auto end = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&log->mu);
  while (log->acked < seq && !log->gone) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= end) {
      return Status(ErrorReason::kTimeout,
                    "node " + std::to_string(node) +
                        " did not record the change in its DRAM directory "
                        "in time");
    }
    log->changed.WaitFor(end - now);
  }
  if (log->acked < seq) {
    return Status(ErrorReason::kUnavailable,
                  "node " + std::to_string(node) +
                      " left before it recorded the change in its DRAM "
                      "directory");
  }
  return Status::Ok();
}

DramDirectoryLog::Marks DramDirectoryLog::Mark() const {
  Marks marks;
  if (tracked_.load(std::memory_order_relaxed) == 0) return marks;
  ReaderMutexLock lock(&mu_);
  for (const auto& [id, log] : nodes_) {
    MutexLock node_lock(&log->mu);
    marks.emplace(id, log->next_seq);
  }
  return marks;
}

Status DramDirectoryLog::WaitChangedSince(const Marks& before,
                                          Duration timeout) {
  if (tracked_.load(std::memory_order_relaxed) == 0) return Status::Ok();
  std::vector<std::pair<NodeId, uint64_t>> moved;
  {
    ReaderMutexLock lock(&mu_);
    for (const auto& [id, log] : nodes_) {
      MutexLock node_lock(&log->mu);
      auto it = before.find(id);
      // A node registered since: everything in its log is new.
      const uint64_t from = it == before.end() ? 1 : it->second;
      if (log->next_seq > from) moved.emplace_back(id, log->next_seq - 1);
    }
  }
  for (const auto& [node, seq] : moved) {
    MT_RETURN_IF_ERROR(WaitRecorded(node, seq, timeout));
  }
  return Status::Ok();
}

Result<DirectoryChanges> DramDirectoryLog::Sync(NodeId node, uint64_t acked,
                                                size_t max, Duration wait) {
  std::shared_ptr<NodeLog> log = Find(node);
  if (log == nullptr) {
    return Status(ErrorReason::kNodeNotFound,
                  "node " + std::to_string(node) +
                      " is not registered with a DRAM directory");
  }
  std::vector<PendingFree> freed;
  DirectoryChanges out;
  {
    MutexLock lock(&log->mu);
    // Only numbers handed out count: a node that acknowledges more (a
    // confused or stale caller) cannot free what it never saw.
    if (acked >= log->next_seq) acked = log->next_seq - 1;
    if (acked > log->acked) {
      log->acked = acked;
      while (!log->pending.empty() && log->pending.front().seq <= acked) {
        log->pending.pop_front();
      }
      while (!log->frees.empty() && log->frees.front().seq <= acked) {
        freed.push_back(log->frees.front());
        log->free_bytes -= log->frees.front().size;
        log->frees.pop_front();
      }
      log->changed.SignalAll();  // puts waiting for their entries
    }
    const auto end = std::chrono::steady_clock::now() + wait;
    while (log->pending.empty() && !log->gone && !log->interrupted) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= end) break;
      log->changed.WaitFor(end - now);
    }
    log->interrupted = false;
    if (!log->gone) {
      const size_t n = std::min(max, log->pending.size());
      out.ops.assign(log->pending.begin(), log->pending.begin() + n);
    }
  }
  for (const PendingFree& f : freed) {
    free_(node, f.offset, f.size, f.reuse_after);
  }
  return out;
}

void DramDirectoryLog::Interrupt(NodeId node) {
  std::shared_ptr<NodeLog> log = Find(node);
  if (log == nullptr) return;
  MutexLock lock(&log->mu);
  log->interrupted = true;
  log->changed.SignalAll();
}

DramDirectoryLog::Stats DramDirectoryLog::GetStats() const {
  Stats stats;
  ReaderMutexLock lock(&mu_);
  for (const auto& [id, log] : nodes_) {
    MutexLock node_lock(&log->mu);
    stats.pending_changes += log->pending.size();
    stats.pending_free_bytes += log->free_bytes;
  }
  return stats;
}

uint64_t DramDirectoryLog::PendingFreeBytes(uint64_t alignment) const {
  uint64_t bytes = 0;
  ReaderMutexLock lock(&mu_);
  for (const auto& [id, log] : nodes_) {
    MutexLock node_lock(&log->mu);
    for (const PendingFree& f : log->frees) {
      bytes += (f.size + alignment - 1) / alignment * alignment;
    }
  }
  return bytes;
}

}  // namespace mooncake_tier
