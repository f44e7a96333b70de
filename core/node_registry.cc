#include "core/node_registry.h"

#include <algorithm>

namespace mooncake_tier {

NodeRegistry::NodeRegistry(const Clock* clock, uint64_t dram_alignment,
                           std::unique_ptr<AllocationStrategy> strategy)
    : clock_(clock),
      dram_alignment_(dram_alignment),
      strategy_(std::move(strategy)) {}

Result<NodeId> NodeRegistry::Register(
    const NodeSpec& spec, NodeId* replaced,
    const std::function<void(NodeId)>& before_visible) {
  if (spec.name.empty() || spec.name.size() > kMaxKeyBytes) {
    return Status(ErrorReason::kInvalidArgument,
                  "node name must be 1.." + std::to_string(kMaxKeyBytes) +
                      " bytes");
  }
  if (spec.dram_size > 0 && spec.dram_size < dram_alignment_) {
    return Status(ErrorReason::kInvalidSize,
                  "DRAM segment smaller than one allocation unit");
  }
  MutexLock lock(&mu_);
  *replaced = kNoNode;
  if (auto it = by_name_.find(spec.name); it != by_name_.end()) {
    *replaced = it->second;
    RetireLocked(nodes_.at(it->second));
  }
  const NodeId id = next_id_++;
  if (before_visible) before_visible(id);
  Node node;
  node.view.id = id;
  node.view.spec = spec;
  node.view.registered_at = node.view.last_heartbeat = clock_->Now();
  if (spec.dram_size > 0) {
    node.allocator =
        std::make_unique<SpaceAllocator>(spec.dram_size, dram_alignment_);
  }
  nodes_.emplace(id, std::move(node));
  by_name_[spec.name] = id;
  return id;
}

NodeRegistry::Node* NodeRegistry::FindLive(NodeId id) {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

void NodeRegistry::RetireLocked(Node& node) {
  node.view.state = NodeState::kDead;
  node.view.dram_used = 0;
  dead_.push_back(node.view);
  if (dead_.size() > kDeadHistory) dead_.pop_front();
  by_name_.erase(node.view.spec.name);
  nodes_.erase(node.view.id);  // `node` dangles from here on
}

Status NodeRegistry::Heartbeat(NodeId id) {
  MutexLock lock(&mu_);
  Node* node = FindLive(id);
  if (node == nullptr) {
    return Status(ErrorReason::kNodeNotFound,
                  "node " + std::to_string(id) +
                      " is not registered (expired or replaced); register "
                      "again");
  }
  node->view.last_heartbeat = clock_->Now();
  node->view.state = NodeState::kAlive;
  return Status::Ok();
}

std::vector<NodeId> NodeRegistry::ExpireSilent(Duration ttl) {
  const TimePoint now = clock_->Now();
  MutexLock lock(&mu_);
  std::vector<NodeId> died;
  for (auto& [id, node] : nodes_) {
    const Duration silent = now - node.view.last_heartbeat;
    if (silent >= ttl) {
      died.push_back(id);
    } else if (silent >= ttl / 2) {
      node.view.state = NodeState::kSuspect;
    }
  }
  for (NodeId id : died) RetireLocked(nodes_.at(id));
  return died;
}

bool NodeRegistry::Retire(NodeId id) {
  MutexLock lock(&mu_);
  Node* node = FindLive(id);
  if (node == nullptr) return false;
  RetireLocked(*node);
  return true;
}

Result<ReplicaDescriptor> NodeRegistry::AllocateMemory(
    uint64_t size, std::string_view preferred) {
  MutexLock lock(&mu_);
  std::vector<NodeSpace> spaces;
  spaces.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) {
    if (node.view.state != NodeState::kAlive || !node.allocator) continue;
    spaces.push_back({id, node.allocator->free_bytes(),
                      node.allocator->largest_free_extent(),
                      !preferred.empty() && node.view.spec.name == preferred});
  }
  for (NodeId id : strategy_->Rank(spaces, size)) {
    Node& node = nodes_.at(id);
    if (auto offset = node.allocator->Allocate(size)) {
      node.view.dram_used = node.allocator->allocated_bytes();
      ReplicaDescriptor desc;
      desc.tier = Tier::kMemory;
      desc.node = id;
      desc.offset = *offset;
      desc.size = size;
      return desc;
    }
  }
  return Status(ErrorReason::kNoSpace,
                "no alive node has " + std::to_string(size) +
                    " contiguous bytes of DRAM free");
}

Result<uint64_t> NodeRegistry::AllocateMemoryOn(NodeId id, uint64_t size) {
  MutexLock lock(&mu_);
  Node* node = FindLive(id);
  if (node == nullptr || node->view.state == NodeState::kDead) {
    return Status(ErrorReason::kNodeNotFound,
                  "node " + std::to_string(id) + " is not registered");
  }
  if (!node->allocator) {
    return Status(ErrorReason::kNoSpace, "node has no DRAM segment");
  }
  auto offset = node->allocator->Allocate(size);
  if (!offset) {
    return Status(ErrorReason::kNoSpace, "node " + std::to_string(id) +
                                             " has no room for " +
                                             std::to_string(size) + " bytes");
  }
  node->view.dram_used = node->allocator->allocated_bytes();
  return *offset;
}

bool NodeRegistry::FreeMemory(NodeId id, uint64_t offset, uint64_t size) {
  MutexLock lock(&mu_);
  Node* node = FindLive(id);
  if (node == nullptr) return true;  // the segment went with the node
  if (!node->allocator || !node->allocator->Free(offset, size)) return false;
  node->view.dram_used = node->allocator->allocated_bytes();
  return true;
}

void NodeRegistry::AddSsdUsed(NodeId id, int64_t delta) {
  MutexLock lock(&mu_);
  Node* node = FindLive(id);
  if (node == nullptr) return;
  const int64_t used = static_cast<int64_t>(node->view.ssd_used) + delta;
  node->view.ssd_used = used < 0 ? 0 : static_cast<uint64_t>(used);
}

bool NodeRegistry::IsAlive(NodeId id) const {
  MutexLock lock(&mu_);
  auto it = nodes_.find(id);
  return it != nodes_.end() && it->second.view.state != NodeState::kDead;
}

std::optional<NodeView> NodeRegistry::Get(NodeId id) const {
  MutexLock lock(&mu_);
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return std::nullopt;
  return it->second.view;
}

std::vector<NodeView> NodeRegistry::List() const {
  MutexLock lock(&mu_);
  std::vector<NodeView> out;
  out.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) out.push_back(node.view);
  std::sort(out.begin(), out.end(),
            [](const NodeView& a, const NodeView& b) { return a.id < b.id; });
  return out;
}

std::vector<NodeView> NodeRegistry::ListDead() const {
  MutexLock lock(&mu_);
  return {dead_.begin(), dead_.end()};
}

TierUsage NodeRegistry::MemoryUsage() const {
  MutexLock lock(&mu_);
  TierUsage usage;
  for (const auto& [id, node] : nodes_) {
    if (!node.allocator) continue;
    usage.capacity += node.allocator->capacity();
    usage.used += node.allocator->allocated_bytes();
  }
  return usage;
}

uint64_t NodeRegistry::LargestSegment() const {
  MutexLock lock(&mu_);
  uint64_t largest = 0;
  for (const auto& [id, node] : nodes_) {
    if (node.allocator) largest = std::max(largest, node.allocator->capacity());
  }
  return largest;
}

TierUsage NodeRegistry::SsdUsage() const {
  MutexLock lock(&mu_);
  TierUsage usage;
  for (const auto& [id, node] : nodes_) {
    usage.capacity += node.view.spec.ssd_capacity;
    usage.used += node.view.ssd_used;
  }
  return usage;
}

TierUsage NodeRegistry::SsdUsageOf(NodeId id) const {
  MutexLock lock(&mu_);
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return {};
  return {it->second.view.spec.ssd_capacity, it->second.view.ssd_used};
}

}  // namespace mooncake_tier
