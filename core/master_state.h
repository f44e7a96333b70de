#pragma once

// The state every part of the master shares, and the few helpers that keep
// it consistent whichever part changes it. The Master owns one; each part
// (core/promoter.h, ...) holds a reference to it. core/README.md maps the
// parts.
//
// Lock order (docs/design/core.md): group stripe -> object stripe (the
// ObjectIndex's, checked by it) -> node registry -> task table -> detached
// replicas. Every member is thread-safe on its own terms; the helpers below
// say which stripe they need.

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "core/dram_directory_log.h"
#include "core/dram_pressure.h"
#include "core/group_meta.h"
#include "core/group_table.h"
#include "core/master_config.h"
#include "core/master_stats.h"
#include "core/node_registry.h"
#include "core/object_index.h"
#include "core/object_table.h"
#include "core/runtime_knobs.h"
#include "core/space_signal.h"
#include "core/task_lifecycle.h"

namespace mooncake_tier {

struct MasterState {
  // REQUIRES: config passed MasterConfig::Validate(). `clock` outlives it.
  MasterState(MasterConfig config, const Clock* clock);
  MasterState(const MasterState&) = delete;
  MasterState& operator=(const MasterState&) = delete;

  // Start-time configuration. Its run-time knobs (RuntimeConfigChange) and
  // promotion options are the start values only: read `knobs` and
  // lifecycle.gate() for those.
  const MasterConfig config;
  RuntimeKnobs knobs;
  const Clock* const clock;
  // When this engine started: a predecessor's grants ran out
  // inherited_grant_window after it at the latest.
  const TimePoint started;
  // Every object and group, with their stripe locks.
  ObjectIndex index;
  NodeRegistry nodes;
  // Every task moving bytes between tiers, the replicas they pin and the
  // promotion gate; the parts register the policy of each kind.
  TaskLifecycle lifecycle;
  // What the last memory round saw per node, and the clean reserves.
  DramPressure pressure;
  // Wakes puts waiting for DRAM.
  SpaceSignal space;
  // DRAM held by groups still filling (sum of FillingDramBytes()).
  std::atomic<int64_t> filling_group_bytes{0};
  mutable MasterCounters counters;
  mutable GroupCounters group_counters;

  ReplicaId NextReplicaId() { return next_replica_id_.fetch_add(1) + 1; }
  bool Offloads() const { return config.offload_mode != OffloadMode::kOff; }
  bool NodeHasSsd(NodeId node) const {
    return nodes.SsdUsageOf(node).capacity > 0;
  }
  // Releases one replica of `meta` (already erased from it, or about to
  // be): its DRAM space (or, while a task pins it, detaches it until the
  // last unpin; a complete replica on a node with a DRAM directory is freed
  // once the node dropped its entry; a complete one that readers may still
  // read from their location caches is handed out again only once
  // meta.read_grant_until passed), or its SSD accounting and the node's
  // copy (queued for deletion).
  void ReleaseReplicaLocked(const ObjectMeta& meta, std::string_view key,
                            const Replica& replica, bool node_alive)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  // Records a complete local_disk replica of `meta` on `node` and its SSD
  // use; the object enters the SSD tier's eviction order now.
  void AddDiskReplica(ObjectMeta& meta, NodeId node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  // Removes an object and releases all its replicas.
  void DropObjectLocked(ObjectSlot& object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  // The group membership of `key`, read under its stripe alone.
  std::optional<GroupSpec> GroupOf(const std::string& key) const {
    return index.Read(key, [](const ObjectMeta* meta) {
      return meta == nullptr ? std::nullopt : meta->group_spec();
    });
  }

 private:
  std::atomic<ReplicaId> next_replica_id_{0};

 public:
  // The DRAM directories of the nodes that keep one (ha.md). Last, so that
  // it moves none of the hot members above (their cache lines were
  // measured: master-renovation.md).
  DramDirectoryLog directory;
};

// Keeps MasterState::filling_group_bytes in step with one group: made
// before the group changes, it books the change of the group's
// FillingDramBytes() when it goes out of scope. Dropped() before the group
// is erased. REQUIRES: the group's stripe is held for its whole life.
class FillingDelta {
 public:
  FillingDelta(std::atomic<int64_t>* total, const GroupMeta* group)
      : total_(total), group_(group), before_(group->FillingDramBytes()) {}
  ~FillingDelta() {
    const uint64_t after = group_ ? group_->FillingDramBytes() : 0;
    // Most changes (a member of a complete group, a retried put) change
    // nothing here: no atomic write for them.
    if (after == before_) return;
    total_->fetch_add(
        static_cast<int64_t>(after) - static_cast<int64_t>(before_),
        std::memory_order_relaxed);
  }
  void Dropped() { group_ = nullptr; }
  FillingDelta(const FillingDelta&) = delete;
  FillingDelta& operator=(const FillingDelta&) = delete;

 private:
  std::atomic<int64_t>* const total_;
  const GroupMeta* group_;
  const uint64_t before_;
};

// Applies `one` to every element of a batch, in order: each call's batch
// loop (one bad key never hides the others).
template <typename In, typename Fn>
auto ForEachInBatch(std::span<const In> batch, Fn&& one) {
  std::vector<decltype(one(batch[0]))> out;
  out.reserve(batch.size());
  for (const In& item : batch) out.push_back(one(item));
  return out;
}

}  // namespace mooncake_tier
