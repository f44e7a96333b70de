#pragma once

// The requests and replies clients and nodes exchange with the master,
// whatever carries them (a call in the same process, or gRPC).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"
#include "protocol/node.h"
#include "protocol/task.h"
#include "protocol/types.h"

namespace mooncake_tier {

struct PutStartRequest {
  std::string key;
  uint64_t size = 0;
  PutOptions options;
  ClientId client;  // makes a repeated PutStart by the same client idempotent
};

// What a reader needs: complete replicas, DRAM first, and its lease.
struct ObjectReplicas {
  uint64_t size = 0;
  std::vector<ReplicaDescriptor> replicas;
  // The lease protects the replicas from eviction and non-forced removal
  // until the reader releases it (Master::ReleaseLeases, naming lease_id)
  // or until lease_deadline, whichever comes first.
  TimePoint lease_deadline;
  uint64_t lease_id = 0;
  // When the first replica is in DRAM: for this many milliseconds, counted
  // from before the reader sent its GetReplicaList, that replica's range
  // holds this object's bytes whatever happens to the object meanwhile
  // (MasterConfig::location_grant): the reader may read it again with no
  // further call, as long as each read completes within the window. 0: no
  // such grant.
  uint32_t location_valid_ms = 0;
  std::optional<GroupSpec> group;
};

// A reader is done with the replicas a GetReplicaList gave it.
// With lease_id 0, a read the reader served from its location cache, with
// no lease: the master counts it for recency and promotion only.
struct LeaseRelease {
  std::string key;
  uint64_t lease_id = 0;  // ObjectReplicas::lease_id
};

// A group as operators and engines see it: state, counts, and each member
// with the tiers of its complete replicas.
struct GroupDescription {
  GroupStatus status;
  std::optional<BreakCause> break_cause;
  struct Member {
    uint32_t index = 0;
    std::string key;
    bool present = false;     // its put completed
    std::vector<Tier> tiers;  // complete replicas, DRAM first
  };
  std::vector<Member> members;
};

// One live record in a node's SSD store, reported on (re-)registration.
struct SsdInventoryEntry {
  std::string key;
  uint64_t size = 0;
  std::optional<GroupSpec> group;
};

// A committed DRAM placement as the node holding it records it in its DRAM
// directory (docs/design/ha.md): reported on (re-)registration, so that a
// restarted master, or a new leader, rebuilds the DRAM tier from the nodes.
struct DramEntry {
  std::string key;
  uint64_t offset = 0;  // in the node's segment
  uint64_t size = 0;
  std::optional<GroupSpec> group;
};

// One change to a node's DRAM directory, numbered in the order the master
// made them (per registration). A drop names the entry by offset and key.
struct DirectoryOp {
  enum class Kind : uint8_t { kAdd = 0, kDrop = 1 };
  uint64_t seq = 0;
  Kind kind = Kind::kAdd;
  DramEntry entry;
};

// What Master::SyncDirectory hands a node: the changes after the last one it
// acknowledged, oldest first.
struct DirectoryChanges {
  std::vector<DirectoryOp> ops;
};

// Work handed to a node (Master::PullTasks).
struct NodeTasks {
  std::vector<Task> offloads;
  std::vector<std::string> ssd_deletes;  // apply before the tasks
  std::vector<Task> promotions;
};

// A task a node reports as failed, and why.
struct TaskFailure {
  TaskId task = 0;
  Status cause;
};

}  // namespace mooncake_tier
