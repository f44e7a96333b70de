#pragma once

// Phase 1 of the "admin" scenario (admin_scenario.h): route latency. For
// each route (status, a 1000-group page, an object, a group, /metrics) the
// p50 and p99 over HTTP, and the same engine call without HTTP and JSON
// timed beside it.
//
// Thread safety: runs on the calling thread.

#include <string>

#include "bench/admin_stack.h"
#include "bench/result_sink.h"

namespace mooncake_tier::bench::admin_bench {

// The p99 every route should stay under, in milliseconds.
constexpr double kRouteTargetMs = 50;

// Times every route against `stack` loaded with `p` (requests scaled by
// `scale`) and emits one line per route; sets the slowest route's p99 and
// name. An error if a request or an engine call fails.
Status MeasureRoutes(Stack& stack, const Population& p, double scale,
                     ResultSink& sink, double* worst_p99,
                     std::string* worst_route);

}  // namespace mooncake_tier::bench::admin_bench
