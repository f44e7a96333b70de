#pragma once

// Request traces of prefix-cache workloads and an offline cache simulator
// over them, for the `trace` scenario (bench/trace_scenario.h). No store,
// no network, no threads.
//
// Trace format: the public Mooncake FAST'25 traces, JSON Lines, one request
// per line:
//   {"timestamp": 1250, "input_length": 1800, "output_length": 20,
//    "hash_ids": [0, 1, 2, 3]}
// `timestamp` is the arrival time in milliseconds, `hash_ids` the prompt's
// prefix blocks (512 tokens each) in order; equal ids are the same block.
// Other fields are ignored.
//
// The prefix rule, shared by the simulator and the scenario: the blocks of
// a request are looked up in order and only those before the first miss
// are hits (an engine can only reuse the KV cache of a stored prefix).
// Every block from the first miss on is then inserted, as the engine puts
// it, even the ones still cached (they are just touched). So every block
// reference leaves its block cached, as in demand paging: the cache's
// contents evolve as demand paging over the flattened sequence of all
// references, and a request's hits are the leading run of its references
// that find their block cached.
//
// Thread safety: pure functions over values.

#include <cstdint>
#include <istream>
#include <span>
#include <string>
#include <vector>

#include "mooncake_tier/status.h"

namespace mooncake_tier::bench {

struct TraceRequest {
  int64_t timestamp_ms = 0;
  std::vector<uint64_t> blocks;  // hash ids of the prefix blocks, in order
};

struct Trace {
  std::vector<TraceRequest> requests;  // in file order
};

// Parses a trace. Blank (or all-whitespace) lines are skipped. INVALID_ARGUMENT
// naming the line (1-based) and what is wrong when a line is not a JSON
// object, lacks `timestamp` or `hash_ids`, has a timestamp that is not a
// non-negative integer, or a hash id that is not a non-negative integer.
Result<Trace> ReadTrace(std::istream& in);

// ReadTrace on the file at `path`; IO_ERROR naming the path and the
// system's reason when it cannot be opened or read. Parse errors are
// prefixed with the path.
Result<Trace> ReadTraceFile(const std::string& path);

// What one simulated cache saw.
struct CacheSimResult {
  uint64_t references = 0;   // block references (all blocks of all requests)
  uint64_t prefix_hits = 0;  // references that are hits under the prefix rule
  // References that found their block cached, prefix rule or not: the hits
  // of plain demand paging. prefix_hits <= resident.
  uint64_t resident = 0;

  // prefix_hits / references; 0 for no references.
  double HitRatio() const;
};

enum class EvictionPolicy {
  // Least recently used: a reference (hit or insert) makes a block the
  // most recent; a full cache evicts the least recent block.
  kLru,
  // Belady's MIN: a full cache evicts the cached block whose next
  // reference lies farthest in the future (never referenced again counts
  // as infinitely far; ties among those go to the larger hash id). The
  // block being inserted is always cached (no bypass), as the engine
  // always puts it. MIN gives the fewest misses over the reference
  // sequence (the most `resident`); under the prefix rule it is the
  // classic offline bound, not a proven optimum of `prefix_hits`.
  kBelady,
};

// Simulates a cache of `capacity_blocks` blocks (0: caches nothing) over
// `requests` in order, starting empty. Linear in the references, times
// log(capacity) for kBelady.
CacheSimResult SimulateCache(std::span<const TraceRequest> requests,
                             EvictionPolicy policy, uint64_t capacity_blocks);

// A cache that never evicts: a block is a hit when it and every block
// before it in its request were referenced by an earlier request.
CacheSimResult SimulateInfiniteCache(std::span<const TraceRequest> requests);

}  // namespace mooncake_tier::bench
