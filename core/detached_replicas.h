#pragma once

// DRAM replicas whose object was removed while a task still pinned them.
// Their space cannot be freed while a node may still read it; the last
// unpin hands the range back for freeing.
//
// Thread safety: thread-safe; its mutex is the last in the lock order.

#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"
#include "protocol/types.h"

namespace mooncake_tier {

class DetachedReplicas {
 public:
  // REQUIRES: replica.refcnt > 0. Its range may be handed out again from
  // `reuse_after` on (MasterState::ReleaseReplicaLocked).
  void Add(const Replica& replica, TimePoint reuse_after);
  struct Freed {
    ReplicaDescriptor desc;
    TimePoint reuse_after;
  };
  // Drops one pin of a detached replica. Returns it when that was the last
  // pin (the caller frees the space), nullopt otherwise or when the replica
  // is not detached.
  std::optional<Freed> Unpin(ReplicaId id);
  // Forgets every replica on a dead node (its segment is gone).
  void DropNode(NodeId node);

  uint64_t count() const;
  uint64_t memory_bytes(uint64_t alignment) const;

 private:
  mutable Mutex mu_;
  struct Detached {
    Replica replica;
    TimePoint reuse_after;
  };
  absl::flat_hash_map<ReplicaId, Detached> replicas_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier
