#pragma once

// A task as the master books it and a node receives it: an offload or a
// promotion of one object.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "mooncake_tier/types.h"
#include "protocol/types.h"

namespace mooncake_tier {

enum class TaskState : uint8_t {
  kQueued = 0,
  kDispatched = 1,
  // A promotion of a group member whose bytes are staged, waiting for the
  // rest of its group before all commit together.
  kStaged = 2,
};
// "queued" | "dispatched" | "staged"
std::string_view TaskStateName(TaskState state);

struct Task {
  TaskId id = 0;
  TaskKind kind = TaskKind::kOffload;
  NodeId node = kNoNode;  // the node that executes it
  std::string key;
  std::optional<GroupSpec> group;
  ReplicaDescriptor source;  // pinned while the task exists
  // Promotion: the processing MEMORY replica staged for the bytes (id 0
  // until PromotionAllocStart); pinned by the task like the source.
  ReplicaDescriptor target;
  // Promotion: asked for by an operator (admission bypassed). Offload:
  // queued by an operator's group eviction, which the last member's
  // offload to land finishes (Master::EvictGroup).
  bool forced = false;
  // Offload: drop the DRAM copy once the SSD copy is committed.
  bool drop_source_on_success = false;
  // Offload: the DRAM copy goes once this succeeds, by the task itself
  // (drop_source_on_success) or, for a group member, by the eviction round
  // that finds the whole group on SSD. Its bytes count as DRAM about to be
  // freed, so eviction does not pick more victims for the same need.
  bool frees_dram = false;
  // Offload: the node holds an older copy of the key that the master wanted
  // deleted (see EnqueueSsdDelete). This task's write replaces it; if the
  // write fails, the key must be deleted from the node after all.
  bool delete_copy_on_failure = false;
  // Promotion: its group's promotion was abandoned while the node may still
  // be writing this member's bytes into its staged replica. The task (and
  // the staged DRAM it pins) stays until the node reports it or it times
  // out; then it ends with nothing committed. Freeing that DRAM earlier
  // would let a put take it while the node still writes there.
  bool doomed = false;
  TaskState state = TaskState::kQueued;
  TimePoint created;
  TimePoint dispatched;
};

}  // namespace mooncake_tier
