// Tiering (core/tiering.h): the DRAM tier as one pipeline
// (docs/design/tiering.md). Per node, a memory round
//   - evicts down to the eviction target once DRAM crosses the high
//     watermark (least recently used first; clean units go at once, dirty
//     ones are offloaded first under offload),
//   - writes cold dirty units back to SSD (whole groups) while a node's
//     unwritten bytes are above the writeback watermark, so that clean
//     units, which go without any I/O, are always at hand,
//   - and leaves the coldest clean units in the node's reserve, from which
//     a put that finds DRAM full drops victims at once (MakeRoom).
// A round is two passes over the object and group tables: the first
// classifies every DRAM copy per node and feeds the planners, the second
// acts on the units at or below each node's recency cutoffs.

#include "core/tiering.h"

#include <algorithm>

#include "base/byte_units.h"
#include "core/memory_round.h"

namespace mooncake_tier {
namespace {

// A put that found no room may run a round itself, at most this often; a
// node asking for work while writeback is behind, at most this often.
// Either way never more often than the last round took (rounds walk every
// object: at most half of one thread goes to them).
constexpr Duration kPutRoundInterval = std::chrono::milliseconds(20);
constexpr Duration kPullRoundInterval = std::chrono::milliseconds(5);
// Reserved units a put drops at most before it tries to place again.
constexpr int kMaxDropsPerAttempt = 256;

}  // namespace

Tiering::Tiering(MasterState* state, Offloader* offloader)
    : s_(*state),
      offloader_(*offloader),
      ssd_policies_{MakeEvictionPolicy(EvictionPolicyKind::kLru),
                    MakeEvictionPolicy(EvictionPolicyKind::kClock)} {}

void Tiering::Round() {
  MemoryRound round;
  round.evict = true;
  round.write_back = true;
  RunMemoryRound(round);
}

uint64_t Tiering::EvictMemory(uint64_t need_free) {
  MemoryRound round;
  round.evict = true;
  round.need_free = need_free;
  RunMemoryRound(round);
  uint64_t evicted = 0;
  for (const auto& [id, node] : round.nodes) evicted += node.evicted;
  return evicted;
}

uint64_t Tiering::WriteBack() {
  MemoryRound round;
  round.write_back = true;
  RunMemoryRound(round);
  uint64_t written = 0;
  for (const auto& [id, node] : round.nodes) written += node.written;
  return written;
}

void Tiering::RunMemoryRound(MemoryRound& round) {
  MutexLock one_round(&eviction_mu_);
  RunMemoryRoundLocked(round);
}

void Tiering::RunMemoryRoundLocked(MemoryRound& round) {
  const TimePoint now = s_.clock->Now();
  const auto started = std::chrono::steady_clock::now();
  std::vector<NodeId> live;
  for (const NodeView& view : s_.nodes.List()) {
    MemoryRound::Node& node = round.nodes[view.id];
    node.capacity = view.spec.dram_size;
    node.used = view.dram_used;
    node.has_ssd = view.spec.ssd_capacity > 0;
    // Held ranges come back by themselves once their location grants ran
    // out: evicting more for them would only hold more.
    node.freeing =
        s_.lifecycle.OffloadBytesOf(view.id).freeing + view.dram_held;
    node.write_back_paused = s_.nodes.OffloadsPaused(view.id, now);
    node.bytes.capacity = node.capacity;
    node.bytes.used = node.used;
    live.push_back(view.id);
  }
  PlanObjectsForMemory(round, now);
  PlanGroupsForMemory(round, now);
  DecideMemoryRound(round);
  ActOnObjectsForMemory(round, now);
  ActOnGroupsForMemory(round, now);
  std::sort(live.begin(), live.end());
  s_.pressure.Retain(live);
  for (auto& [id, node] : round.nodes) {
    std::sort(node.reserve.begin(), node.reserve.end(),
              [](const ReserveEntry& a, const ReserveEntry& b) {
                return a.last_access < b.last_access;
              });
    s_.pressure.Publish(id, node.bytes, std::move(node.reserve), now);
  }
  last_memory_round_ns_.store(now.time_since_epoch().count(),
                              std::memory_order_relaxed);
  last_memory_round_cost_ns_.store(
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() -
                                           started)
          .count(),
      std::memory_order_relaxed);
  s_.counters.memory_rounds.fetch_add(1, std::memory_order_relaxed);
  s_.space.Notify();
}

DramUse Tiering::ClassifyMemory(const ObjectMeta& meta, const Replica& memory,
                                bool node_has_ssd, TimePoint now,
                                bool* unwritten) const {
  *unwritten = false;
  if (meta.hard_pin) return DramUse::kHardPinned;
  if (meta.PutInFlight()) return DramUse::kInFlight;
  const bool on_ssd = meta.HasComplete(Tier::kLocalDisk);
  if (memory.refcnt > 0) return on_ssd ? DramUse::kPinned : DramUse::kWriteback;
  if (meta.AnyPinned()) return DramUse::kPinned;
  // Nothing to write: a copy is on SSD, offload is off, or this node has no
  // SSD (its DRAM copy is the only one it will ever have).
  const bool nothing_to_write = on_ssd || !s_.Offloads() || !node_has_ssd;
  *unwritten = !nothing_to_write;
  if (meta.Leased(now)) return DramUse::kLeased;
  return nothing_to_write ? DramUse::kClean : DramUse::kDirty;
}

DramUse Tiering::ClassifyGroupMemory(const GroupUnit& unit, bool offloadable,
                                     bool* unwritten) const {
  *unwritten = false;
  if (unit.hard_pinned) return DramUse::kHardPinned;
  if (unit.in_flight) return DramUse::kInFlight;
  if (unit.pinned)
    return unit.all_on_disk ? DramUse::kPinned : DramUse::kWriteback;
  const bool nothing_to_write =
      unit.all_on_disk || !s_.Offloads() || !offloadable;
  *unwritten = !nothing_to_write;
  if (unit.leased) return DramUse::kLeased;
  return nothing_to_write ? DramUse::kClean : DramUse::kDirty;
}

void Tiering::PlanObjectsForMemory(MemoryRound& round, TimePoint now) {
  s_.index.ReadEachObject([&](std::string_view, const ObjectMeta& meta) {
    if (meta.group) return;  // its group is the unit
    for (const Replica& r : meta.replicas) {
      if (r.desc.tier != Tier::kMemory) continue;
      MemoryRound::Node* node = round.Find(r.desc.node);
      if (node == nullptr) continue;
      if (r.desc.state == ReplicaState::kProcessing) {
        node->bytes.in_flight += r.desc.size;
        continue;
      }
      bool unwritten = false;
      const DramUse use =
          ClassifyMemory(meta, r, node->has_ssd, now, &unwritten);
      node->Add(use, unwritten, meta.last_access, meta.size);
    }
  });
}

bool Tiering::GroupOffloadable(const GroupUnit& unit,
                               const MemoryRound& round) const {
  for (NodeId node : unit.unwritten_nodes) {
    auto it = round.nodes.find(node);
    if (it == round.nodes.end() || !it->second.has_ssd) return false;
  }
  return true;
}

void Tiering::PlanGroupsForMemory(MemoryRound& round, TimePoint now) {
  s_.index.ForEachGroup([&](GroupSlot& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                            group_stripe_role) {
    const GroupUnit unit = InspectGroupLocked(group, Tier::kMemory, kNoNode,
                                              now, /*memory_view=*/true);
    for (const auto& [id, bytes] : unit.staged_bytes) {
      if (MemoryRound::Node* node = round.Find(id)) {
        (unit.filling ? node->bytes.filling : node->bytes.in_flight) += bytes;
      }
    }
    if (unit.filling) {
      for (const auto& [id, bytes] : unit.memory_bytes) {
        if (MemoryRound::Node* node = round.Find(id)) {
          node->bytes.filling += bytes;
        }
      }
      return;
    }
    bool unwritten = false;
    const DramUse use =
        ClassifyGroupMemory(unit, GroupOffloadable(unit, round), &unwritten);
    for (const auto& [id, bytes] : unit.memory_bytes) {
      if (MemoryRound::Node* node = round.Find(id)) {
        node->Add(use, unwritten, unit.last_access, bytes);
      }
    }
  });
}

void Tiering::DecideMemoryRound(MemoryRound& round) {
  const RuntimeKnobs::Watermarks marks = s_.knobs.memory();
  const double writeback_mark = WritebackMark();
  // An extra need (a put that found no room) goes to the node that can
  // free the most at once, else the one that can free the most at all.
  if (round.need_free > 0) {
    MemoryRound::Node* best = nullptr;
    for (auto& [id, node] : round.nodes) {
      if (best == nullptr ||
          std::pair(node.bytes.clean, node.bytes.clean + node.bytes.dirty) >
              std::pair(best->bytes.clean,
                        best->bytes.clean + best->bytes.dirty)) {
        best = &node;
      }
    }
    if (best != nullptr) best->extra = round.need_free;
  }
  for (auto& [id, node] : round.nodes) {
    const double cap = static_cast<double>(node.capacity);
    if (round.evict) {
      const TierUsage usage{node.capacity,
                            node.used - std::min(node.used, node.freeing)};
      node.evict_need =
          BytesOverTarget(usage, marks.high, marks.ratio, node.extra);
      if (node.evict_need > 0) {
        node.evict_cutoff = node.evict.Cutoff(node.evict_need);
      }
    }
    if (round.write_back && s_.Offloads() && node.has_ssd &&
        !node.write_back_paused) {
      const auto target = static_cast<uint64_t>(writeback_mark * cap);
      if (node.bytes.unwritten > target) {
        node.writeback_need = node.bytes.unwritten - target;
        node.writeback_cutoff = node.writeback.Cutoff(node.writeback_need);
      }
    }
    // The reserve: what this round evicts plus about one round's worth of
    // eviction more, coldest first.
    node.reserve_need =
        node.evict_need + static_cast<uint64_t>(marks.ratio * cap);
    if (node.reserve_need > 0) {
      node.reserve_cutoff = node.clean.Cutoff(node.reserve_need);
    }
  }
}

void Tiering::ActOnObjectsForMemory(MemoryRound& round, TimePoint now) {
  s_.index.ForEachObject([&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                             object_stripe_role) {
    ObjectMeta& meta = *object;
    if (meta.group) return;
    Replica* memory = meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
    if (memory == nullptr) return;
    MemoryRound::Node* node = round.Find(memory->desc.node);
    if (node == nullptr) return;
    bool unwritten = false;
    const DramUse use =
        ClassifyMemory(meta, *memory, node->has_ssd, now, &unwritten);
    if (node->Evicts(use, meta.last_access)) {
      node->evicted += EvictMemoryLocked(object);  // may erase it
      return;
    }
    if (node->WritesBack(unwritten, meta.last_access)) {
      Result<TaskId> queued = offloader_.QueueLocked(
          object.key(), meta, *memory, OffloadIntent::kCopy);
      if (queued.ok()) {
        node->written += meta.size;
      } else if (queued.status().reason() == ErrorReason::kQueueFull) {
        node->writeback_need = node->written;  // full: the next round
      }
      return;
    }
    if (node->Reserves(use, meta.last_access)) {
      node->reserve.push_back(
          {std::string(object.key()), false, meta.last_access, meta.size});
    }
  });
}

void Tiering::ActOnGroupsForMemory(MemoryRound& round, TimePoint now) {
  s_.index.ForEachGroup([&](GroupSlot& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                            group_stripe_role) {
    const GroupUnit unit = InspectGroupLocked(group, Tier::kMemory, kNoNode,
                                              now, /*memory_view=*/true);
    if (unit.filling || unit.memory_bytes.empty()) return;
    bool unwritten = false;
    const DramUse use =
        ClassifyGroupMemory(unit, GroupOffloadable(unit, round), &unwritten);
    // A group is one unit: chosen on any of its nodes, it goes (or is
    // written back) whole, and counts on each of them.
    bool evict = false;
    bool write_back = false;
    for (const auto& [id, bytes] : unit.memory_bytes) {
      const MemoryRound::Node* node = round.Find(id);
      if (node == nullptr) continue;
      evict = evict || node->Evicts(use, unit.last_access);
      write_back = write_back || node->WritesBack(unwritten, unit.last_access);
    }
    if (evict) {
      for (const auto& [id, bytes] : unit.memory_bytes) {
        if (MemoryRound::Node* node = round.Find(id)) node->evicted += bytes;
      }
      if (EvictGroupLocked(group, Tier::kMemory, unit)) {
        group.Erase();  // the group left the store whole
      }
      return;
    }
    if (write_back) {
      if (offloader_.QueueGroupLocked(group, OffloadIntent::kCopy)) {
        for (const auto& [id, bytes] : unit.memory_bytes) {
          if (MemoryRound::Node* node = round.Find(id)) {
            node->written += bytes;
          }
        }
      }
      return;
    }
    const std::string_view id_view = group.id().key;
    for (const auto& [id, bytes] : unit.memory_bytes) {
      MemoryRound::Node* node = round.Find(id);
      if (node != nullptr && node->Reserves(use, unit.last_access)) {
        node->reserve.push_back(
            {std::string(id_view), true, unit.last_access, bytes});
      }
    }
  });
}

// ---- The put path: room at once, or a wait ----

bool Tiering::MakeRoom(uint64_t size) {
  for (int pass = 0; pass < 2; ++pass) {
    int drops = 0;
    while (drops < kMaxDropsPerAttempt) {
      const NodeId node = s_.pressure.Richest();
      if (node == kNoNode) break;
      std::optional<ReserveEntry> entry = s_.pressure.Pop(node);
      if (!entry) continue;
      ++drops;
      if (DropReserved(node, *entry) == 0) continue;  // changed since
      if (s_.nodes.LargestFreeOn(node) >= size) return true;
    }
    if (drops > 0) return true;  // some room: the placement may use it
    if (pass > 0 || !RunRoundIfDue(size, kPutRoundInterval)) break;
    s_.counters.memory_rounds_by_puts.fetch_add(1, std::memory_order_relaxed);
  }
  return false;
}

double Tiering::WritebackMark() const {
  // Under write_through every put is written back: nothing stays dirty.
  if (s_.config.offload_mode == OffloadMode::kWriteThrough) return 0.0;
  const RuntimeKnobs::Watermarks marks = s_.knobs.memory();
  return std::min(s_.knobs.writeback_watermark(), marks.high - marks.ratio);
}

bool Tiering::RunRoundIfDue(uint64_t need_free, Duration min_interval) {
  const TimePoint now = s_.clock->Now();
  const TimePoint last(
      Duration(last_memory_round_ns_.load(std::memory_order_relaxed)));
  const Duration cost(
      last_memory_round_cost_ns_.load(std::memory_order_relaxed));
  if (last != TimePoint() && now - last < std::max(min_interval, cost)) {
    return false;
  }
  if (!eviction_mu_.TryLock()) return false;  // one is running: wait for it
  MemoryRound round;
  round.evict = true;
  round.write_back = true;
  round.need_free = need_free;
  RunMemoryRoundLocked(round);
  eviction_mu_.Unlock();
  return true;
}

bool Tiering::WritebackBehind(NodeId node) const {
  if (!s_.Offloads()) return false;
  const std::optional<DramPressure::NodeState> seen = s_.pressure.Get(node);
  if (!seen || seen->bytes.capacity == 0) return false;
  return static_cast<double>(seen->bytes.unwritten) >
         WritebackMark() * static_cast<double>(seen->bytes.capacity);
}

bool Tiering::RefillWriteback(NodeId node) {
  if (!WritebackBehind(node) ||
      s_.nodes.OffloadsPaused(node, s_.clock->Now()) ||
      !RunRoundIfDue(0, kPullRoundInterval)) {
    return false;
  }
  s_.counters.memory_rounds_by_pulls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

uint64_t Tiering::DropReserved(NodeId node, const ReserveEntry& entry) {
  const TimePoint now = s_.clock->Now();
  if (!entry.group) {
    return s_.index.Update(
        entry.unit,
        [&](ObjectSlot& object)
            ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) -> uint64_t {
              if (!object) return 0;
              ObjectMeta& meta = *object;
              const Replica* memory =
                  meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
              if (meta.group || memory == nullptr ||
                  memory->desc.node != node ||
                  meta.last_access > entry.last_access) {
                return 0;  // joined a group, moved, or read since: no longer a
                           // victim
              }
              bool unwritten = false;
              if (ClassifyMemory(meta, *memory, s_.NodeHasSsd(node), now,
                                 &unwritten) != DramUse::kClean) {
                return 0;
              }
              s_.counters.put_evictions.fetch_add(1, std::memory_order_relaxed);
              return DropMemoryCopyLocked(object);
            });
  }
  return s_.index.UpdateGroup(
      entry.unit,
      [&](GroupSlot& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
          group_stripe_role) -> uint64_t {
        if (!group) return 0;
        const GroupUnit unit = InspectGroupLocked(group, Tier::kMemory, kNoNode,
                                                  now, /*memory_view=*/true);
        if (unit.filling || unit.last_access > entry.last_access) return 0;
        bool on_node = false;
        for (const auto& [id, bytes] : unit.memory_bytes) on_node |= id == node;
        bool offloadable = true;
        for (NodeId id : unit.unwritten_nodes) offloadable &= s_.NodeHasSsd(id);
        bool unwritten = false;
        if (!on_node || ClassifyGroupMemory(unit, offloadable, &unwritten) !=
                            DramUse::kClean) {
          return 0;
        }
        s_.counters.put_evictions.fetch_add(1, std::memory_order_relaxed);
        if (EvictGroupLocked(group, Tier::kMemory, unit)) group.Erase();
        return unit.bytes;
      });
}

bool Tiering::RoomMayCome() const {
  // Anything but hard-pinned DRAM and the filling groups' may turn free:
  // dirty units once written back, leased ones once released, pinned ones
  // once their task ends, puts in flight once they end (and then dirty).
  // What is allocated now against what the last round found pinned for
  // good: the round may be older than the puts that filled DRAM since (a
  // stream fills a node between two rounds), and what it did not see may
  // still be freed.
  for (const NodeView& view : s_.nodes.List()) {
    const std::optional<DramPressure::NodeState> seen =
        s_.pressure.Get(view.id);
    const uint64_t stuck = seen ? seen->bytes.hard_pinned +
                                      seen->bytes.filling + seen->bytes.slack()
                                : 0;
    if (view.dram_used > stuck) return true;
  }
  return false;
}

Status Tiering::NoRoomStatus(uint64_t size, Duration waited) const {
  std::string why = "no DRAM for " + std::to_string(size) + " bytes";
  if (waited > Duration::zero()) {
    why += " after waiting " +
           std::to_string(
               std::chrono::duration_cast<std::chrono::milliseconds>(waited)
                   .count()) +
           " ms for writeback to free some";
  }
  const auto mib = [](uint64_t b) { return HumanBytes(b, ByteUnit::kPiB); };
  for (const auto& [id, state] : s_.pressure.All()) {
    const MemoryBreakdown& b = state.bytes;
    const std::optional<NodeView> view = s_.nodes.Get(id);
    why += "; node '" + (view ? view->spec.name : std::to_string(id)) + "' (" +
           mib(b.capacity) + "): " + mib(b.free()) + " free, " + mib(b.dirty) +
           " waiting for writeback, " + mib(b.writeback) +
           " being written back, " + mib(b.leased) + " leased by readers, " +
           mib(b.pinned) + " pinned by tasks, " + mib(b.in_flight) +
           " in puts in flight, " + mib(b.filling) + " in filling groups, " +
           mib(b.hard_pinned) + " hard-pinned, " + mib(b.clean) +
           " clean (taken by other puts)";
  }
  return Status(ErrorReason::kNoSpace, std::move(why));
}

std::vector<NodeMemoryView> Tiering::MemoryByNode() const {
  std::vector<NodeMemoryView> out;
  for (const auto& [id, state] : s_.pressure.All()) {
    NodeMemoryView view;
    view.node = id;
    view.bytes = state.bytes;
    view.reserve_bytes = state.reserve_bytes;
    view.reserve_units = state.reserve_units;
    view.offload = s_.lifecycle.OffloadBytesOf(id);
    out.push_back(view);
  }
  return out;
}

uint64_t Tiering::EvictMemoryLocked(ObjectSlot& object) {
  ObjectMeta& meta = *object;
  Replica* memory = meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
  if (memory == nullptr) return 0;
  if (s_.Offloads() && !meta.HasComplete(Tier::kLocalDisk) &&
      s_.NodeHasSsd(memory->desc.node)) {
    // Write to SSD first; the DRAM copy goes when the node reports success
    // (under write_through too: this object's own offload failed).
    const bool queued =
        offloader_
            .QueueLocked(object.key(), meta, *memory, OffloadIntent::kMove)
            .ok();
    return queued ? meta.size : 0;
  }
  return DropMemoryCopyLocked(object);
}

uint64_t Tiering::DropMemoryCopyLocked(ObjectSlot& object) {
  ObjectMeta& meta = *object;
  Replica* memory = meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
  if (memory == nullptr) return 0;
  const uint64_t size = meta.size;
  const Replica dropped = *memory;
  meta.Erase(dropped.desc.id);
  s_.ReleaseReplicaLocked(meta, object.key(), dropped,
                          /*node_alive=*/true);
  s_.counters.evicted_memory_objects.fetch_add(1, std::memory_order_relaxed);
  s_.counters.evicted_memory_bytes.fetch_add(size, std::memory_order_relaxed);
  if (meta.replicas.empty()) {
    s_.counters.objects_evicted.fetch_add(1, std::memory_order_relaxed);
  }
  object.EraseIfEmpty();
  return size;
}

}  // namespace mooncake_tier
