#pragma once

// The cost of TLS on the client-side scenarios (metadata, datapath): the
// scenario runs on a spawned plaintext store, then on a spawned store that
// serves gRPC over mutual TLS (certificates from scripts/make-test-ca.sh,
// client certificates required), in one process and one run. Every row
// carries "tls": false or true; then one "check" row per comparable row
// pair gives the TLS figure over the plaintext one:
//
//   {"scenario":S,"check":"tls_vs_plain","op":...,"value":ratio,...}
//
// metadata compares ops/s of each gRPC row (target: at least 0.8 for
// unbatched exists); datapath compares get p50 of each row (the one-sided
// data path does not go through TLS: about 1.0).
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
