#pragma once

// The nodes a master knows: their published endpoints, the space allocator
// of each DRAM segment, SSD capacity and use, and liveness by heartbeat.
//
// Thread safety: thread-safe. A reader-writer lock guards the set of nodes
// (written only by registration and retirement) and a lock per node its
// allocator, so placements on different nodes run in parallel. All of it
// ranks after the object-table stripe locks (a stripe may be held while
// calling in here); nothing in here calls out while holding a lock, except
// the `before_visible` hook of Register.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "base/space_allocator.h"
#include "core/allocation_strategy.h"
#include "mooncake_tier/status.h"
#include "protocol/node.h"
#include "protocol/types.h"

namespace mooncake_tier {

// The share of a node's SSD put limit its object capacity leaves for
// records deleted but not yet compacted away. Small because the SSD tier
// evicts in log order (clock: eviction-policy.md): the records it evicts
// are those of the oldest files, which die whole and are deleted without
// copying; dead records elsewhere (removals, and LRU's scattered victims)
// are the exception, and count as used when the store runs short of room.
inline constexpr double kSsdDeadAllowance = 0.02;

// What the node's store holds dead beyond that allowance, in object bytes:
// room its objects cannot have until compaction reclaims it.
uint64_t SsdDeadBeyondAllowance(const SsdReport& report);

// The highest share of a node's SSD object capacity its eviction may keep
// full: twice the store's own headroom (capacity less put limit: room to
// compact a file, and tombstones) is left below the put limit, for the
// records eviction has made dead but compaction has not reclaimed yet.
// Under 1 % on a store of 512 MiB or more; a small store, whose files are
// large for its size, gets a lower mark (about 0.95 for 32 MiB). 1 without
// a report; never below 0.5.
double SsdFillCap(const SsdReport& report);

// Room enough in a node's SSD store to take offloads: one pull's worth of
// writes (32 MiB) or 1/32 of where its puts stop, whichever is less.
bool SsdReportShowsRoom(const SsdReport& report);

struct TierUsage {
  uint64_t capacity = 0;
  uint64_t used = 0;
  double ratio() const {
    return capacity == 0 ? 0.0 : static_cast<double>(used) / capacity;
  }
};

class NodeRegistry {
 public:
  // Ids count up from `first_id` (REQUIRES: not kNoNode).
  NodeRegistry(const Clock* clock, uint64_t dram_alignment,
               std::unique_ptr<AllocationStrategy> strategy,
               NodeId first_id = 1);

  struct HeldRange {
    uint64_t offset;
    uint64_t size;
  };
  struct Registration {
    // Runs under the registry lock before the node can be found or placed
    // on (so it must not call back into the registry).
    std::function<void(NodeId)> before_visible;
    // Ranges of the segment the node already holds bytes in (its DRAM
    // directory), taken in the new allocator before the node can be placed
    // on, so that no put lands on a committed object while the master is
    // still taking the node's objects back; (*held_taken)[i] says whether
    // held[i] was (false: outside the segment or overlapping an earlier
    // one). The caller frees what it does not keep (FreeMemory).
    std::span<const HeldRange> held;
    std::vector<bool>* held_taken = nullptr;
    // No placement on the node before this (clients may still write into
    // ranges granted before it registered again); allocations there answer
    // UNAVAILABLE meanwhile.
    TimePoint fenced_until = TimePoint::min();
    // Further, when a node of this name registered or died under this
    // registry before (decided under the same lock as the registration):
    // grants this registry's master made to the earlier incarnation.
    TimePoint fenced_until_if_known = TimePoint::min();
  };
  // Registers a node. A node of the same name that is still registered is
  // a previous incarnation (the process restarted): it is retired first and
  // its id returned in `*replaced`. Rejects an empty name.
  Result<NodeId> Register(const NodeSpec& spec, NodeId* replaced,
                          const Registration& how);
  Result<NodeId> Register(const NodeSpec& spec, NodeId* replaced) {
    return Register(spec, replaced, Registration{});
  }
  // When every node with a DRAM segment is fenced (Registration): the
  // soonest end of their fences; nothing otherwise (or with no node).
  // Lock-free once every fence set has ended (a put asks on every call).
  std::optional<TimePoint> AllFencedUntil() const;

  // Records a heartbeat. NODE_NOT_FOUND for an unknown or dead node: the
  // node must register again.
  Status Heartbeat(NodeId id);

  // Marks nodes silent for `ttl` dead (retired: allocator dropped, no longer
  // listed as alive) and those silent for ttl/2 suspect. Returns the ids
  // that died now.
  std::vector<NodeId> ExpireSilent(Duration ttl);

  // Retires a node at once (e.g. replaced by a new incarnation).
  bool Retire(NodeId id);

  // A node that says it is leaving (a clean stop): declared dead at once,
  // exactly as ExpireSilent would after node_ttl (retired, in ListDead and
  // counted by DeadCount until its name registers again). NODE_NOT_FOUND
  // for an unknown, dead or replaced node, and nothing changes. Of this and
  // a concurrent ExpireSilent or replacing Register, exactly one retires
  // the node.
  Status Deregister(NodeId id);

  // Places `size` bytes on an alive node: `preferred` (by name) first when
  // given, then by the allocation strategy. NO_SPACE when nothing fits.
  Result<ReplicaDescriptor> AllocateMemory(uint64_t size,
                                           std::string_view preferred);
  // Allocates on one given alive node.
  Result<uint64_t> AllocateMemoryOn(NodeId node, uint64_t size);
  // Frees a range AllocateMemory returned. A range of a retired node is
  // ignored (its segment is gone). Returns false for a double free. With
  // `reuse_after` still ahead, the range is held (counted as used) and
  // handed back to the allocator only once it passed: readers may still
  // read it through a location grant (MasterConfig::location_grant).
  bool FreeMemory(NodeId node, uint64_t offset, uint64_t size,
                  TimePoint reuse_after = TimePoint::min());
  // Hands back to their allocators the held ranges whose time has come;
  // returns their bytes. Allocations do it too, node by node, as they pass.
  uint64_t ReleaseHeldMemory();
  // Bytes of freed ranges still held for location grants, over all nodes.
  uint64_t HeldMemoryBytes() const;
  // The allocators' used bytes and the held bytes among them, over all
  // nodes, each node's pair read under its lock (an audit compares them).
  std::pair<uint64_t, uint64_t> UsedAndHeldMemory() const;

  // The largest free extent of a node's segment (0 when unknown), without
  // taking its allocator's lock: a moment old.
  uint64_t LargestFreeOn(NodeId node) const;

  // A node's SSD report: from it on, the node's SSD capacity is the object
  // bytes that fit under the store's put limit at its measured overhead
  // (live record bytes per live value byte).
  void ReportSsd(NodeId node, const SsdReport& report);

  // Offloads to `node` wait until `until` (its SSD is full). Each pause
  // while one was in force doubles the next (from `first` up to `max`);
  // ResumeOffloads resets that.
  void PauseOffloads(NodeId node, TimePoint now, Duration first, Duration max);
  void ResumeOffloads(NodeId node);
  // Ends the pause in force now, keeping its length for the next: the node
  // reports room again before the pause ran out.
  void EndOffloadPause(NodeId node);
  bool OffloadsPaused(NodeId node, TimePoint now) const;
  // True once after each PauseOffloads: the node's SSD owes room beyond its
  // watermark (its files are fuller than the count of its objects says).
  bool TakeSsdRoomOwed(NodeId node);

  // Adjusts the logical SSD use of a node by `delta` bytes.
  void AddSsdUsed(NodeId node, int64_t delta);

  bool IsAlive(NodeId id) const;
  std::optional<NodeView> Get(NodeId id) const;
  std::vector<NodeView> List() const;  // live and suspect nodes
  // The most recently retired nodes (at most kDeadHistory), newest last.
  std::vector<NodeView> ListDead() const;
  static constexpr size_t kDeadHistory = 64;
  // Nodes declared dead by silence (ExpireSilent) or by leaving
  // (Deregister) whose name has not registered again since: the nodes an
  // operator has lost now. Counts up
  // to kDeadNamesLimit names (beyond that an arbitrary one is forgotten,
  // so that names never reused cannot grow the set without bound).
  size_t DeadCount() const;
  static constexpr size_t kDeadNamesLimit = 4096;
  TierUsage MemoryUsage() const;             // over alive and suspect nodes
  TierUsage MemoryUsageOf(NodeId id) const;  // one node's segment
  // MemoryUsage().capacity without the walk over the nodes: kept as nodes
  // come and go (every put reads these two; lock-free).
  uint64_t MemoryCapacity() const {
    return memory_capacity_.load(std::memory_order_relaxed);
  }
  // Size of the largest DRAM segment of any registered node.
  uint64_t LargestSegment() const {
    return largest_segment_.load(std::memory_order_relaxed);
  }
  TierUsage SsdUsage() const;
  TierUsage SsdUsageOf(NodeId id) const;

 private:
  // One registered node. Its own lock guards its allocator and mutable
  // view, so placements on different nodes never contend; the lock-free
  // free-space figures let the strategy rank nodes without taking any.
  struct Node {
    std::string name;  // fixed at registration
    mutable Mutex mu;
    NodeView view ABSL_GUARDED_BY(mu);
    std::unique_ptr<SpaceAllocator> allocator ABSL_GUARDED_BY(mu);
    std::atomic<bool> placeable{true};  // alive, not suspect
    std::atomic<uint64_t> free_bytes{0};
    std::atomic<uint64_t> largest_free{0};
    std::atomic<uint64_t> segment_bytes{0};
    std::atomic<uint64_t> ssd_capacity{0};
    std::atomic<uint64_t> ssd_used{0};
    std::optional<SsdReport> ssd_report ABSL_GUARDED_BY(mu);
    // Clock nanoseconds until which offloads wait; how many pauses ran on.
    std::atomic<int64_t> offloads_paused_until_ns{0};
    // Clock nanoseconds before which nothing is placed here (Registration).
    std::atomic<int64_t> fenced_until_ns{std::numeric_limits<int64_t>::min()};
    std::atomic<uint32_t> pause_level{0};
    std::atomic<bool> ssd_room_owed{false};
    // Freed ranges held until readers' location grants on them ran out
    // (FreeMemory's reuse_after): a min-heap on `until`, the earliest
    // `until` as clock nanoseconds (max when none) and their bytes.
    struct Held {
      TimePoint until;
      uint64_t offset;
      uint64_t size;
      uint64_t bytes;  // as the allocator holds it (aligned)
    };
    std::vector<Held> held ABSL_GUARDED_BY(mu);
    std::atomic<int64_t> held_due_ns{std::numeric_limits<int64_t>::max()};
    std::atomic<uint64_t> held_bytes{0};
  };

  Node* Find(NodeId id) const ABSL_SHARED_LOCKS_REQUIRED(map_mu_);
  static Status Fenced();
  void RetireLocked(NodeId id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(map_mu_);
  // Recomputes memory_capacity_ and largest_segment_ after nodes_ changed.
  void SegmentsChangedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(map_mu_);
  // Retires a node that died (silent or leaving), remembering its name as
  // lost until it registers again.
  void DeclareDeadLocked(NodeId id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(map_mu_);
  static void PublishSpace(Node& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(node.mu);
  // Frees the node's held ranges due at `now`; returns their bytes.
  static uint64_t ReleaseDueLocked(Node& node, TimePoint now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(node.mu);
  // ReleaseDueLocked when something is due, taking the node's lock.
  static void ReleaseDue(Node& node, TimePoint now);
  static NodeView ViewOf(const Node& node);
  Result<uint64_t> AllocateOn(Node& node, uint64_t size);

  const Clock* const clock_;
  const uint64_t dram_alignment_;
  const std::unique_ptr<AllocationStrategy> strategy_;

  // Lock order: map_mu_ (shared or exclusive) before any Node::mu.
  mutable SharedMutex map_mu_;
  NodeId next_id_ ABSL_GUARDED_BY(map_mu_);
  absl::flat_hash_map<NodeId, std::unique_ptr<Node>> nodes_
      ABSL_GUARDED_BY(map_mu_);
  absl::flat_hash_map<std::string, NodeId> by_name_ ABSL_GUARDED_BY(map_mu_);
  std::deque<NodeView> dead_ ABSL_GUARDED_BY(map_mu_);
  // Written under map_mu_ (exclusive) whenever nodes_ changes; read
  // without it.
  std::atomic<uint64_t> memory_capacity_{0};
  std::atomic<uint64_t> largest_segment_{0};
  // The latest end of any fence ever set (clock nanoseconds): past it, no
  // node is fenced and AllFencedUntil answers without the lock.
  std::atomic<int64_t> fences_end_ns_{std::numeric_limits<int64_t>::min()};
  absl::flat_hash_set<std::string> dead_names_ ABSL_GUARDED_BY(map_mu_);
};

}  // namespace mooncake_tier
