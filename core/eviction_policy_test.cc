#include "core/eviction_policy.h"

#include <gtest/gtest.h>

#include <chrono>

namespace mooncake_tier {
namespace eviction_policy_test {
namespace {

TimePoint At(int seconds) { return TimePoint(std::chrono::seconds(seconds)); }

TEST(EvictionPolicyTest, NamesRoundTrip) {
  for (EvictionPolicyKind kind :
       {EvictionPolicyKind::kLru, EvictionPolicyKind::kClock}) {
    EXPECT_EQ(ParseEvictionPolicy(EvictionPolicyName(kind)), kind);
    EXPECT_EQ(MakeEvictionPolicy(kind)->kind(), kind);
  }
  EXPECT_EQ(ParseEvictionPolicy("lfu"), std::nullopt);
  EXPECT_EQ(ParseEvictionPolicy(""), std::nullopt);
}

TEST(EvictionPolicyTest, LruRanksByLastAccessAndEvictsUpToTheCutoff) {
  const auto lru = MakeEvictionPolicy(EvictionPolicyKind::kLru);
  const EvictionUnit old_read{At(5), At(1)};
  const EvictionUnit new_written{At(8), At(8)};
  EXPECT_EQ(lru->Rank(old_read, At(10)), At(5));
  EXPECT_EQ(lru->Rank(new_written, At(10)), At(8));
  EXPECT_EQ(lru->Sweep(old_read, At(6)), SweepAction::kEvict);
  EXPECT_EQ(lru->Sweep(new_written, At(6)), SweepAction::kKeep);
  EXPECT_EQ(lru->Sweep(new_written, At(8)), SweepAction::kEvict);
}

TEST(EvictionPolicyTest, ClockGivesAUnitReadSinceItEnteredAnotherTurn) {
  const auto clock = MakeEvictionPolicy(EvictionPolicyKind::kClock);
  const EvictionUnit read_once_since{At(5), At(1)};  // entered 1, read at 5
  const EvictionUnit never_read{At(2), At(2)};       // entered 2, not read
  const EvictionUnit young{At(9), At(9)};
  // The unread unit ranks by when it entered; the read one ranks as if it
  // had just entered again, behind everything a sweep would evict.
  EXPECT_EQ(clock->Rank(never_read, At(10)), At(2));
  EXPECT_EQ(clock->Rank(read_once_since, At(10)), At(10));
  EXPECT_LT(clock->Rank(never_read, At(10)),
            clock->Rank(read_once_since, At(10)));
  // A hand that reached t=3 evicts the unread unit, reinserts the read one
  // (which LRU would evict: its last access, 5, is older than young's)
  // and leaves the young one alone.
  EXPECT_EQ(clock->Sweep(never_read, At(3)), SweepAction::kEvict);
  EXPECT_EQ(clock->Sweep(read_once_since, At(3)), SweepAction::kReinsert);
  EXPECT_EQ(clock->Sweep(young, At(3)), SweepAction::kKeep);
  // Reinserted (inserted := now) and not read again, it goes next time.
  const EvictionUnit reinserted{At(5), At(10)};
  EXPECT_EQ(clock->Rank(reinserted, At(11)), At(10));
  EXPECT_EQ(clock->Sweep(reinserted, At(10)), SweepAction::kEvict);
}

}  // namespace
}  // namespace eviction_policy_test
}  // namespace mooncake_tier
