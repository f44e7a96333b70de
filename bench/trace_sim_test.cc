#include "bench/trace_sim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace mooncake_tier::bench {
namespace trace_sim_test {
namespace {

using ::testing::HasSubstr;

// A copy of the public synthetic trace (Mooncake FAST'25 release).
constexpr char kSyntheticTracePath[] =
    "/work/shared/traces/synthetic_trace.jsonl";

Result<Trace> Parse(const std::string& text) {
  std::istringstream in(text);
  return ReadTrace(in);
}

// One request per inner list, timestamps 0, 1, 2, ...
std::vector<TraceRequest> Requests(
    const std::vector<std::vector<uint64_t>>& blocks) {
  std::vector<TraceRequest> requests;
  for (const std::vector<uint64_t>& b : blocks) {
    requests.push_back({static_cast<int64_t>(requests.size()), b});
  }
  return requests;
}

TEST(TraceSimTest, ParsesRequestsAndSkipsBlankLines) {
  Result<Trace> trace = Parse(
      "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 7, "
      "\"hash_ids\": [0, 1]}\n"
      "\n"
      "   \t\r\n"
      "{\"hash_ids\": [18446744073709551615, 0, 5], \"timestamp\": 2500}\n"
      "{\"timestamp\": 2600, \"hash_ids\": []}");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->requests.size(), 3u);
  EXPECT_EQ(trace->requests[0].timestamp_ms, 0);
  EXPECT_EQ(trace->requests[0].blocks, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(trace->requests[1].timestamp_ms, 2500);
  EXPECT_EQ(trace->requests[1].blocks,
            (std::vector<uint64_t>{18446744073709551615ull, 0, 5}));
  EXPECT_EQ(trace->requests[2].timestamp_ms, 2600);
  EXPECT_TRUE(trace->requests[2].blocks.empty());
}

TEST(TraceSimTest, AnEmptyInputIsAnEmptyTrace) {
  Result<Trace> trace = Parse("\n\n");
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(trace->requests.empty());
}

TEST(TraceSimTest, MalformedLinesNameTheLineAndTheProblem) {
  const std::string good = "{\"timestamp\": 1, \"hash_ids\": [1]}\n";
  struct Case {
    std::string bad_line;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"{\"timestamp\": 1, \"hash_ids\": [1]", "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {"{\"hash_ids\": [1]}", "no \"timestamp\""},
      {"{\"timestamp\": 1}", "no \"hash_ids\""},
      {"{\"timestamp\": \"1\", \"hash_ids\": [1]}", "\"timestamp\" is \"1\""},
      {"{\"timestamp\": -5, \"hash_ids\": [1]}", "\"timestamp\" is -5"},
      {"{\"timestamp\": 1.5, \"hash_ids\": [1]}", "\"timestamp\" is 1.5"},
      {"{\"timestamp\": 1, \"hash_ids\": 7}", "\"hash_ids\" is not an array"},
      {"{\"timestamp\": 1, \"hash_ids\": [1, -2]}",
       "\"hash_ids\"[1] is -2, not a non-negative integer"},
      {"{\"timestamp\": 1, \"hash_ids\": [0, 1, 2.5]}", "\"hash_ids\"[2] is"},
      {"{\"timestamp\": 1, \"hash_ids\": [\"a\"]}", "\"hash_ids\"[0] is"},
  };
  for (const Case& c : cases) {
    // Line 4: two good lines and a blank one come first.
    Result<Trace> trace = Parse(good + "\n" + good + c.bad_line + "\n" + good);
    ASSERT_FALSE(trace.ok()) << c.bad_line;
    EXPECT_EQ(trace.status().reason(), ErrorReason::kInvalidArgument);
    EXPECT_THAT(trace.status().message(), HasSubstr("line 4: ")) << c.bad_line;
    EXPECT_THAT(trace.status().message(), HasSubstr(c.says)) << c.bad_line;
  }
}

TEST(TraceSimTest, AMissingFileIsAnIoErrorNamingThePath) {
  Result<Trace> trace = ReadTraceFile("/nonexistent/dir/trace.jsonl");
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().reason(), ErrorReason::kIoError);
  EXPECT_THAT(trace.status().message(),
              HasSubstr("'/nonexistent/dir/trace.jsonl'"));
}

// 1 2 3 1 2 3 1 2 3, one block per request, two blocks of cache.
// LRU always evicts the block needed next: 0 hits.
// MIN: 1 m, 2 m, 3 m (evicts 2: next at 4 vs 1 at 3), 1 hit, 2 m (evicts
// 1: next at 6 vs 3 at 5), 3 hit, 1 m (evicts 3: next at 8 vs 2 at 7),
// 2 hit, 3 m: 3 hits.
TEST(TraceSimTest, LruAndBeladyOnACyclicSequence) {
  const std::vector<TraceRequest> requests =
      Requests({{1}, {2}, {3}, {1}, {2}, {3}, {1}, {2}, {3}});
  const CacheSimResult lru = SimulateCache(requests, EvictionPolicy::kLru, 2);
  EXPECT_EQ(lru.references, 9u);
  EXPECT_EQ(lru.prefix_hits, 0u);
  EXPECT_EQ(lru.resident, 0u);
  const CacheSimResult opt =
      SimulateCache(requests, EvictionPolicy::kBelady, 2);
  EXPECT_EQ(opt.references, 9u);
  EXPECT_EQ(opt.prefix_hits, 3u);
  EXPECT_EQ(opt.resident, 3u);
  EXPECT_DOUBLE_EQ(opt.HitRatio(), 3.0 / 9);
}

// 1 2 1 3 1 2 with two blocks: LRU keeps the re-used 1 and hits twice
// (positions 2 and 4); MIN does no better here.
TEST(TraceSimTest, LruKeepsTheRecentlyUsedBlock) {
  const std::vector<TraceRequest> requests =
      Requests({{1}, {2}, {1}, {3}, {1}, {2}});
  EXPECT_EQ(SimulateCache(requests, EvictionPolicy::kLru, 2).prefix_hits, 2u);
  EXPECT_EQ(SimulateCache(requests, EvictionPolicy::kBelady, 2).prefix_hits,
            2u);
}

// [1 2 3], [1 4 3], [1 4 3]: in the second request 3 is cached but comes
// after the miss on 4, so it is no hit; the third request hits all three.
TEST(TraceSimTest, BlocksAfterTheFirstMissAreMissesEvenIfCached) {
  const std::vector<TraceRequest> requests =
      Requests({{1, 2, 3}, {1, 4, 3}, {1, 4, 3}});
  for (const CacheSimResult& result :
       {SimulateCache(requests, EvictionPolicy::kLru, 10),
        SimulateCache(requests, EvictionPolicy::kBelady, 10),
        SimulateInfiniteCache(requests)}) {
    EXPECT_EQ(result.references, 9u);
    EXPECT_EQ(result.prefix_hits, 4u);  // 1, then 1 4 3
    EXPECT_EQ(result.resident, 5u);     // and the 3 after the miss
  }
}

// LRU, three blocks: [1 2] -> (2 1); [3] -> (3 2 1); [1] hits -> (1 3 2);
// [4] evicts 2, not the touched 1 -> (4 1 3); [2] misses, evicts 3 ->
// (2 4 1); [1] hits.
TEST(TraceSimTest, PrefixHitsAreTouched) {
  const std::vector<TraceRequest> requests =
      Requests({{1, 2}, {3}, {1}, {4}, {2}, {1}});
  const CacheSimResult lru = SimulateCache(requests, EvictionPolicy::kLru, 3);
  EXPECT_EQ(lru.references, 7u);
  EXPECT_EQ(lru.prefix_hits, 2u);
}

// LRU, three blocks: [1 2] -> (2 1); [5 1]: 5 misses, then 1 (cached, after
// the miss) is put again and touched -> (1 5 2); [6] evicts 2 -> (6 1 5);
// [1] hits. Were 1 not touched in the second request, [6] would evict it.
TEST(TraceSimTest, BlocksAfterTheFirstMissAreTouched) {
  const std::vector<TraceRequest> requests =
      Requests({{1, 2}, {5, 1}, {6}, {1}});
  const CacheSimResult lru = SimulateCache(requests, EvictionPolicy::kLru, 3);
  EXPECT_EQ(lru.references, 6u);
  EXPECT_EQ(lru.prefix_hits, 1u);
  EXPECT_EQ(lru.resident, 2u);
}

TEST(TraceSimTest, AZeroCapacityCacheNeverHits) {
  const std::vector<TraceRequest> requests = Requests({{1, 2}, {1, 2}, {1}});
  for (EvictionPolicy policy :
       {EvictionPolicy::kLru, EvictionPolicy::kBelady}) {
    const CacheSimResult result = SimulateCache(requests, policy, 0);
    EXPECT_EQ(result.references, 5u);
    EXPECT_EQ(result.prefix_hits, 0u);
    EXPECT_EQ(result.resident, 0u);
    EXPECT_EQ(result.HitRatio(), 0);
  }
}

TEST(TraceSimTest, NoReferencesGiveARatioOfZero) {
  EXPECT_EQ(SimulateInfiniteCache({}).HitRatio(), 0);
  EXPECT_EQ(SimulateCache(Requests({{}}), EvictionPolicy::kLru, 4).HitRatio(),
            0);
}

// [1 2 3]: 0 hits; [1 2 4]: 1 2; [2 1]: both; [1 2 4 5]: 1 2 4. 7 of 12.
TEST(TraceSimTest, InfiniteCacheCountsStoredPrefixes) {
  const std::vector<TraceRequest> requests =
      Requests({{1, 2, 3}, {1, 2, 4}, {2, 1}, {1, 2, 4, 5}});
  const CacheSimResult result = SimulateInfiniteCache(requests);
  EXPECT_EQ(result.references, 12u);
  EXPECT_EQ(result.prefix_hits, 7u);
  EXPECT_DOUBLE_EQ(result.HitRatio(), 7.0 / 12);
}

// Conversations that grow: each request takes a random prefix of one of a
// few block chains and appends new blocks to it.
std::vector<TraceRequest> RandomConversations(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint64_t>> chains(40);
  uint64_t next_block = 0;
  std::vector<TraceRequest> requests;
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint64_t>& chain = chains[rng() % chains.size()];
    if (chain.size() > 60) chain.clear();  // a new conversation
    std::vector<uint64_t> blocks(
        chain.begin(),
        chain.begin() + (chain.empty() ? 0 : rng() % (chain.size() + 1)));
    for (uint64_t n = 1 + rng() % 4; n > 0; --n) blocks.push_back(next_block++);
    chain = blocks;
    requests.push_back({i, std::move(blocks)});
  }
  return requests;
}

// MIN never misses more references than LRU (a theorem) and, on these
// traces, never has fewer prefix hits; neither beats the infinite cache,
// whose contents include any finite cache's.
TEST(TraceSimTest, BeladyBeatsLruOnRandomTraces) {
  for (uint64_t seed : {1, 2, 3}) {
    const std::vector<TraceRequest> requests = RandomConversations(seed);
    const CacheSimResult infinite = SimulateInfiniteCache(requests);
    for (uint64_t capacity : {8, 64, 256}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", capacity " +
                   std::to_string(capacity));
      const CacheSimResult lru =
          SimulateCache(requests, EvictionPolicy::kLru, capacity);
      const CacheSimResult opt =
          SimulateCache(requests, EvictionPolicy::kBelady, capacity);
      EXPECT_EQ(lru.references, infinite.references);
      EXPECT_EQ(opt.references, infinite.references);
      EXPECT_GE(opt.resident, lru.resident);
      EXPECT_GE(opt.prefix_hits, lru.prefix_hits);
      EXPECT_GT(opt.prefix_hits, 0u);
      EXPECT_LE(opt.prefix_hits, infinite.prefix_hits);
      EXPECT_LE(opt.resident, infinite.resident);
    }
  }
}

// S3-FIFO, ten blocks: a small queue of one, main of nine. [1] [1]: 1 is
// cached with a count of 1. [2]..[10] fill the small queue behind it. [11]
// evicts from the small queue (ten blocks, over its share): its head, 1,
// was re-read, so it moves to main with its count reset; the next head, 2,
// seen once, leaves for the ghost. From then on the small queue always
// holds nine, over its share, so every miss of the scan up to [30] evicts
// the small queue's head and 1 stays in main: the last [1] hits. LRU
// evicts 1 at [11], the tenth distinct block after it; CLOCK gives 1 a
// single pass (its bit is cleared at [11]) and evicts it at [20].
TEST(TraceSimTest, S3FifoKeepsABlockSeenTwiceThroughAScan) {
  std::vector<std::vector<uint64_t>> blocks = {{1}, {1}};
  for (uint64_t b = 2; b <= 30; ++b) blocks.push_back({b});
  blocks.push_back({1});
  const std::vector<TraceRequest> requests = Requests(blocks);
  const CacheSimResult s3fifo =
      SimulateCache(requests, EvictionPolicy::kS3Fifo, 10);
  EXPECT_EQ(s3fifo.references, 32u);
  EXPECT_EQ(s3fifo.prefix_hits, 2u);
  EXPECT_EQ(s3fifo.resident, 2u);
  EXPECT_EQ(SimulateCache(requests, EvictionPolicy::kLru, 10).resident, 1u);
  EXPECT_EQ(SimulateCache(requests, EvictionPolicy::kClock, 10).resident, 1u);
}

// S3-FIFO, ten blocks: a small queue of one, main and ghost of nine.
// [1]..[10] fill the small queue; [11]..[19] each evict its head, seen
// once, into the ghost, which then holds 1..9, 1 the oldest. [1] misses,
// but its key is in the ghost, so it goes to main; the eviction it causes
// (10, into the ghost) must not push 1 out of the ghost first. The scan
// [20]..[40] only evicts from the small queue, which always holds nine:
// the last [1] hits. Had 1 gone back to the small queue it would have
// left again at [29]; LRU evicts it at [29] too.
TEST(TraceSimTest, S3FifoSendsAGhostHitToTheMainQueue) {
  std::vector<std::vector<uint64_t>> blocks;
  for (uint64_t b = 1; b <= 19; ++b) blocks.push_back({b});
  blocks.push_back({1});
  for (uint64_t b = 20; b <= 40; ++b) blocks.push_back({b});
  blocks.push_back({1});
  const std::vector<TraceRequest> requests = Requests(blocks);
  const CacheSimResult s3fifo =
      SimulateCache(requests, EvictionPolicy::kS3Fifo, 10);
  EXPECT_EQ(s3fifo.references, 42u);
  EXPECT_EQ(s3fifo.prefix_hits, 1u);
  EXPECT_EQ(s3fifo.resident, 1u);
  EXPECT_EQ(SimulateCache(requests, EvictionPolicy::kLru, 10).resident, 0u);
}

// S3-FIFO, two blocks: small queue, main and ghost of one each.
//   1 1 2   small (1 2), 1's count 1
//   3       1 moves to main (count 0), 2 leaves; main (1), small (3)
//   1 x5    hits: 1's count saturates at 3
//   [4 4]   3 leaves; small (4), 4's count 1
//   [5 5]   4 moves to main; the small queue is empty, so main evicts:
//           1 goes back with count 2, then 4 (count 0) leaves
//   [6 6]   the same, 1's count 1
//   [7 7]   the same, 1's count 0
//   [8 8]   7 moves to main; 1 (count 0) is evicted
//   1       misses
// 1 survives three passes of main, not five. The hits: the second 1, the
// five, and the second block of each pair (not prefix hits).
TEST(TraceSimTest, S3FifoCountsSaturateAtThree) {
  std::vector<std::vector<uint64_t>> blocks = {{1}, {1}, {2}, {3}};
  for (int i = 0; i < 5; ++i) blocks.push_back({1});
  for (uint64_t b = 4; b <= 8; ++b) blocks.push_back({b, b});
  blocks.push_back({1});
  const std::vector<TraceRequest> requests = Requests(blocks);
  const CacheSimResult s3fifo =
      SimulateCache(requests, EvictionPolicy::kS3Fifo, 2);
  EXPECT_EQ(s3fifo.references, 20u);
  EXPECT_EQ(s3fifo.prefix_hits, 6u);
  EXPECT_EQ(s3fifo.resident, 11u);
}

// S3-FIFO, three blocks: small queue of one, main and ghost of two.
//   1 2 3   small (1 2 3)
//   4       small over its share: 1 (count 0) -> ghost (1); small (2 3 4)
//   1       ghost hit: evict 2 -> ghost (2); main (1), small (3 4)
//   2       ghost hit: evict 3 -> ghost (3); main (1 2), small (4)
//   1       hit: 1's count 1
//   5       evict 4 -> ghost (3 4); small (5)
//   3       ghost hit: evict 5 -> ghost (4 5); main (1 2 3), small ()
//   4       ghost hit, small empty: main's head 1 has count 1, goes back
//           to the tail with count 0; then 2 (count 0) is evicted.
//           main (3 1 4)
//   1       hit
// Two hits. LRU hits only the third 1: 5, 3 and 4 push it out before the
// fourth.
TEST(TraceSimTest, S3FifoMainQueueSparesACountedBlock) {
  const std::vector<TraceRequest> requests =
      Requests({{1}, {2}, {3}, {4}, {1}, {2}, {1}, {5}, {3}, {4}, {1}});
  const CacheSimResult s3fifo =
      SimulateCache(requests, EvictionPolicy::kS3Fifo, 3);
  EXPECT_EQ(s3fifo.references, 11u);
  EXPECT_EQ(s3fifo.prefix_hits, 2u);
  EXPECT_EQ(s3fifo.resident, 2u);
  EXPECT_EQ(SimulateCache(requests, EvictionPolicy::kLru, 3).resident, 1u);
}

// CLOCK, three blocks, queue oldest first:
//   1 2 3   (1 2 3)
//   3 1     hits: set the bits of 3 and 1
//   4       1's bit is cleared, 1 goes to the tail; 2 is evicted: (3 1 4)
//   5       3's bit is cleared, 3 goes to the tail; 1, its bit spent, is
//           evicted although it was read after 3: (4 3 5)
//   6       4 is evicted: (3 5 6)
//   3       hit, sets 3's bit
//   1       miss: 3 gets another pass, 5 is evicted
// Three hits. LRU evicts 3 at [5] and 1 at [6], so misses both at the
// end: two hits. A FIFO without bits evicts 1 at [4] and 3 at [6]: two.
TEST(TraceSimTest, ClockGivesAReferencedBlockOnePassOfTheHand) {
  const std::vector<TraceRequest> requests =
      Requests({{1}, {2}, {3}, {3}, {1}, {4}, {5}, {6}, {3}, {1}});
  const CacheSimResult clock =
      SimulateCache(requests, EvictionPolicy::kClock, 3);
  EXPECT_EQ(clock.references, 10u);
  EXPECT_EQ(clock.prefix_hits, 3u);
  EXPECT_EQ(clock.resident, 3u);
  EXPECT_EQ(SimulateCache(requests, EvictionPolicy::kLru, 3).resident, 2u);
}

// The prefix rule and the zero capacity apply to the FIFO policies as to
// LRU; see BlocksAfterTheFirstMissAreMissesEvenIfCached and
// AZeroCapacityCacheNeverHits.
TEST(TraceSimTest, ClockAndS3FifoFollowThePrefixRule) {
  const std::vector<TraceRequest> requests =
      Requests({{1, 2, 3}, {1, 4, 3}, {1, 4, 3}});
  for (EvictionPolicy policy :
       {EvictionPolicy::kClock, EvictionPolicy::kS3Fifo}) {
    const CacheSimResult big = SimulateCache(requests, policy, 10);
    EXPECT_EQ(big.references, 9u);
    EXPECT_EQ(big.prefix_hits, 4u);
    EXPECT_EQ(big.resident, 5u);
    const CacheSimResult none = SimulateCache(requests, policy, 0);
    EXPECT_EQ(none.references, 9u);
    EXPECT_EQ(none.prefix_hits, 0u);
    EXPECT_EQ(none.resident, 0u);
  }
}

// All the policies are demand paging (a block enters only on its miss,
// one leaves only for it), so MIN misses no more references than either
// FIFO policy; and none beats the infinite cache. Capacities 8, 64 and 256
// give small queues of 1, 6 and 25 blocks.
TEST(TraceSimTest, BeladyBeatsClockAndS3FifoOnRandomTraces) {
  for (uint64_t seed : {1, 2, 3}) {
    const std::vector<TraceRequest> requests = RandomConversations(seed);
    const CacheSimResult infinite = SimulateInfiniteCache(requests);
    for (uint64_t capacity : {1, 8, 64, 256}) {
      const CacheSimResult opt =
          SimulateCache(requests, EvictionPolicy::kBelady, capacity);
      for (EvictionPolicy policy :
           {EvictionPolicy::kClock, EvictionPolicy::kS3Fifo}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + ", capacity " +
                     std::to_string(capacity) + ", policy " +
                     std::to_string(static_cast<int>(policy)));
        const CacheSimResult result = SimulateCache(requests, policy, capacity);
        EXPECT_EQ(result.references, infinite.references);
        EXPECT_GE(opt.resident, result.resident);
        EXPECT_LE(result.prefix_hits, result.resident);
        EXPECT_LE(result.prefix_hits, infinite.prefix_hits);
        EXPECT_LE(result.resident, infinite.resident);
        if (capacity > 1) {
          EXPECT_GT(result.prefix_hits, 0u);
        }
      }
    }
  }
}

// The trace's README: 3,993 requests, 121,877 block references, infinite
// cache hit ratio 0.640 (counted independently of this code).
TEST(TraceSimTest, SyntheticTraceInfiniteHitRatio) {
  const std::string path = kSyntheticTracePath;
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " is not here";
  }
  Result<Trace> trace = ReadTraceFile(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->requests.size(), 3993u);
  const CacheSimResult infinite = SimulateInfiniteCache(trace->requests);
  EXPECT_EQ(infinite.references, 121877u);
  EXPECT_NEAR(infinite.HitRatio(), 0.640, 0.0005);
}

// At 8192 blocks (about a fifth of the trace's 43,924 distinct blocks)
// LRU's ratio is 0.378; CLOCK's (about 0.388) and S3-FIFO's (about 0.384)
// are near it. The band catches a policy that has gone badly wrong, not
// one that is merely tuned differently.
TEST(TraceSimTest, SyntheticTraceClockAndS3FifoHitRatios) {
  const std::string path = kSyntheticTracePath;
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " is not here";
  }
  Result<Trace> trace = ReadTraceFile(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  for (EvictionPolicy policy :
       {EvictionPolicy::kClock, EvictionPolicy::kS3Fifo}) {
    const double ratio =
        SimulateCache(trace->requests, policy, 8192).HitRatio();
    EXPECT_GE(ratio, 0.36) << static_cast<int>(policy);
    EXPECT_LE(ratio, 0.42) << static_cast<int>(policy);
  }
}

}  // namespace
}  // namespace trace_sim_test
}  // namespace mooncake_tier::bench
