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
  // S3-FIFO (Yang et al., SOSP'23). Three FIFO queues: a small probation
  // queue with 10% of the capacity (rounded down, at least one block), a
  // main queue with the rest, and a ghost queue of the keys last evicted
  // from the small queue, as many as main's capacity (keys only: the ghost
  // takes no cache capacity). Each cached block has a frequency counter,
  // 0 on insertion, bumped by every reference that finds the block cached,
  // saturating at 3. A miss whose key is in the ghost leaves the ghost and
  // goes to main's tail; any other miss goes to the small queue's tail. A
  // full cache takes eviction steps until one block has left: while the
  // small queue holds at least its share (or main is empty) a step takes
  // its head, which moves to main's tail with its counter reset to 0 if
  // the counter is positive, and otherwise leaves the cache for the ghost;
  // else the step takes main's head, which goes back to main's tail with
  // its counter decremented if the counter is positive, and otherwise
  // leaves the cache. The ghost is consulted before the eviction the miss
  // causes, so that eviction cannot push the missing key out of it.
  kS3Fifo,
  // CLOCK, as a FIFO with reinsertion and one reference bit per block (the
  // policy CacheLib Navy's region reinsertion approximates on flash). A
  // block is inserted at the tail with its bit clear; a hit sets the bit
  // and moves nothing. A full cache looks at the head: a set bit is
  // cleared and the block goes back to the tail, a clear bit evicts it;
  // repeated until one block has left.
  kClock,
};

// Simulates a cache of `capacity_blocks` blocks (0: caches nothing) over
// `requests` in order, starting empty. Linear in the references (amortized
// for kS3Fifo and kClock, whose reinsertions are paid for by earlier
// hits), times log(capacity) for kBelady.
CacheSimResult SimulateCache(std::span<const TraceRequest> requests,
                             EvictionPolicy policy, uint64_t capacity_blocks);

// A cache that never evicts: a block is a hit when it and every block
// before it in its request were referenced by an earlier request.
CacheSimResult SimulateInfiniteCache(std::span<const TraceRequest> requests);

}  // namespace mooncake_tier::bench
