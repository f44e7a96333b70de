#include "core/hit_ratio_estimator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <list>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mooncake_tier {
namespace hit_ratio_estimator_test {
namespace {

using Options = HitRatioEstimator::Options;

// A byte-sized LRU cache simulated exactly, with the estimator's rules: a
// hit moves the unit to the front and takes its new size, a unit larger
// than the cache is not admitted, units leave from the back until the bytes
// fit.
class ExactLru {
 public:
  explicit ExactLru(uint64_t capacity) : capacity_(capacity) {}

  void Reference(uint64_t unit, uint64_t bytes) {
    ++references_;
    const auto found = where_.find(unit);
    if (found != where_.end()) {
      ++hits_;
      used_ -= found->second->second;
      order_.erase(found->second);
      where_.erase(found);
    }
    if (bytes > capacity_) return;
    order_.emplace_front(unit, bytes);
    where_[unit] = order_.begin();
    used_ += bytes;
    while (used_ > capacity_) {
      used_ -= order_.back().second;
      where_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  double hit_ratio() const {
    return references_ == 0
               ? 0.0
               : static_cast<double>(hits_) / static_cast<double>(references_);
  }

 private:
  using Entry = std::pair<uint64_t, uint64_t>;  // unit, bytes
  const uint64_t capacity_;
  uint64_t used_ = 0;
  uint64_t hits_ = 0;
  uint64_t references_ = 0;
  std::list<Entry> order_;  // front: most recent
  std::unordered_map<uint64_t, std::list<Entry>::iterator> where_;
};

double Uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1p-53;
}

// Draws ranks 0..n-1 with P(k) proportional to (k+1)^-alpha.
class Zipf {
 public:
  Zipf(size_t n, double alpha) : cdf_(n) {
    double sum = 0;
    for (size_t k = 0; k < n; ++k) {
      sum += std::pow(static_cast<double>(k + 1), -alpha);
      cdf_[k] = sum;
    }
    for (double& c : cdf_) c /= sum;
  }

  uint64_t Draw(std::mt19937_64& rng) const {
    const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), Uniform01(rng));
    return std::min<uint64_t>(it - cdf_.begin(), cdf_.size() - 1);
  }

 private:
  std::vector<double> cdf_;
};

Options ExactOptions(std::vector<double> scales) {
  Options options;
  options.scales = std::move(scales);
  options.initial_rate = 1;
  options.max_sampled_units = 1 << 20;
  options.window_references = 0;
  return options;
}

double HitRatioAt(const HitRatioEstimator& estimator, size_t index) {
  return estimator.Estimate().at(index).hit_ratio;
}

TEST(HitRatioEstimatorTest, RejectsInvalidOptions) {
  EXPECT_EQ(HitRatioEstimator::ValidateOptions(Options{}), "");
  Options options;
  options.scales = {};
  EXPECT_NE(HitRatioEstimator::ValidateOptions(options), "");
  options.scales = {1, 0};
  EXPECT_NE(HitRatioEstimator::ValidateOptions(options), "");
  options.scales = {std::numeric_limits<double>::quiet_NaN()};
  EXPECT_NE(HitRatioEstimator::ValidateOptions(options), "");
  options = Options{};
  options.initial_rate = 0;
  EXPECT_NE(HitRatioEstimator::ValidateOptions(options), "");
  options.initial_rate = 1.5;
  EXPECT_NE(HitRatioEstimator::ValidateOptions(options), "");
  options.initial_rate = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(HitRatioEstimator::ValidateOptions(options), "");
  options = Options{};
  options.max_sampled_units = 0;
  EXPECT_NE(HitRatioEstimator::ValidateOptions(options), "");
  EXPECT_THROW(HitRatioEstimator{options}, std::invalid_argument);
}

TEST(HitRatioEstimatorTest, FreshEstimatorReportsEveryScaleAtZero) {
  HitRatioEstimator estimator{Options{}};
  estimator.SetCapacity(1000);
  EXPECT_NEAR(estimator.sampling_rate(), 0.1, 1e-9);  // T is an integer
  const std::vector<HitRatioEstimator::Point> points = estimator.Estimate();
  ASSERT_EQ(points.size(), 4u);
  const double scales[] = {0.5, 1, 2, 4};
  const uint64_t capacities[] = {500, 1000, 2000, 4000};
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].scale, scales[i]);
    EXPECT_EQ(points[i].capacity_bytes, capacities[i]);
    EXPECT_EQ(points[i].hit_ratio, 0);
    EXPECT_EQ(points[i].sampled_references, 0u);
    EXPECT_EQ(points[i].resident_units, 0u);
  }
}

// At rate 1 every reference is sampled and each mini cache is the full
// cache at its scale: the estimates must be the exact hit ratios.
TEST(HitRatioEstimatorTest, RateOneMatchesExactLru) {
  const std::vector<double> scales = {0.5, 1, 2, 4};
  constexpr uint64_t kUnits = 3000;
  constexpr uint64_t kCapacity = 300 * 1000;  // about 300 units
  HitRatioEstimator estimator(ExactOptions(scales));
  estimator.SetCapacity(kCapacity);
  std::vector<ExactLru> exact;
  for (const double scale : scales) {
    exact.emplace_back(static_cast<uint64_t>(scale * kCapacity));
  }

  std::mt19937_64 rng(42);
  std::vector<uint64_t> sizes(kUnits);
  for (uint64_t& size : sizes) size = 1 + rng() % 2000;
  constexpr int kReferences = 50000;
  for (int i = 0; i < kReferences; ++i) {
    // The smaller of two uniform draws: unit k is drawn with probability
    // falling linearly in k, enough reuse for every scale to hit sometimes.
    const uint64_t unit = std::min(rng() % kUnits, rng() % kUnits);
    estimator.Reference(unit, sizes[unit]);
    for (ExactLru& lru : exact) lru.Reference(unit, sizes[unit]);
  }

  const std::vector<HitRatioEstimator::Point> points = estimator.Estimate();
  ASSERT_EQ(points.size(), scales.size());
  for (size_t i = 0; i < scales.size(); ++i) {
    SCOPED_TRACE(scales[i]);
    EXPECT_NEAR(points[i].hit_ratio, exact[i].hit_ratio(), 1e-12);
    EXPECT_EQ(points[i].sampled_references, uint64_t{kReferences});
    // Not a degenerate workload: some hits and some misses at every scale.
    EXPECT_GT(exact[i].hit_ratio(), 0.05);
    EXPECT_LT(exact[i].hit_ratio(), 0.95);
  }
  EXPECT_LT(points[0].hit_ratio, points[3].hit_ratio);
}

// A loop over N equal units: LRU hits every time when the N fit and never
// when they do not. Run exactly, at a fixed 10% rate, and with the rate
// lowered by the bound to about 10%.
TEST(HitRatioEstimatorTest, CyclicScanHitsOnlyWhenAllUnitsFit) {
  constexpr uint64_t kUnits = 10000;
  constexpr uint64_t kBytes = 512;
  struct Config {
    double initial_rate;
    size_t max_sampled_units;
  };
  for (const Config config :
       {Config{1, 1 << 20}, Config{0.1, 8192}, Config{1, 1000}}) {
    SCOPED_TRACE(config.initial_rate);
    SCOPED_TRACE(config.max_sampled_units);
    Options options;
    options.scales = {0.5, 0.999, 2};
    options.initial_rate = config.initial_rate;
    options.max_sampled_units = config.max_sampled_units;
    options.window_references = 0;
    HitRatioEstimator estimator(options);
    estimator.SetCapacity(kUnits * kBytes);

    const auto scan = [&](int cycles) {
      for (int c = 0; c < cycles; ++c) {
        for (uint64_t unit = 0; unit < kUnits; ++unit) {
          estimator.Reference(unit, kBytes);
        }
      }
    };
    scan(2);  // warm-up, and where the bound lowers the rate
    estimator.Reset();
    scan(3);
    const std::vector<HitRatioEstimator::Point> points = estimator.Estimate();
    if (config.initial_rate == 1 && config.max_sampled_units > kUnits) {
      EXPECT_EQ(estimator.sampling_rate(), 1);
      EXPECT_EQ(points[0].hit_ratio, 0);
      EXPECT_EQ(points[1].hit_ratio, 0);
      EXPECT_EQ(points[2].hit_ratio, 1);
      continue;
    }
    EXPECT_NEAR(estimator.sampling_rate(), 0.1, 0.02);
    EXPECT_GT(points[2].sampled_references, 2000u);
    // The adjustment adds or removes the gap between the expected and the
    // actual number of sampled references (a few percent here) at every
    // scale, so "never" reads as nearly 0.
    EXPECT_LT(points[0].hit_ratio, 0.05);
    EXPECT_GT(points[2].hit_ratio, 0.99);
    // Nothing fitting means nothing resident at the small scale but the
    // units the scan passed last.
    EXPECT_LT(points[0].resident_units, points[2].resident_units);
  }
}

// Zipf(0.8) over 100k units of 4-8 KiB, 200k references sampled at 5%:
// each scale's estimate is within 0.03 of the exact LRU hit ratio.
TEST(HitRatioEstimatorTest, SkewedWorkloadTracksExactLru) {
  const std::vector<double> scales = {0.5, 1, 2, 4};
  constexpr uint64_t kUnits = 100000;
  constexpr int kReferences = 200000;
  std::mt19937_64 rng(7);
  std::vector<uint64_t> sizes(kUnits);
  for (uint64_t& size : sizes) size = 4096 + rng() % 4096;
  const uint64_t capacity = 10000 * 6144;  // about 10k units, 4x is 40k

  Options options;
  options.scales = scales;
  options.initial_rate = 0.05;
  options.window_references = 0;
  HitRatioEstimator estimator(options);
  estimator.SetCapacity(capacity);
  std::vector<ExactLru> exact;
  for (const double scale : scales) {
    exact.emplace_back(static_cast<uint64_t>(scale * capacity));
  }

  const Zipf zipf(kUnits, 0.8);
  for (int i = 0; i < kReferences; ++i) {
    const uint64_t unit = zipf.Draw(rng);
    estimator.Reference(unit, sizes[unit]);
    for (ExactLru& lru : exact) lru.Reference(unit, sizes[unit]);
  }

  // The bound (8192) was never reached: the rate is the one asked for.
  EXPECT_NEAR(estimator.sampling_rate(), 0.05, 1e-9);
  const std::vector<HitRatioEstimator::Point> points = estimator.Estimate();
  for (size_t i = 0; i < scales.size(); ++i) {
    SCOPED_TRACE(scales[i]);
    EXPECT_NEAR(points[i].hit_ratio, exact[i].hit_ratio(), 0.03);
    EXPECT_GT(points[i].sampled_references, 5000u);
  }
}

TEST(HitRatioEstimatorTest, TrackedUnitsStayWithinBoundAndRateFalls) {
  constexpr size_t kBound = 256;
  constexpr uint64_t kUnits = 50000;
  Options options;
  options.initial_rate = 1;
  options.max_sampled_units = kBound;
  options.window_references = 0;
  HitRatioEstimator estimator(options);
  // All units fit at scale 1 with a quarter to spare, so at every scale
  // from 1 up: only the bound limits the sample.
  estimator.SetCapacity(kUnits * 125);

  double last_rate = estimator.sampling_rate();
  for (int pass = 0; pass < 2; ++pass) {
    for (uint64_t unit = 0; unit < kUnits; ++unit) {
      estimator.Reference(unit, 100);
      ASSERT_LE(estimator.tracked_units(), kBound) << unit;
      ASSERT_LE(estimator.sampling_rate(), last_rate) << unit;
      last_rate = estimator.sampling_rate();
      if (pass == 0 && unit == kBound) {
        // The first unit past the bound lowered the rate.
        ASSERT_LT(last_rate, 1.0);
      }
      if (unit % 997 == 0) {
        for (const HitRatioEstimator::Point& point : estimator.Estimate()) {
          ASSERT_LE(point.resident_units, kBound) << unit;
        }
      }
    }
  }
  // The bound keeps the kBound smallest tags of the 50k: the rate ends near
  // kBound / kUnits, not far below it.
  EXPECT_GT(last_rate, 0.7 * kBound / kUnits);
  EXPECT_LT(last_rate, 1.4 * kBound / kUnits);
  // The largest scale has room for five times the bound: it holds every
  // tracked unit, and the bound, not its capacity, set the rate.
  EXPECT_EQ(estimator.Estimate()[3].resident_units, estimator.tracked_units());
  EXPECT_GT(estimator.tracked_units(), kBound * 9 / 10);

  // The counts from before each fall were rescaled with it, so the
  // estimates still match the exact ones: the first pass all misses, the
  // second all hits where the 50k units fit (scales 1 and up), none where
  // they do not (LRU over a loop).
  const std::vector<HitRatioEstimator::Point> points = estimator.Estimate();
  EXPECT_LT(points[0].hit_ratio, 0.05);
  for (size_t i = 1; i < points.size(); ++i) {
    EXPECT_NEAR(points[i].hit_ratio, 0.5, 0.05) << points[i].scale;
  }
}

TEST(HitRatioEstimatorTest, ForgetMakesTheNextReferenceAMiss) {
  HitRatioEstimator estimator(ExactOptions({1}));
  estimator.SetCapacity(1000);
  estimator.Reference(1, 100);
  estimator.Reference(2, 100);
  estimator.Reference(1, 100);
  EXPECT_DOUBLE_EQ(HitRatioAt(estimator, 0), 1.0 / 3);
  EXPECT_EQ(estimator.tracked_units(), 2u);

  estimator.Forget(1);
  estimator.Forget(99);  // never seen: nothing happens
  EXPECT_EQ(estimator.tracked_units(), 1u);
  EXPECT_EQ(estimator.Estimate()[0].resident_units, 1u);

  estimator.Reset();
  estimator.Reference(1, 100);
  EXPECT_EQ(HitRatioAt(estimator, 0), 0);
  estimator.Reference(2, 100);  // untouched by the Forget of 1
  estimator.Reference(1, 100);
  EXPECT_DOUBLE_EQ(HitRatioAt(estimator, 0), 2.0 / 3);
}

TEST(HitRatioEstimatorTest, ShrinkingTheCapacityEvictsLeastRecentFirst) {
  HitRatioEstimator estimator(ExactOptions({1}));
  estimator.SetCapacity(1000);
  for (uint64_t unit = 0; unit < 10; ++unit) estimator.Reference(unit, 100);
  EXPECT_EQ(estimator.Estimate()[0].resident_units, 10u);

  estimator.SetCapacity(500);
  EXPECT_EQ(estimator.Estimate()[0].resident_units, 5u);
  EXPECT_EQ(estimator.tracked_units(), 5u);
  EXPECT_EQ(estimator.Estimate()[0].capacity_bytes, 500u);

  // Growing back brings nothing back.
  estimator.SetCapacity(1000);
  EXPECT_EQ(estimator.Estimate()[0].resident_units, 5u);

  estimator.Reset();
  for (uint64_t unit = 5; unit < 10; ++unit) estimator.Reference(unit, 100);
  EXPECT_EQ(HitRatioAt(estimator, 0), 1);
  estimator.Reference(0, 100);  // evicted by the shrink
  EXPECT_DOUBLE_EQ(HitRatioAt(estimator, 0), 5.0 / 6);
}

TEST(HitRatioEstimatorTest, UnitLargerThanAMiniCacheSkipsOnlyThatCache) {
  HitRatioEstimator estimator(ExactOptions({1, 4}));
  estimator.SetCapacity(1000);
  for (uint64_t unit = 0; unit < 5; ++unit) estimator.Reference(unit, 100);
  estimator.Reference(100, 2000);
  estimator.Reference(100, 2000);
  std::vector<HitRatioEstimator::Point> points = estimator.Estimate();
  // Scale 1 (1000 bytes) refused it and kept its five units; scale 4 holds
  // all six and hit the second time.
  EXPECT_EQ(points[0].resident_units, 5u);
  EXPECT_EQ(points[1].resident_units, 6u);
  EXPECT_EQ(points[0].hit_ratio, 0);
  EXPECT_DOUBLE_EQ(points[1].hit_ratio, 1.0 / 7);

  // Grown past even the largest mini cache, it is a hit once more and then
  // leaves it.
  estimator.Reference(100, 5000);
  points = estimator.Estimate();
  EXPECT_DOUBLE_EQ(points[1].hit_ratio, 2.0 / 8);
  EXPECT_EQ(points[1].resident_units, 5u);
  EXPECT_EQ(estimator.tracked_units(), 5u);
}

TEST(HitRatioEstimatorTest, WindowFavorsRecentReferences) {
  // 1000 misses, then 1000 hits on one unit.
  const auto run = [](uint64_t window) {
    Options options = ExactOptions({1});
    options.window_references = window;
    HitRatioEstimator estimator(options);
    estimator.SetCapacity(100);
    for (uint64_t unit = 0; unit < 1000; ++unit) estimator.Reference(unit, 50);
    for (int i = 0; i < 1000; ++i) estimator.Reference(5000, 50);
    return estimator.Estimate()[0];
  };
  const HitRatioEstimator::Point whole = run(0);
  EXPECT_DOUBLE_EQ(whole.hit_ratio, 999.0 / 2000);
  EXPECT_EQ(whole.sampled_references, 2000u);

  // Halved every 100 references: the misses are 10 windows old.
  const HitRatioEstimator::Point recent = run(100);
  EXPECT_GT(recent.hit_ratio, 0.99);
  EXPECT_LE(recent.sampled_references, 200u);
}

}  // namespace
}  // namespace hit_ratio_estimator_test
}  // namespace mooncake_tier
