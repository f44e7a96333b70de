#pragma once

// Phase 3 of the "admin" scenario (admin_scenario.h): the admin port under
// siege. /healthz and /metrics timed on a keep-alive connection, first on a
// quiet port (the baseline), then while `idle` connections sit open without
// a byte and `slow` ones dribble a request header one byte a second (a
// slowloris), each reopened as soon as the server closes it, so the port
// stays full for the whole measurement. Emits one line per route and
// condition, with the besieged over quiet p99 ratio.
//
// Thread safety: runs on the calling thread (it starts and joins the thread
// that holds the siege).

#include <cstddef>
#include <cstdint>

#include "bench/result_sink.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier::bench::admin_bench {

// The p99 /healthz and /metrics should stay under while besieged, in ms.
constexpr double kSiegeTargetMs = 50;

struct SiegeOptions {
  size_t idle = 500;
  size_t slow = 50;
  size_t requests = 400;  // per route and condition
};

// Measures against the admin port on 127.0.0.1:`port`; sets the worst p99
// under siege. An error if a request fails or the siege cannot connect.
Status MeasureSiege(uint16_t port, const SiegeOptions& options,
                    ResultSink& sink, double* worst_p99);

}  // namespace mooncake_tier::bench::admin_bench
