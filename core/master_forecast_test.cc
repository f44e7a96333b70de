// The master's hit-ratio forecast (HitRatioForecast): fed by reads that hit
// and by puts, sized by the tick, shown in the stats.

#include <gtest/gtest.h>

#include <string>

#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_forecast_test {
namespace {

using testing::MasterHarness;

constexpr uint64_t kObj = 1024;

std::string Key(int i) { return "k" + std::to_string(i); }

const MasterStats::ForecastPoint& At(const MasterStats& stats, double scale) {
  for (const MasterStats::ForecastPoint& p : stats.hit_ratio_forecast) {
    if (p.scale == scale) return p;
  }
  static const MasterStats::ForecastPoint kNone;
  ADD_FAILURE() << "no forecast at scale " << scale;
  return kNone;
}

// Enough objects that a sample of about a tenth of them (the forecast's
// rate; which objects it takes changes from run to run with the process's
// hash seed) estimates within a few hundredths.
constexpr int kLoop = 12000;

// A loop over 12000 objects through a store that holds 4000 (DRAM only,
// no offload): an engine reads each and puts it back when missing. The
// store itself never hits; at 4x its size every object would stay.
TEST(MasterForecastTest, ALoopLargerThanTheStoreWouldHitAtFourTimesItsSize) {
  MasterHarness h;
  h.AddNode("n", 4000 * kObj);
  h.master().Tick();  // sizes the forecast
  uint64_t store_hits = 0;
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < kLoop; ++i) {
      if (h.Get(Key(i)).ok()) {
        ++store_hits;
      } else {
        ASSERT_TRUE(h.Put(Key(i), kObj).ok()) << i;
      }
      // A full DRAM makes room for a put with a round of its own, at
      // most every 20 ms.
      h.clock().Advance(std::chrono::milliseconds(25));
    }
  }
  EXPECT_EQ(store_hits, 0u);
  const MasterStats stats = h.master().GetStats();
  ASSERT_EQ(stats.hit_ratio_forecast.size(), 4u);
  EXPECT_GT(stats.forecast_sampling_rate, 0.0);
  EXPECT_EQ(At(stats, 1).capacity_bytes, 4000 * kObj);
  EXPECT_GT(At(stats, 1).sampled_references, 0u);
  EXPECT_LT(At(stats, 1).hit_ratio, 0.1);
  // Five of six rounds hit at 4x: the first only fills.
  EXPECT_GT(At(stats, 4).hit_ratio, 0.7);
}

TEST(MasterForecastTest, ARemovedObjectIsAMissAgainAtEverySize) {
  MasterHarness h;
  h.AddNode("n", 4000 * kObj);
  h.master().Tick();
  // Every scale above 1x would hold the loop; but each object is removed
  // before it is put again.
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < kLoop; ++i) {
      ASSERT_TRUE(h.Put(Key(i), kObj).ok()) << i;
      ASSERT_TRUE(h.Remove(Key(i)).ok()) << i;
    }
  }
  const MasterStats stats = h.master().GetStats();
  EXPECT_LT(At(stats, 4).hit_ratio, 0.1);
}

}  // namespace
}  // namespace master_forecast_test
}  // namespace mooncake_tier
