#pragma once

// Tiering: the part of the master that moves bytes down and out of the
// tiers on its own initiative (docs/design/tiering.md). Per node, a memory
// round evicts DRAM down to its target once DRAM crosses the high
// watermark, writes cold dirty units back to SSD while a node's unwritten
// bytes are above the writeback watermark, and leaves the coldest clean
// units in the node's reserve, from which a put that finds DRAM full drops
// victims at once (MakeRoom). SSD eviction keeps each node's SSD below its
// own watermarks. Groups are one unit throughout (tiering_groups.cc).
//
// Thread safety: thread-safe. One memory round or SSD eviction at a time
// (eviction_mu_, taken before any stripe).

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "core/eviction_planner.h"
#include "core/eviction_policy.h"
#include "core/master_state.h"
#include "core/master_views.h"
#include "core/offloader.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

struct MemoryRound;
enum class DramUse : uint8_t;

class Tiering {
 public:
  Tiering(MasterState* state, Offloader* offloader);
  Tiering(const Tiering&) = delete;
  Tiering& operator=(const Tiering&) = delete;

  // ---- Background steps (see Master) ----

  // A round of eviction, writeback and reserves, as the background tick
  // runs it.
  void Round();
  // A round that only evicts (`need_free` more for the node that can free
  // most at once). Returns bytes freed or scheduled to be freed.
  uint64_t EvictMemory(uint64_t need_free = 0);
  // A round that only writes back. Returns the bytes queued.
  uint64_t WriteBack();
  // Per node; returns bytes dropped.
  uint64_t EvictSsd();
  // Every node's DRAM as the last memory round saw it.
  std::vector<NodeMemoryView> MemoryByNode() const;

  // ---- For puts waiting for DRAM ----

  // A put found no DRAM: drops reserved clean units (whole groups) of the
  // node with the largest reserve until `size` contiguous bytes are free
  // there; with every reserve empty, runs a round itself (at most every
  // 20 ms) and tries once more. True when it freed anything. REQUIRES: no
  // lock held.
  bool MakeRoom(uint64_t size);
  // Whether anything in DRAM may yet turn free: allocated beyond what the
  // last round found hard-pinned or in filling groups.
  bool RoomMayCome() const;
  // NO_SPACE for a put of `size` bytes, saying what holds each node's DRAM.
  Status NoRoomStatus(uint64_t size, Duration waited) const;

  // ---- For nodes asking for work ----

  // A node asks for work and none is queued: if its writeback is behind,
  // runs a round (at most every 5 ms) so that the node's demand, not the
  // background tick, paces writeback. True when it ran one.
  bool RefillWriteback(NodeId node);

  // ---- The steps an operator's forced eviction shares ----

  // A group as an eviction unit.
  struct GroupUnit {
    bool evictable = false;
    uint64_t members = 0;
    uint64_t bytes = 0;  // of the members with a copy in the tier at hand
    TimePoint last_access;
    TimePoint disk_since;  // the newest member's ObjectMeta::disk_since
    bool all_on_disk = true;
    bool all_in_memory = true;
    // Why it is not evictable (any member).
    bool filling = false;
    bool hard_pinned = false;
    bool in_flight = false;  // a put of a member in flight
    bool pinned = false;     // a member's replica pinned by a task
    bool leased = false;
    // With memory_view: complete DRAM bytes per node, processing DRAM
    // (puts, staged promotions) per node, and the nodes holding the DRAM
    // copies of members without an SSD copy.
    using PerNode = absl::InlinedVector<std::pair<NodeId, uint64_t>, 2>;
    PerNode memory_bytes;
    PerNode staged_bytes;
    absl::InlinedVector<NodeId, 4> unwritten_nodes;
  };
  // What evicting `group` from `tier` (for local_disk: on `node`) means.
  // With `memory_view`, also filling groups, and where the DRAM copies are
  // (the memory round's view).
  GroupUnit InspectGroupLocked(const GroupSlot& group, Tier tier, NodeId node,
                               TimePoint now, bool memory_view = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role);
  // Evicts one group from `tier`; true when the group left the store (the
  // caller drops its entry).
  bool EvictGroupLocked(GroupSlot& group, Tier tier, const GroupUnit& unit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role);
  // Drops an object's complete DRAM copy now (the object too when it was
  // its last replica; the slot is then empty). Returns the bytes freed.
  uint64_t DropMemoryCopyLocked(ObjectSlot& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);

 private:
  // One memory round: eviction, writeback and the reserves, per node, as
  // `round` says. RunMemoryRound takes eviction_mu_ (one round at a time).
  void RunMemoryRound(MemoryRound& round);
  void RunMemoryRoundLocked(MemoryRound& round)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(eviction_mu_);
  void PlanObjectsForMemory(MemoryRound& round, TimePoint now);
  void PlanGroupsForMemory(MemoryRound& round, TimePoint now);
  void DecideMemoryRound(MemoryRound& round);
  void ActOnObjectsForMemory(MemoryRound& round, TimePoint now);
  void ActOnGroupsForMemory(MemoryRound& round, TimePoint now);
  // How the complete DRAM copy `memory` of `meta` (not a group member) is
  // held; *unwritten when writeback may take it.
  DramUse ClassifyMemory(const ObjectMeta& meta, const Replica& memory,
                         bool node_has_ssd, TimePoint now,
                         bool* unwritten) const;
  // The same for a group (InspectGroupLocked with memory_view).
  // `offloadable`: every member without an SSD copy is on a node with one.
  DramUse ClassifyGroupMemory(const GroupUnit& unit, bool offloadable,
                              bool* unwritten) const;
  bool GroupOffloadable(const GroupUnit& unit, const MemoryRound& round) const;
  // Runs a memory round (eviction with `need_free` extra, writeback,
  // reserves) unless one is running or the last ran less than
  // max(min_interval, what it took) ago. True when it ran one.
  bool RunRoundIfDue(uint64_t need_free, Duration min_interval);
  // The share of a node's DRAM its unwritten bytes may hold.
  double WritebackMark() const;
  // Whether `node`'s unwritten bytes were above the writeback watermark
  // when the last round saw them.
  bool WritebackBehind(NodeId node) const;
  // Drops `entry`'s DRAM copies if it is still a clean, evictable unit on
  // `node` not read since the round saw it. Returns the bytes freed.
  uint64_t DropReserved(NodeId node, const ReserveEntry& entry);
  // Frees (or schedules the freeing of) an object's DRAM copy. Returns the
  // bytes freed or scheduled; 0 if nothing happened.
  uint64_t EvictMemoryLocked(ObjectSlot& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  // `fill_cap`: the highest watermark the node's store allows (SsdFillCap).
  uint64_t EvictSsdOf(NodeId node, TierUsage usage, double fill_cap);
  // The SSD tier's eviction order in force (a run-time knob).
  const EvictionPolicy& SsdPolicy() const;
  // SSD groups, pass 1: every evictable group on `node` as one candidate,
  // ranked by `policy`.
  void PlanGroups(EvictionPlanner& planner, const EvictionPolicy& policy,
                  NodeId node);
  // Pass 2: sweeps groups up to `cutoff` as `policy` says, evicting each
  // whole until `need` bytes are evicted (0: none) and reinserting each
  // whole that the policy gives another turn.
  uint64_t EvictGroups(const EvictionPolicy& policy, NodeId node,
                       TimePoint cutoff, uint64_t need);
  void CountEviction(Tier tier, uint64_t bytes);

  MasterState& s_;
  Offloader& offloader_;
  // One of each policy, by EvictionPolicyKind.
  const std::unique_ptr<EvictionPolicy> ssd_policies_[2];
  // One eviction round at a time (the tick, a waiting put and a node's pull
  // may each start one); taken before any stripe lock.
  Mutex eviction_mu_;
  // When the last memory round ran (the clock's nanoseconds; 0: never).
  std::atomic<int64_t> last_memory_round_ns_{0};
  // What the last round took, in real nanoseconds.
  std::atomic<int64_t> last_memory_round_cost_ns_{0};
};

}  // namespace mooncake_tier
