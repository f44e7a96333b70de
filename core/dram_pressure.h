#pragma once

// What the last memory round (Master::EvictMemory, WriteBack, Tick) found
// on each node: how its DRAM is held, and the clean reserve it left for
// puts. A put that finds DRAM full takes victims from the reserve of a
// node (coldest first), re-checks each under its lock and drops it: no put
// ever scans the object table. The round refills the reserve every time
// it runs. See docs/design/tiering.md.
//
// Thread safety: thread-safe. Its mutex is a leaf: nothing is called while
// it is held, so any lock may be held when calling in.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "protocol/types.h"

namespace mooncake_tier {

// How one node's DRAM is held, in bytes, as a round saw it. The categories
// are exclusive and checked in this order: hard_pinned, filling, in_flight,
// writeback, pinned, leased, then clean or dirty. `unwritten` overlaps
// them: what writeback measures.
struct MemoryBreakdown {
  uint64_t capacity = 0;
  uint64_t used = 0;         // allocated: the categories plus alignment
  uint64_t hard_pinned = 0;  // objects put with hard_pin: never evicted
  uint64_t filling = 0;      // members of groups still filling
  uint64_t in_flight = 0;    // puts and promotions being written
  uint64_t writeback = 0;    // being written to SSD (pinned by the offload)
  uint64_t pinned = 0;       // pinned by other tasks
  uint64_t leased = 0;       // held by readers' leases
  uint64_t clean = 0;        // evictable now: on SSD too (or nowhere to go)
  uint64_t dirty = 0;        // evictable once written back
  // Bytes of units (objects, groups) with no whole SSD copy that writeback
  // may take: dirty, leased or pinned alike, but not hard-pinned, filling,
  // in flight or already being written back.
  uint64_t unwritten = 0;

  uint64_t free() const { return capacity > used ? capacity - used : 0; }
  // Allocated bytes no unit accounts for (alignment of the allocations).
  uint64_t slack() const {
    const uint64_t units = hard_pinned + filling + in_flight + writeback +
                           pinned + leased + clean + dirty;
    return used > units ? used - units : 0;
  }
  // Adds `other` field by field (a sum over nodes).
  MemoryBreakdown& operator+=(const MemoryBreakdown& other);
};

// One unit (an object, or a whole group) whose DRAM copy a put may drop at
// once.
struct ReserveEntry {
  std::string unit;  // the key, or the group id
  bool group = false;
  TimePoint last_access;  // as the round saw it: a newer access keeps it
  uint64_t bytes = 0;     // its DRAM bytes on the node
};

class DramPressure {
 public:
  struct NodeState {
    MemoryBreakdown bytes;
    uint64_t reserve_bytes = 0;  // left in the reserve now
    size_t reserve_units = 0;
    // Units last used at or before this are the next victims: the newest
    // access in the reserve the round left (min() when it left none).
    TimePoint victim_cutoff = TimePoint::min();
    TimePoint round_at;  // when the round that published it ran
  };

  // A round's findings for `node`; `reserve` coldest first.
  void Publish(NodeId node, const MemoryBreakdown& bytes,
               std::vector<ReserveEntry> reserve, TimePoint at);
  // Drops the state of nodes not in `live` (sorted).
  void Retain(const std::vector<NodeId>& live);

  // Takes the coldest entry of `node`'s reserve.
  std::optional<ReserveEntry> Pop(NodeId node);
  // The node with the most bytes in its reserve; kNoNode when every
  // reserve is empty.
  NodeId Richest() const;

  std::optional<NodeState> Get(NodeId node) const;
  std::vector<std::pair<NodeId, NodeState>> All() const;

 private:
  struct Node {
    NodeState state;
    std::vector<ReserveEntry> reserve;  // coldest last (popped first)
  };
  mutable Mutex mu_;
  absl::flat_hash_map<NodeId, Node> nodes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier
