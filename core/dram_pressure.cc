#include "core/dram_pressure.h"

#include <algorithm>

namespace mooncake_tier {

MemoryBreakdown& MemoryBreakdown::operator+=(const MemoryBreakdown& other) {
  capacity += other.capacity;
  used += other.used;
  hard_pinned += other.hard_pinned;
  filling += other.filling;
  in_flight += other.in_flight;
  writeback += other.writeback;
  pinned += other.pinned;
  leased += other.leased;
  clean += other.clean;
  dirty += other.dirty;
  unwritten += other.unwritten;
  return *this;
}

void DramPressure::Publish(NodeId node, const MemoryBreakdown& bytes,
                           std::vector<ReserveEntry> reserve, TimePoint at) {
  const TimePoint cutoff =
      reserve.empty() ? TimePoint::min() : reserve.back().last_access;
  std::reverse(reserve.begin(), reserve.end());
  uint64_t reserved = 0;
  for (const ReserveEntry& e : reserve) reserved += e.bytes;
  MutexLock lock(&mu_);
  Node& n = nodes_[node];
  n.state.bytes = bytes;
  n.state.reserve_bytes = reserved;
  n.state.reserve_units = reserve.size();
  n.state.victim_cutoff = cutoff;
  n.state.round_at = at;
  n.reserve = std::move(reserve);
}

void DramPressure::Retain(const std::vector<NodeId>& live) {
  MutexLock lock(&mu_);
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    auto current = it++;
    if (!std::binary_search(live.begin(), live.end(), current->first)) {
      nodes_.erase(current);
    }
  }
}

std::optional<ReserveEntry> DramPressure::Pop(NodeId node) {
  MutexLock lock(&mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.reserve.empty()) return std::nullopt;
  Node& n = it->second;
  ReserveEntry entry = std::move(n.reserve.back());
  n.reserve.pop_back();
  n.state.reserve_bytes -= std::min(n.state.reserve_bytes, entry.bytes);
  n.state.reserve_units = n.reserve.size();
  return entry;
}

NodeId DramPressure::Richest() const {
  MutexLock lock(&mu_);
  NodeId best = kNoNode;
  uint64_t most = 0;
  for (const auto& [id, n] : nodes_) {
    if (!n.reserve.empty() && n.state.reserve_bytes >= most) {
      best = id;
      most = n.state.reserve_bytes;
    }
  }
  return best;
}

std::optional<DramPressure::NodeState> DramPressure::Get(NodeId node) const {
  MutexLock lock(&mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return std::nullopt;
  return it->second.state;
}

std::vector<std::pair<NodeId, DramPressure::NodeState>> DramPressure::All()
    const {
  MutexLock lock(&mu_);
  std::vector<std::pair<NodeId, NodeState>> out;
  out.reserve(nodes_.size());
  for (const auto& [id, n] : nodes_) out.emplace_back(id, n.state);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace mooncake_tier
