#pragma once

// The "ssd" scenario: node SSD store throughput against the raw device. For
// record sizes of 64 KiB, 1 MiB and 4 MiB it writes and then reads
// 512 MiB x scale (at least 16 records) through SsdStore on UringSsdDevice
// with O_DIRECT, in batches of 8 records, and the same bytes as plain
// sequential O_DIRECT chunks of the same size and batch depth (no store, no
// records, no checksums). Writes are timed once (including the final sync);
// reads take 3 passes per side, store and raw in turn, and the best pass of
// each counts. One result per size:
//   {"scenario":"ssd","record_bytes":N,"write_gbps":X,"read_gbps":X,
//    "raw_write_gbps":X,"raw_read_gbps":X,"read_ratio":X}
// where read_ratio = read_gbps / raw_read_gbps. Files go to a fresh temp
// dir under common.scratch_dir and are removed afterwards.
//
// Thread safety: single-threaded.

#include "bench/result_sink.h"

namespace mooncake_tier::bench {

// Returns the process exit code: 0 on success, 1 if an I/O or a store call
// failed or a value read back differs from what was written.
int RunSsdScenario(const CommonOptions& common, ResultSink& sink);

}  // namespace mooncake_tier::bench
