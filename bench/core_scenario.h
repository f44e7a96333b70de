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
#include <string>
#include <vector>

#include "bench/result_sink.h"

namespace mooncake_tier::bench {

// Default object count before --scale is applied.
inline constexpr uint64_t kDefaultCoreObjects = 1'000'000;

// The ops the scenario measures, in the order it runs them.
const std::vector<std::string>& CoreOpNames();

struct CoreOptions {
  uint64_t objects = 0;
  // Only this op (one of CoreOpNames()) when not empty; reads still load
  // the keys first, with one unreported put pass.
  std::string op;
  // Only this thread count (1 or 2) when not 0.
  int threads = 0;
};

// Returns the process exit code: 0 on success, 1 if any engine call failed.
int RunCoreScenario(const CommonOptions& options, ResultSink& sink,
                    const CoreOptions& core);

}  // namespace mooncake_tier::bench
