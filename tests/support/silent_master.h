#pragma once

// The check shared by the tests of a gRPC master that never answers: a
// call over GrpcMasterLink must give up at its deadline, so a node (its
// heartbeats, its shutdown) never hangs on such a master.
//
// Thread safety: a free function; it blocks the calling thread for at most
// the call's deadline.

#include <functional>

#include "mooncake_tier/status.h"
#include "rpc/grpc_master_link.h"

namespace mooncake_tier::testing {

// Makes `call` on a GrpcMasterLink (300 ms deadline) to a SilentListener,
// which accepts connections but never speaks, and expects it to fail with
// TIMEOUT or UNAVAILABLE in under 10 s (the deadline, with room for a slow
// machine). Failures are gtest failures of the calling test.
void ExpectSilentMasterCallGivesUp(
    const std::function<Status(rpc::GrpcMasterLink&)>& call);

}  // namespace mooncake_tier::testing
