#pragma once

// The "core" scenario: metadata throughput of an in-process Master (no
// network, no data bytes). Loads `objects` small objects onto a few
// registered nodes sized so that no eviction runs, then measures put,
// get_replica_list and exists with 1 and 2 threads, one key per call and in
// batches of 32. Emits one result per (op, threads).
//
// Thread safety: runs on the calling thread plus worker threads it joins
// before returning.

#include <cstdint>

#include "bench/result_sink.h"

namespace mooncake_tier::bench {

// Default object count before --scale is applied.
inline constexpr uint64_t kDefaultCoreObjects = 1'000'000;

// Returns the process exit code: 0 on success, 1 if any engine call failed.
int RunCoreScenario(const CommonOptions& options, ResultSink& sink,
                    uint64_t objects);

}  // namespace mooncake_tier::bench
