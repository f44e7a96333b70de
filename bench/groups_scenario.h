#pragma once

// The "groups" scenario (issue 3): what groups of 8 cost and what they buy.
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
// Thread safety: runs on the calling thread.

#include <cstdint>

#include "bench/result_sink.h"

namespace mooncake_tier::bench {

// Objects of the bookkeeping phase before --scale is applied.
inline constexpr uint64_t kDefaultGroupsObjects = 200'000;
// Groups of the key space of the pressure phase before --scale is applied.
inline constexpr uint64_t kDefaultPressureGroups = 4096;

// Returns the process exit code: 0 on success, 1 if an engine call failed
// unexpectedly.
int RunGroupsScenario(const CommonOptions& options, ResultSink& sink);

}  // namespace mooncake_tier::bench
