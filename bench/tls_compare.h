#pragma once

// The cost of TLS on the client-side scenarios (metadata, datapath): the
// scenario runs on a spawned plaintext store, then on a spawned store that
// serves gRPC over mutual TLS (certificates from scripts/make-test-ca.sh,
// client certificates required), in one process and one run; that pair
// is repeated `remote.tls_rounds` times, so that drift in the machine's
// load (other work on a shared host moves single figures by 20%) falls on
// both sides of each pair. Every row carries "tls": false or true and
// "round"; then one "check" row per comparable row gives the median of the
// pairs' TLS/plaintext ratios, with the lowest and highest:
//
//   {"scenario":S,"check":"tls_vs_plain","op":...,"value":median,
//    "min":X,"max":X,"rounds":N,"plain":median,"tls":median}
//
// metadata compares ops/s of each gRPC row, then runs unbatched exists from
// one thread against both stores at once, in alternating 200 ms slices
// (ABBA), and prints that ratio as "check":"tls_vs_plain_interleaved" with
// the spread of the slices' ratios (target: at least 0.8). datapath
// compares get p50 of each row (the one-sided data path does not go
// through TLS: about 1.0).
//
// Thread safety: runs on the calling thread.

#include <functional>

#include "bench/remote_scenarios.h"
#include "bench/result_sink.h"

namespace mooncake_tier::bench {

using RemoteScenario =
    std::function<int(const CommonOptions&, const RemoteOptions&, ResultSink&)>;

// Runs `scenario` ("metadata" or "datapath", naming `run`) both ways as
// above. REQUIRES: remote.spawn. Returns the first non-zero exit code, or
// 0.
int RunWithAndWithoutTls(const char* scenario, const RemoteScenario& run,
                         const CommonOptions& common,
                         const RemoteOptions& remote, ResultSink& sink);

}  // namespace mooncake_tier::bench
