#pragma once

// Phase 2 of the "admin" scenario (admin_scenario.h): interference.
// Data-path Gets of DRAM objects in alternating quiet and scraped windows,
// the scraped ones with a thread fetching /metrics, /api/v1/status and a
// group page at each cadence of kCadences; the Get p99 of both kinds of
// window.
//
// Thread safety: runs on the calling thread (it starts and joins its own
// reader and scraper threads).

#include <chrono>

#include "bench/admin_stack.h"
#include "bench/result_sink.h"

namespace mooncake_tier::bench::admin_bench {

using std::chrono::milliseconds;

struct Cadence {
  const char* variant;
  milliseconds period;
};
// What the scraper fetches each period: /metrics (a Prometheus scrape),
// /api/v1/status and one 1000-group page (an operator's dashboard or CLI).
// Every 1 s is a scrape interval tighter than Prometheus' usual 15 s; every
// 100 ms is a `top`-like tool left running, the worst plausible case.
inline constexpr Cadence kCadences[] = {
    {"prometheus_1s", milliseconds(1000)},
    {"aggressive_100ms", milliseconds(100)},
};

// The scraped over quiet Get p99 the first cadence should stay under.
inline constexpr double kInterferenceTarget = 1.10;

// Runs the windows over `stack`'s client reading `data`, each window
// `window_s` seconds, and emits one line per cadence; sets the ratio of the
// first (realistic) cadence. An error if a Get or a scrape fails.
Status MeasureInterference(Stack& stack, const DataSet& data, double window_s,
                           ResultSink& sink, double* realistic_ratio);

}  // namespace mooncake_tier::bench::admin_bench
