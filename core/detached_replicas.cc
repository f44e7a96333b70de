#include "core/detached_replicas.h"

namespace mooncake_tier {

void DetachedReplicas::Add(const Replica& replica, TimePoint reuse_after) {
  MutexLock lock(&mu_);
  replicas_[replica.desc.id] = Detached{replica, reuse_after};
}

std::optional<DetachedReplicas::Freed> DetachedReplicas::Unpin(ReplicaId id) {
  MutexLock lock(&mu_);
  auto it = replicas_.find(id);
  if (it == replicas_.end()) return std::nullopt;
  if (--it->second.replica.refcnt > 0) return std::nullopt;
  Freed freed{it->second.replica.desc, it->second.reuse_after};
  replicas_.erase(it);
  return freed;
}

void DetachedReplicas::DropNode(NodeId node) {
  MutexLock lock(&mu_);
  absl::erase_if(replicas_, [node](const auto& entry) {
    return entry.second.replica.desc.node == node;
  });
}

uint64_t DetachedReplicas::count() const {
  MutexLock lock(&mu_);
  return replicas_.size();
}

uint64_t DetachedReplicas::memory_bytes(uint64_t alignment) const {
  MutexLock lock(&mu_);
  uint64_t bytes = 0;
  for (const auto& [id, d] : replicas_) {
    if (d.replica.desc.tier == Tier::kMemory) {
      bytes += (d.replica.desc.size + alignment - 1) & ~(alignment - 1);
    }
  }
  return bytes;
}

}  // namespace mooncake_tier
