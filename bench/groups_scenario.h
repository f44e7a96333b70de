#pragma once

// The "groups" scenario: what groups of 8 cost and what they buy.
//
// 1. Bookkeeping cost: PutStart + PutEnd and Exists ops/s of objects in
//    groups of 8 against the same objects without group metadata, in the
//    same run, one thread, one key per call and a group (8 keys) per call.
// 2. Consistency under pressure: groups of 8 over a key space four times
//    DRAM, offload on_evict to a fake node, readers reading every member of
//    a recent-ish group. Once with the group engine, once with the same
//    objects put without group metadata (eviction per object); reports the
//    fraction of group reads that found some members but not all.
//
// Options (GroupsOptions) select parts of phase 1 and can skip phase 2, so
// that one variant, op and batch size can be run alone, e.g. under callgrind
// (bench/README.md, section groups). The put and the exists part of each
// bookkeeping run are the non-inlined functions GroupsPutPhase and
// GroupsExistsPhase (groups_scenario.cc), for --toggle-collect.
//
// Thread safety: runs on the calling thread.

#include <cstddef>
#include <cstdint>

#include "bench/result_sink.h"

namespace mooncake_tier::bench {

// Objects of the bookkeeping phase before --scale is applied.
inline constexpr uint64_t kDefaultGroupsObjects = 200'000;
// Groups of the key space of the pressure phase before --scale is applied.
inline constexpr uint64_t kDefaultPressureGroups = 4096;

// Which objects a bookkeeping run puts: with group metadata, without, or
// both (alternating, and the result line carries both and their ratio).
enum class GroupsVariant { kBoth, kGrouped, kUngrouped };
// Which ops of the bookkeeping phase are reported. Exists needs the objects,
// so kExists still runs (and checks) the put phase but does not report it;
// kPut skips the exists phase.
enum class GroupsOp { kAll, kPut, kExists };

// Members per group, in both phases.
inline constexpr uint32_t kGroupsGroupSize = 8;
// Limits of GroupsOptions.
inline constexpr size_t kMaxGroupsBatch = 65'536;
inline constexpr int kDefaultGroupsRepeats = 5;
inline constexpr int kMaxGroupsRepeats = 1000;

struct GroupsOptions {
  // Default: both.
  GroupsVariant variant = GroupsVariant::kBoth;
  // Default: all.
  GroupsOp op = GroupsOp::kAll;
  // Keys per PutStart / PutEnd / Exists call. 0: batch 1, then batch 8.
  // REQUIRES: 0 <= batch <= kMaxGroupsBatch.
  size_t batch = 0;
  // Runs per selected variant and batch; the best counts.
  // REQUIRES: 1 <= repeats <= kMaxGroupsRepeats.
  int repeats = kDefaultGroupsRepeats;
  // Objects of the bookkeeping phase. 0: kDefaultGroupsObjects x --scale,
  // rounded down to whole groups of 8 (at least one).
  // REQUIRES: 0 or a multiple of kGroupsGroupSize.
  uint64_t objects = 0;
  // Skips phase 2 (consistency under pressure).
  bool skip_pressure = false;
};

// Returns the process exit code: 0 on success, 1 if an engine call failed
// unexpectedly, 2 if `groups` breaks its REQUIRES (nothing runs then).
int RunGroupsScenario(const CommonOptions& options, const GroupsOptions& groups,
                      ResultSink& sink);

}  // namespace mooncake_tier::bench
