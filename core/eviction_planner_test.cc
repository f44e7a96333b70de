#include "core/eviction_planner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

namespace mooncake_tier {
namespace eviction_planner_test {
namespace {

TimePoint At(int seconds) { return TimePoint(std::chrono::seconds(seconds)); }

TEST(EvictionPlannerTest, CutoffCoversTheOldestUntilTarget) {
  EvictionPlanner planner;
  for (int t : {5, 1, 4, 2, 3}) planner.Add(At(t), 10);
  EXPECT_EQ(planner.Cutoff(1), At(1));
  EXPECT_EQ(planner.Cutoff(10), At(1));
  EXPECT_EQ(planner.Cutoff(11), At(2));
  EXPECT_EQ(planner.Cutoff(30), At(3));
  EXPECT_EQ(planner.Cutoff(1000), At(5));
}

TEST(EvictionPlannerTest, EmptyPlannerSelectsNothing) {
  EvictionPlanner planner;
  EXPECT_EQ(planner.Cutoff(100), TimePoint::min());
}

TEST(EvictionPlannerTest, MatchesSortedPrefixOnRandomInput) {
  std::mt19937 rng(3);
  for (int round = 0; round < 50; ++round) {
    EvictionPlanner planner;
    std::vector<std::pair<int, uint64_t>> all;
    for (int i = 0; i < 200; ++i) {
      const int t = static_cast<int>(rng() % 1000);
      const uint64_t bytes = 1 + rng() % 100;
      planner.Add(At(t), bytes);
      all.emplace_back(t, bytes);
    }
    std::sort(all.begin(), all.end());
    const uint64_t target = 1 + rng() % 5000;
    uint64_t sum = 0;
    int expected = all.back().first;
    for (auto& [t, b] : all) {
      sum += b;
      if (sum >= target) {
        expected = t;
        break;
      }
    }
    ASSERT_EQ(planner.Cutoff(target), At(expected)) << "round " << round;
  }
}

}  // namespace
}  // namespace eviction_planner_test
}  // namespace mooncake_tier
