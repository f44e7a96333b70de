#pragma once

// What the master shows operators (the admin API, the CLI, metrics): one
// object in full, what a forced eviction did, and one node's DRAM. Values
// only, so that the admin layer needs no core/master.h.

#include <cstdint>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "core/dram_pressure.h"
#include "core/task_table.h"
#include "mooncake_tier/types.h"
#include "protocol/types.h"

namespace mooncake_tier {

// A full view of one object for operators (admin API), no lease granted.
struct ObjectDescription {
  uint64_t size = 0;
  std::vector<Replica> replicas;
  std::optional<GroupSpec> group;
  TimePoint lease_deadline;
  uint32_t leases = 0;  // readers holding a lease now
  TimePoint last_access;
  bool hard_pin = false;
};

// What a forced eviction (Master::EvictObject, EvictGroup) did.
struct ForcedEviction {
  uint64_t bytes_freed = 0;      // DRAM freed now
  std::vector<TaskId> offloads;  // offloads queued first (offload on)
};

// One node's DRAM as the last memory round saw it, and its reserve now.
struct NodeMemoryView {
  NodeId node = kNoNode;
  MemoryBreakdown bytes;
  uint64_t reserve_bytes = 0;  // clean units a put may drop at once
  size_t reserve_units = 0;
  OffloadBytes offload;  // offload tasks queued or in flight
};

}  // namespace mooncake_tier
