#include "core/admission_sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/hashed_key.h"

namespace mooncake_tier {
namespace admission_sketch_test {
namespace {

// Fixed hashes keep the tests deterministic: HashKey is seeded per process.
uint64_t KeyHash(uint64_t i) { return i * 0x2545f4914f6cdd1dull + 7; }

TEST(AdmissionSketchTest, FreshSketchEstimatesZero) {
  AdmissionSketch sketch;
  for (uint64_t i = 0; i < 100; ++i) EXPECT_EQ(sketch.Estimate(KeyHash(i)), 0);
  EXPECT_EQ(sketch.width(), 4096u);
  EXPECT_EQ(sketch.depth(), 4u);
  EXPECT_EQ(sketch.sample_size(), 4096u * 4);
}

TEST(AdmissionSketchTest, IncrementReturnsTheNewEstimate) {
  AdmissionSketch sketch;
  for (uint32_t n = 1; n <= 10; ++n) {
    EXPECT_EQ(sketch.Increment(KeyHash(1)), n);
    EXPECT_EQ(sketch.Estimate(KeyHash(1)), n);
  }
  EXPECT_EQ(sketch.Estimate(KeyHash(2)), 0);
  EXPECT_EQ(sketch.stats().increments, 10u);
}

TEST(AdmissionSketchTest, NeverUnderCounts) {
  // 2000 keys read 1..13 times each, interleaved, in a sketch half the size
  // of the default so that counters are shared; no halving happens.
  AdmissionSketch sketch(1024, 4, /*sample_size=*/1 << 20);
  constexpr uint64_t kKeys = 2000;
  std::vector<uint32_t> truth(kKeys, 0);
  uint64_t total = 0;
  for (uint32_t pass = 0; pass < 13; ++pass) {
    for (uint64_t i = 0; i < kKeys; ++i) {
      if (pass >= i % 13 + 1) continue;
      const uint32_t returned = sketch.Increment(KeyHash(i));
      ++truth[i];
      ++total;
      ASSERT_GE(returned, truth[i]) << "key " << i;
    }
  }
  uint64_t over = 0;
  for (uint64_t i = 0; i < kKeys; ++i) {
    const uint32_t estimate = sketch.Estimate(KeyHash(i));
    ASSERT_GE(estimate, truth[i]) << "key " << i;
    over += estimate - truth[i];
  }
  // Each row holds total / width = 13.7 reads of other keys per counter on
  // average; conservative updates keep the excess of the smallest far lower.
  ASSERT_GT(total, 13u * 1024);
  EXPECT_LT(static_cast<double>(over) / kKeys, 2.0);
}

TEST(AdmissionSketchTest, NeverUnderCountsStringKeys) {
  AdmissionSketch sketch(256, 4, /*sample_size=*/1 << 20);
  std::vector<std::string> keys;
  for (int i = 0; i < 500; ++i) {
    keys.push_back("prefix/block-" + std::to_string(i));
  }
  for (int pass = 0; pass < 5; ++pass) {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (static_cast<size_t>(pass) <= i % 5) {
        sketch.Increment(HashKey(keys[i]));
      }
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_GE(sketch.Estimate(HashKey(keys[i])), i % 5 + 1) << keys[i];
  }
}

TEST(AdmissionSketchTest, SaturatesAtMax) {
  AdmissionSketch sketch;
  uint32_t last = 0;
  for (int i = 0; i < 300; ++i) last = sketch.Increment(KeyHash(5));
  EXPECT_EQ(last, AdmissionSketch::kMaxCount);
  EXPECT_EQ(sketch.Estimate(KeyHash(5)), 255u);
  // A saturated neighbour sharing no counter is unaffected.
  EXPECT_EQ(sketch.Estimate(KeyHash(6)), 0u);
  EXPECT_EQ(sketch.stats().increments, 300u);
}

TEST(AdmissionSketchTest, HalvesAfterExactlyWidthTimesDepthIncrements) {
  AdmissionSketch sketch(64, 2);  // period 128
  ASSERT_EQ(sketch.sample_size(), 128u);
  const uint64_t a = KeyHash(1), b = KeyHash(2);
  for (int i = 0; i < 101; ++i) sketch.Increment(a);
  for (int i = 0; i < 26; ++i) sketch.Increment(b);
  // Precondition of the exact checks: a and b share no counter.
  ASSERT_EQ(sketch.Estimate(a), 101u);
  ASSERT_EQ(sketch.Estimate(b), 26u);
  EXPECT_EQ(sketch.stats().halvings, 0u);

  // The 128th increment completes the period: it counts, then halves.
  EXPECT_EQ(sketch.Increment(b), 13u);  // 27 / 2
  EXPECT_EQ(sketch.stats().halvings, 1u);
  EXPECT_EQ(sketch.Estimate(a), 50u);  // 101 / 2
  EXPECT_EQ(sketch.Estimate(b), 13u);

  // The next period starts afresh: 127 more increments do not halve.
  for (int i = 0; i < 127; ++i) sketch.Increment(KeyHash(100 + i));
  EXPECT_EQ(sketch.stats().halvings, 1u);
  EXPECT_EQ(sketch.Estimate(a), 50u);
  sketch.Increment(KeyHash(1000));
  EXPECT_EQ(sketch.stats().halvings, 2u);
  EXPECT_EQ(sketch.Estimate(a), 25u);
}

TEST(AdmissionSketchTest, DefaultPeriodIsWidthTimesDepth) {
  AdmissionSketch sketch;
  const uint64_t hot = KeyHash(0);
  for (int i = 0; i < 100; ++i) sketch.Increment(hot);
  for (uint64_t i = 1; i < 4096 * 4 - 100; ++i) sketch.Increment(KeyHash(i));
  EXPECT_EQ(sketch.stats().increments, 4096u * 4 - 1);
  EXPECT_EQ(sketch.stats().halvings, 0u);
  const uint32_t before = sketch.Estimate(hot);
  EXPECT_GE(before, 100u);
  sketch.Increment(KeyHash(1u << 30));
  EXPECT_EQ(sketch.stats().halvings, 1u);
  EXPECT_EQ(sketch.Estimate(hot), before / 2);
}

TEST(AdmissionSketchTest, OldPopularityFades) {
  AdmissionSketch sketch(64, 2);  // period 128
  const uint64_t once_hot = KeyHash(1);
  for (int i = 0; i < 100; ++i) sketch.Increment(once_hot);
  // Eight periods of other traffic: 100 halves to 0.
  for (uint64_t i = 0; i < 8 * 128; ++i) sketch.Increment(KeyHash(2));
  EXPECT_EQ(sketch.stats().halvings, 8u);
  EXPECT_EQ(sketch.Estimate(once_hot), 0u);
}

// How many never-seen keys look already read, after `seen` one-off reads
// at the default shape: `warm` have estimate >= 1 (they would pass a
// threshold of 2 on their first read), `hot` estimate >= 2.
struct FalsePositives {
  uint64_t warm = 0;
  uint64_t hot = 0;
};
FalsePositives ProbeAfterDistinctReads(uint64_t seen, uint64_t probes) {
  AdmissionSketch sketch;
  for (uint64_t i = 0; i < seen; ++i) sketch.Increment(KeyHash(i));
  FalsePositives result;
  for (uint64_t i = 0; i < probes; ++i) {
    const uint32_t estimate = sketch.Estimate(KeyHash(1'000'000 + i));
    if (estimate >= 1) ++result.warm;
    if (estimate >= 2) ++result.hot;
  }
  return result;
}

TEST(AdmissionSketchTest, DistinctKeysRarelyLookHot) {
  constexpr uint64_t kProbes = 10000;
  // Half a key per counter: a probe looks warm only if all four of its
  // counters are taken, (1 - e^-0.5)^4 = 2.4%.
  FalsePositives half = ProbeAfterDistinctReads(2048, kProbes);
  EXPECT_LT(half.warm, kProbes * 4 / 100) << half.warm;
  EXPECT_LT(half.hot, kProbes / 1000) << half.hot;
  // One key per counter: (1 - e^-1)^4 = 16%, and two of them in each of
  // four counters is rare.
  FalsePositives full = ProbeAfterDistinctReads(4096, kProbes);
  EXPECT_LT(full.warm, kProbes * 18 / 100) << full.warm;
  EXPECT_LT(full.hot, kProbes / 100) << full.hot;
}

TEST(AdmissionSketchTest, ClearZeroesCountersKeepsStats) {
  AdmissionSketch sketch;
  for (uint64_t i = 0; i < 50; ++i) sketch.Increment(KeyHash(i % 5));
  sketch.Clear();
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(sketch.Estimate(KeyHash(i)), 0u);
  EXPECT_EQ(sketch.stats().increments, 50u);
  EXPECT_EQ(sketch.Increment(KeyHash(0)), 1u);
}

TEST(AdmissionSketchTest, RejectsBadShapes) {
  EXPECT_EQ(AdmissionSketch::ValidateShape(4096, 4), "");
  EXPECT_EQ(AdmissionSketch::ValidateShape(8, 1), "");
  EXPECT_NE(AdmissionSketch::ValidateShape(1000, 4), "");
  EXPECT_NE(AdmissionSketch::ValidateShape(4, 4), "");
  EXPECT_NE(AdmissionSketch::ValidateShape(1u << 25, 4), "");
  EXPECT_NE(AdmissionSketch::ValidateShape(4096, 0), "");
  EXPECT_NE(AdmissionSketch::ValidateShape(4096, 9), "");
  EXPECT_THROW(AdmissionSketch(1000, 4), std::invalid_argument);
  EXPECT_THROW(AdmissionSketch(4096, 0), std::invalid_argument);
}

TEST(AdmissionSketchTest, StatsVisitsEveryCounter) {
  AdmissionSketch sketch(64, 1);  // period 64
  for (int i = 0; i < 130; ++i) sketch.Increment(KeyHash(i));
  std::vector<std::pair<std::string, uint64_t>> seen;
  sketch.stats().VisitCounters([&](std::string_view name, uint64_t value) {
    seen.emplace_back(std::string(name), value);
  });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::pair<std::string, uint64_t>("increments", 130)));
  EXPECT_EQ(seen[1], (std::pair<std::string, uint64_t>("halvings", 2)));
}

TEST(AdmissionSketchTest, ConcurrentIncrementsOfDistinctKeysLoseNothing) {
  // Four threads, each with its own keys; no halving. Keys of different
  // threads share counters, and no increment may be lost to that.
  AdmissionSketch sketch(1024, 4, /*sample_size=*/1 << 20);
  constexpr int kThreads = 4;
  constexpr uint64_t kKeysPerThread = 300;
  constexpr int kPasses = 10;
  auto count_of = [](uint64_t key) { return key % 10 + 1; };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&sketch, &count_of, t] {
      for (int pass = 0; pass < kPasses; ++pass) {
        for (uint64_t k = 0; k < kKeysPerThread; ++k) {
          const uint64_t key = t * kKeysPerThread + k;
          if (static_cast<uint64_t>(pass) < count_of(key)) {
            sketch.Increment(KeyHash(key));
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t total = 0;
  for (uint64_t key = 0; key < kThreads * kKeysPerThread; ++key) {
    total += count_of(key);
  }
  EXPECT_EQ(sketch.stats().increments, total);
  uint64_t over = 0;
  for (uint64_t key = 0; key < kThreads * kKeysPerThread; ++key) {
    const uint32_t estimate = sketch.Estimate(KeyHash(key));
    ASSERT_GE(estimate, count_of(key)) << "key " << key;
    over += estimate - count_of(key);
  }
  EXPECT_LT(static_cast<double>(over) / (kThreads * kKeysPerThread), 2.0);
}

TEST(AdmissionSketchTest, ConcurrentIncrementsOfOneKeyStayInBounds) {
  // Overlapping increments of one key may merge, but each thread's own
  // increments are ordered, so the estimate is at least one thread's share
  // and at most all of them.
  AdmissionSketch sketch(1024, 4, /*sample_size=*/1 << 20);
  constexpr int kThreads = 4;
  constexpr uint32_t kPerThread = 60;  // 240 in all, below saturation
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&sketch] {
      uint32_t last = 0;
      for (uint32_t i = 0; i < kPerThread; ++i) {
        const uint32_t now = sketch.Increment(KeyHash(42));
        EXPECT_GT(now, last);
        last = now;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const uint32_t estimate = sketch.Estimate(KeyHash(42));
  EXPECT_GE(estimate, kPerThread);
  EXPECT_LE(estimate, kThreads * kPerThread);
}

TEST(AdmissionSketchTest, ConcurrentHalvingsHappenOncePerPeriod) {
  AdmissionSketch sketch(64, 2);  // period 128
  constexpr int kThreads = 4;
  constexpr uint64_t kPerThread = 10'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&sketch, t] {
      for (uint64_t i = 0; i < kPerThread; ++i) {
        const uint32_t estimate = sketch.Increment(KeyHash(t * 7 + i % 7));
        EXPECT_GE(estimate, 1u);
        EXPECT_LE(estimate, AdmissionSketch::kMaxCount);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(sketch.stats().increments, kThreads * kPerThread);
  // Exactly one thread completes each period, and only it halves.
  EXPECT_EQ(sketch.stats().halvings, kThreads * kPerThread / 128);
}

}  // namespace
}  // namespace admission_sketch_test
}  // namespace mooncake_tier
