#pragma once

// datapath's small-object rows: 4 KiB and 64 KiB objects put
// one per call and read hot or cold, through a client with the location
// cache on and one with it off, then one check line per target.
//
// Thread safety: runs on the calling thread.

#include "bench/remote_connection.h"
#include "bench/result_sink.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier::bench {

// Emits the rows and the checks on `sink`; an error stops at the first
// failed put or read (a value read back other than it was put included).
Status RunSmallObjectRows(Connection& c, const CommonOptions& common,
                          ResultSink& sink);

}  // namespace mooncake_tier::bench
