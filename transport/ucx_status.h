#pragma once

// Turns UCX status codes into the project's Status. Transport failures (peer
// gone, connection reset, endpoint timeout, cancelled by a forced close) map
// to UNAVAILABLE; UCX's own timeout to TIMEOUT; bad parameters to
// INVALID_ARGUMENT; everything else to INTERNAL.

#include <ucs/type/status.h>

#include <string_view>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

// REQUIRES: status != UCS_OK. `what` says what failed ("reading from node").
Status UcxError(ucs_status_t status, std::string_view what);

}  // namespace mooncake_tier
