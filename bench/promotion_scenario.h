#pragma once

// The "promotion" scenario: what promotion on hit buys, per admission
// policy, on three read workloads.
//
// Every (workload, policy) pair gets a fresh in-process store
// (EmbeddedCluster: master, one storage node, the real SSD store on files
// in a temp dir under common.scratch_dir, removed afterwards), offload
// on_evict, and a key space five times the node's DRAM. All keys are put
// first, so most of them sit on SSD only; then a stream of single-key Gets
// runs, with the cluster stepped by hand on a ManualClock every 64 Gets
// (heartbeats, offloads, promotions, eviction). Policies:
//   off        no promotion on hit
//   threshold  promotion on hit, sketch estimate >= 2
//   tinylfu    the same, and the candidate must beat the DRAM victims
// Proactive promotion is off in all three. Workloads:
//   zipf      zipf(0.99) over the key space
//   scan_mix  the same zipf, one Get in four a one-shot sequential scan of
//             cold keys (never read again)
//   warmup    zipf over a hot set A, then over a disjoint hot set B;
//             measured from the switch
// One result per pair:
//   {"scenario":"promotion","workload":W,"policy":P,"memory_hit_ratio":X,
//    "mean_get_us":X,"p99_get_us":X,"promoted":N,...}
// then one line per target ("check"), with the figure measured in the same
// run; the scenario never fails on a missed target. README.md has details.
//
// Thread safety: runs on the calling thread.

#include <cstdint>

#include "bench/result_sink.h"

namespace mooncake_tier::bench {

// Objects the node's DRAM holds at --scale 1 (16 KiB each: 32 MiB).
inline constexpr uint64_t kDefaultPromotionDramObjects = 2048;

// Returns the process exit code: 0 on success, 1 if the store could not be
// started or an engine call failed unexpectedly.
int RunPromotionScenario(const CommonOptions& common, ResultSink& sink);

}  // namespace mooncake_tier::bench
