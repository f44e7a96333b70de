#pragma once

// The "trace" scenario: replays a request trace (bench/trace_sim.h, the
// Mooncake FAST'25 format) against a running or spawned store as an
// inference engine would, and sets the hit ratio it gets beside offline
// simulations of LRU and Belady's MIN over the same requests.
//
// Each trace block is a group of `members` objects of `member_bytes` each,
// group id "<prefix>/b<hash id>" and member keys "<group id>/<index>",
// where the prefix ("trace-<pid>-<random hex>") is unique to the run. A
// member's bytes are a function of (hash id, index), so every read is
// checked. For each request, in trace order:
//   1. probe: one prefix probe (Client::ProbePrefix) over the member keys
//      of the request's blocks, in order, as an engine looks a prompt up;
//      the stored prefix is the blocks whose members all count (a member
//      counts once its group is complete). Of those, as many as the probe's
//      DRAM bytes make up are memory hits, the rest disk hits.
//   2. read: GetIntoBatch of the prefix's members, bytes checked (a wrong
//      byte counts in wrong_bytes). A member that cannot be read (evicted
//      since the probe) ends the prefix at its block.
//   3. put: PutBatch of every block from the first miss on, as groups.
//      OBJECT_EXISTS (another request put it meanwhile) is fine; other
//      failures count in put_failed, per member.
// Requests are dealt round-robin to `threads` client threads; with more
// than one, a request may miss blocks that an earlier request on another
// thread has not put yet, so the hit ratio can fall below the simulated
// ones even with room to spare. With `speed` > 0 request i starts no
// earlier than (timestamp_i - timestamp_0) / speed after the replay began.
//
// With remote.spawn, one run per SSD eviction policy and promotion
// setting, each on a fresh `mooncake-tierd standalone` with --dram
// dram_bytes --ssd-capacity ssd_bytes --ssd-eviction-policy E, the
// store_flags and otherwise the daemon's defaults: promotion "off"
// (--no-promotion-on-hit), "threshold" and "tinylfu" (--promotion-policy).
// With remote.master one run, policy "external", whose groups are removed
// afterwards; dram_bytes and ssd_bytes then only size the simulated caches,
// so pass the store's.
//
// The simulations (trace_sim.h, prefix rule) run once, in blocks of
// members x member_bytes: LRU, S3-FIFO, CLOCK and MIN with the SSD's
// capacity (an inclusive hierarchy: DRAM holds a subset of SSD) and with
// DRAM plus SSD (exclusive, *_exclusive), LRU with the DRAM's alone, and an
// infinite cache. One line per run:
//   {"scenario":"trace","trace":NAME,"policy":P,"eviction":E,"requests":N,
//    "blocks":N,"memory_hits":N,"disk_hits":N,"misses":N,"put_failed":N,
//    "hit_ratio":X,"memory_hit_ratio":X,"dram_lru_hit_ratio":X,
//    "lru_hit_ratio":X,"lru_hit_ratio_exclusive":X,"s3fifo_hit_ratio":X,
//    "s3fifo_hit_ratio_exclusive":X,"clock_hit_ratio":X,
//    "clock_hit_ratio_exclusive":X,"opt_hit_ratio":X,
//    "opt_hit_ratio_exclusive":X,"infinite_hit_ratio":X,"wrong_bytes":N,
//    "blocks_per_s":X,"seconds":X,"dram_bytes":N,"ssd_bytes":N,
//    "block_bytes":N,"members":N,"load_avg":X,"ssd_object_capacity":N,
//    "lru_hit_ratio_at_store_capacity":X,"ssd_live_fraction":X,
//    "dram_live_fraction":X,"ssd_write_amplification":X}
// (NAME: the trace file's base name; E: the SSD eviction policy, absent for
// an external store; blocks: block references replayed; load_avg: the
// 1-minute load average at the end of the run. The last six, with --spawn
// only, read from the store's admin API after the run: the object bytes its
// SSD tier can hold as its master counts them (the file system's real room
// less record headers, padding and compaction room) and LRU simulated at
// that capacity, which tells how much of a gap to lru_hit_ratio is room
// rather than policy; the object bytes its tiers hold over their
// configured bytes, averaged over samples taken every second in the
// replay's second half; and the bytes its SSD stores wrote (records, removals,
// compaction's copies) per byte the replay put.)
// Progress (requests, blocks/s, hit ratio, failures by reason) goes to stderr
// every 5 s.
//
// Thread safety: runs on the calling thread (and threads of its own).

#include <cstdint>
#include <string>
#include <vector>

#include "bench/remote_scenarios.h"
#include "bench/result_sink.h"

namespace mooncake_tier::bench {

struct TraceOptions {
  // The trace file (JSON Lines). REQUIRES: not empty.
  std::string trace_path;
  // Objects per block (group size). REQUIRES: > 0. Default: 4.
  uint32_t members = 4;
  // Bytes per member. REQUIRES: > 0. Default: 16 KiB.
  uint64_t member_bytes = 16 << 10;
  // Replay at this multiple of the trace's pace; 0: as fast as possible.
  // REQUIRES: >= 0. Default: 0.
  double speed = 0;
  // Replay only the first `requests` requests; 0: all. Default: 0.
  uint64_t requests = 0;
  // Client threads. REQUIRES: > 0. Default: 1.
  int threads = 1;
  // DRAM and SSD of a spawned store, and of the simulated caches.
  // REQUIRES: dram_bytes > 0. Defaults: 64 MiB and 512 MiB.
  uint64_t dram_bytes = 64ull << 20;
  uint64_t ssd_bytes = 512ull << 20;
  // With a spawned store: one run per SSD eviction policy here (each with
  // every promotion setting). Default: clock, then lru (the baseline).
  std::vector<std::string> ssd_eviction_policies = {"clock", "lru"};
  // With a spawned store: the promotion settings to run, of "off",
  // "threshold" and "tinylfu". Default: all three.
  std::vector<std::string> promotion_policies = {"off", "threshold", "tinylfu"};
  // More flags for every spawned store, separated by spaces (say
  // "--eviction-high-watermark 0.99"). Default: none.
  std::string store_flags;
};

// Returns the process exit code: 0 when every run completed (put failures
// included: the figures report them), 1 when the trace cannot be read or
// the store cannot be spawned or reached, 2 for options that break a
// REQUIRES above.
int RunTraceScenario(const CommonOptions& common, const TraceOptions& trace,
                     const RemoteOptions& remote, ResultSink& sink);

}  // namespace mooncake_tier::bench
