#pragma once

// Turns UCX status codes into the project's Status. Transport failures (peer
// gone, connection reset, endpoint timeout, cancelled by a forced close) map
// to UNAVAILABLE; UCX's own timeout to TIMEOUT; bad parameters to
// INVALID_ARGUMENT; everything else to INTERNAL.

#include <ucs/type/status.h>

#include <chrono>
#include <string_view>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

// REQUIRES: status != UCS_OK. `what` says what failed ("reading from node").
// When UCX logged a warning or an error on this thread within the last
// second (it often says why: "no ... transport to ...", an interface it
// could not use), the message ends with it, and it is consumed.
Status UcxError(ucs_status_t status, std::string_view what);

// UNAVAILABLE: the segment a transfer names is no longer exported by its
// node (it exited or withdrew it).
Status SegmentGone();

// TIMEOUT: `what` ("writing to node") got no answer within `timeout`.
Status NodeTimedOut(std::chrono::milliseconds timeout, std::string_view what);

// Keeps `line`, UCX's last warning or error on this thread, for UcxError
// (the log handler of ucx_context.cc calls it).
void NoteUcxProblem(std::string_view line);

}  // namespace mooncake_tier
