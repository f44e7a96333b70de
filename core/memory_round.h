#pragma once

// Internal to the engine (core/tiering*.cc): the working state of one
// memory round (Tiering::RunMemoryRound, docs/design/tiering.md). Pass 1
// classifies every unit with a DRAM copy per node and feeds three
// planners; the round then fixes each node's needs and recency cutoffs;
// pass 2 acts on the units at or below them.
//
// Thread safety: none; one round at a time (Tiering::eviction_mu_).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/clock.h"
#include "core/dram_pressure.h"
#include "core/eviction_planner.h"
#include "core/node_registry.h"
#include "protocol/types.h"

namespace mooncake_tier {

// Bytes to free so that `usage` drops to (high - ratio) of capacity; 0
// while below the high watermark and nothing extra is wanted.
inline uint64_t BytesOverTarget(TierUsage usage, double high, double ratio,
                                uint64_t extra) {
  if (usage.capacity == 0) return 0;
  const double cap = static_cast<double>(usage.capacity);
  if (extra == 0 && static_cast<double>(usage.used) < high * cap) return 0;
  const auto target = static_cast<uint64_t>(std::floor((high - ratio) * cap));
  const uint64_t want = usage.used + extra;
  return want > target ? want - target : 0;
}

// How a unit's DRAM copy is held (MemoryBreakdown's categories).
enum class DramUse : uint8_t {
  kHardPinned,
  kInFlight,
  kWriteback,
  kPinned,
  kLeased,
  kClean,
  kDirty,
};

// Units a put may drop without I/O, kept per node between rounds.
inline constexpr size_t kMaxReserveUnits = 4096;

struct MemoryRound {
  // What the round does (each may be off).
  bool evict = false;       // free down to the eviction target
  bool write_back = false;  // write cold dirty units back to SSD
  uint64_t need_free = 0;   // extra bytes to free on the likeliest node

  struct Node {
    uint64_t capacity = 0;
    uint64_t used = 0;
    uint64_t freeing = 0;  // DRAM that queued drop-source offloads free
    bool has_ssd = false;
    bool write_back_paused = false;  // its SSD is full: offloads wait
    MemoryBreakdown bytes;
    EvictionPlanner evict;      // every evictable unit
    EvictionPlanner writeback;  // units writeback may take
    EvictionPlanner clean;      // evictable units with nothing to write
    uint64_t extra = 0;
    uint64_t evict_need = 0, writeback_need = 0, reserve_need = 0;
    TimePoint evict_cutoff = TimePoint::min();
    TimePoint writeback_cutoff = TimePoint::min();
    TimePoint reserve_cutoff = TimePoint::min();
    uint64_t evicted = 0;  // freed or scheduled to be freed
    uint64_t written = 0;  // queued for writeback
    std::vector<ReserveEntry> reserve;

    // Books one unit's `bytes` here in pass 1.
    void Add(DramUse use, bool unwritten, TimePoint last_access,
             uint64_t bytes);
    // A unit eviction may take now: clean, or dirty while its SSD takes
    // the offload that must come first.
    bool Evictable(DramUse use) const {
      return use == DramUse::kClean ||
             (use == DramUse::kDirty && !write_back_paused);
    }
    bool Evicts(DramUse use, TimePoint last_access) const {
      return Evictable(use) && evicted < evict_need &&
             last_access <= evict_cutoff;
    }
    bool WritesBack(bool unwritten, TimePoint last_access) const {
      return unwritten && written < writeback_need &&
             last_access <= writeback_cutoff;
    }
    bool Reserves(DramUse use, TimePoint last_access) const {
      return use == DramUse::kClean && reserve.size() < kMaxReserveUnits &&
             last_access <= reserve_cutoff;
    }
  };
  absl::flat_hash_map<NodeId, Node> nodes;

  Node* Find(NodeId id) {
    auto it = nodes.find(id);
    return it == nodes.end() ? nullptr : &it->second;
  }
};

inline void MemoryRound::Node::Add(DramUse use, bool unwritten,
                                   TimePoint last_access, uint64_t bytes) {
  switch (use) {
    case DramUse::kHardPinned:
      this->bytes.hard_pinned += bytes;
      break;
    case DramUse::kInFlight:
      this->bytes.in_flight += bytes;
      break;
    case DramUse::kWriteback:
      this->bytes.writeback += bytes;
      break;
    case DramUse::kPinned:
      this->bytes.pinned += bytes;
      break;
    case DramUse::kLeased:
      this->bytes.leased += bytes;
      break;
    case DramUse::kClean:
      this->bytes.clean += bytes;
      break;
    case DramUse::kDirty:
      this->bytes.dirty += bytes;
      break;
  }
  if (Evictable(use)) evict.Add(last_access, bytes);
  if (use == DramUse::kClean) clean.Add(last_access, bytes);
  if (unwritten) {
    this->bytes.unwritten += bytes;
    writeback.Add(last_access, bytes);
  }
}

}  // namespace mooncake_tier
