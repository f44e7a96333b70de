#pragma once

// The "alloc" scenario: the DRAM segment allocator (SpaceAllocator) on its
// own. For each size mix it fills a 1 GiB segment with random frees
// interleaved until the first allocation fails (utilisation reached, free
// extents left), then times alloc+free pairs under churn. A first-fit list
// allocator runs the same workload in the same process as the baseline.
//
// Thread safety: single-threaded.

#include "bench/result_sink.h"

namespace mooncake_tier::bench {

// Returns the process exit code: 0 on success, 1 if an allocator broke its
// contract (e.g. refused to free a range it handed out).
int RunAllocScenario(const CommonOptions& options, ResultSink& sink);

}  // namespace mooncake_tier::bench
