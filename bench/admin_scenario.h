#pragma once

// The "admin" scenario: what the operator surface costs.
//
// 1. Route latency: a real AdminServer (127.0.0.1, port 0) over a
//    MasterAdminFacade, with /metrics rendered by a real MasterMetrics
//    collector, in front of an in-process store holding 1,000,000 x --scale
//    objects, 80% of them in groups of 8. An httplib client measures p50 and
//    p99 per route (status, a 1000-group page, an object, a group,
//    /metrics); the same engine call without HTTP and JSON is timed beside
//    it, so a slow route says whether the engine or the edge is slow.
// 2. Interference: data-path Gets of DRAM objects through the in-process
//    client, in alternating quiet and scraped windows, the scraped ones with
//    a thread fetching /metrics, /api/v1/status and a group page at a
//    Prometheus-like cadence (every 1 s) and at an aggressive one (every
//    100 ms). Reports the Get p99 of both kinds of window.
// 3. Siege (admin_siege.h): /healthz and /metrics p50/p99 on a quiet port,
//    then while 500 idle and 50 slowloris connections are held open (and
//    reopened as the port closes them); the besieged p99 should stay under
//    50 ms.
//
// Thread safety: runs on the calling thread (it starts and joins its own
// reader and scraper threads).

#include <cstdint>

#include "bench/result_sink.h"

namespace mooncake_tier::bench {

// Objects loaded before --scale is applied.
inline constexpr uint64_t kDefaultAdminObjects = 1'000'000;

// Returns the process exit code: 0 on success, 1 if an engine call or a
// request failed unexpectedly. Missed targets are reported, never fatal.
int RunAdminScenario(const CommonOptions& options, ResultSink& sink);

}  // namespace mooncake_tier::bench
