#pragma once

// sustained: a stream of puts ten times the size of the store's DRAM, at
// the daemon's default flags, against a raw O_DIRECT write of the same
// bytes to the same device in the same run. What a serving engine sees
// once DRAM is full and every put must wait for room made by offloading
// to SSD.
//
// Configurations, one result line each: 64 KiB and 1 MiB objects, each
// alone and in groups of 4 (PutOptions::group = {id, 4, index}, a group's
// members put in one PutBatch call). Ungrouped objects go 4 keys per call
// at 64 KiB and 1 key per call at 1 MiB. `threads` client threads each put
// their own keys ("sustained-<pid>-<random hex>/...", so no two benchmark
// processes collide) from a registered buffer; every object's bytes follow
// from its key, so reads are verified without keeping what was put.
//
// Store: with --spawn, a fresh `mooncake-tierd standalone` per
// configuration with `--dram D --ssd-capacity 16D` and nothing else
// (D = 256 MiB x --scale, at least 64 MiB; its SSD directory in a temp dir
// under --scratch-dir); with --master, that store, D being the DRAM of its
// nodes (found with probe objects), the stream's objects removed after each
// configuration. The stream is 10 x D; "DRAM full" is the moment the bytes
// stored exceed D (the stream assumes a store that starts empty).
//
// Reads: every 50th object of a thread's stream is a sample. During the
// stream a thread reads back the sample it put 500 objects earlier (a
// quarter of its stream earlier when that is shorter; one GetIntoBatch
// between its puts: about 2% of the bytes); after the stream
// every sample is read once more (mostly from the SSD tier). Objects
// whose put failed (grouped: any member of their group) are not read.
//
// Baseline: RawDirectWrite (bench/raw_device.h) in --scratch-dir of
// min(bytes stored, 2 GiB x --scale, at least 64 MiB) in object-sized
// chunks with the same thread count, after the spawned store is stopped.
// With --master the baseline only means something when --scratch-dir is on
// the store's SSD device.
//
//   {"scenario":"sustained","object_bytes":N,"grouped":B,"threads":N,
//    "dram_bytes":N,"stream_bytes":N,"put_gbps":X,"put_gbps_all":X,
//    "raw_ssd_write_gbps":X,"raw_direct":B,"ratio":X,"failed":N,
//    "read_failed":N,"put_p50_ms":X,"put_p99_ms":X,"put_max_ms":X,
//    "wrong_bytes":N,"seconds":X,"load_avg":X}
//
// stream_bytes: bytes stored (puts that succeeded); put_gbps: over the
// bytes stored after DRAM was full and the time after that moment;
// put_gbps_all: over the whole stream; ratio: put_gbps / raw write GB/s;
// failed: objects whose put returned an error (counts by reason go to
// stderr); put_*_ms: latency of the PutBatch calls (every call of a
// configuration carries the same number of objects, so these are per
// object as well); wrong_bytes: bytes read back that differ from what was
// put; seconds: wall time of the stream; load_avg: 1-minute load average at
// the end. Progress (bytes, GB/s, failures by reason) goes to stderr every
// 5 s.
//
// Returns the exit code: 0 when every configuration ran (failures are
// figures), 1 when the store could not be started or reached or the raw
// baseline failed (stderr says why), 2 for bad options.
//
// Thread safety: runs on the calling thread and threads of its own.

#include "bench/remote_scenarios.h"
#include "bench/result_sink.h"

namespace mooncake_tier::bench {

struct SustainedOptions {
  // Client threads putting (and reading back) concurrently.
  // REQUIRES: >= 1. Default: 4.
  int threads = 4;
};

int RunSustainedScenario(const CommonOptions& common,
                         const RemoteOptions& remote,
                         const SustainedOptions& options, ResultSink& sink);

}  // namespace mooncake_tier::bench
