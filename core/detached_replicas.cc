#include "core/detached_replicas.h"

namespace mooncake_tier {

void DetachedReplicas::Add(const Replica& replica) {
  MutexLock lock(&mu_);
  replicas_[replica.desc.id] = replica;
}

std::optional<ReplicaDescriptor> DetachedReplicas::Unpin(ReplicaId id) {
  MutexLock lock(&mu_);
  auto it = replicas_.find(id);
  if (it == replicas_.end()) return std::nullopt;
  if (--it->second.refcnt > 0) return std::nullopt;
  ReplicaDescriptor desc = it->second.desc;
  replicas_.erase(it);
  return desc;
}

void DetachedReplicas::DropNode(NodeId node) {
  MutexLock lock(&mu_);
  absl::erase_if(replicas_, [node](const auto& entry) {
    return entry.second.desc.node == node;
  });
}

uint64_t DetachedReplicas::count() const {
  MutexLock lock(&mu_);
  return replicas_.size();
}

uint64_t DetachedReplicas::memory_bytes(uint64_t alignment) const {
  MutexLock lock(&mu_);
  uint64_t bytes = 0;
  for (const auto& [id, r] : replicas_) {
    if (r.desc.tier == Tier::kMemory) {
      bytes += (r.desc.size + alignment - 1) & ~(alignment - 1);
    }
  }
  return bytes;
}

}  // namespace mooncake_tier
