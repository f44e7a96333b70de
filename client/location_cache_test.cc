#include "client/location_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace mooncake_tier {
namespace location_cache_test {
namespace {

using std::chrono::seconds;
using namespace std::chrono_literals;

LocationCache::Entry EntryUntil(TimePoint until, uint64_t offset = 4096) {
  LocationCache::Entry entry;
  entry.replica.tier = Tier::kMemory;
  entry.replica.node = 7;
  entry.replica.offset = offset;
  entry.replica.size = 100;
  entry.size = 100;
  entry.valid_until = until;
  return entry;
}

TEST(LocationCacheTest, AnEntryServesUntilItsGrantRunsOut) {
  ManualClock clock;
  LocationCache cache(16, &clock);
  const TimePoint t0 = clock.Now();
  cache.Insert("k", EntryUntil(t0 + seconds(2)));

  std::optional<LocationCache::Entry> hit = cache.Find("k", t0 + seconds(1));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->replica.offset, 4096u);
  EXPECT_EQ(hit->size, 100u);
  // At the grant's end it no longer serves, and it is gone.
  EXPECT_FALSE(cache.Find("k", t0 + seconds(2)).has_value());
  EXPECT_FALSE(cache.Find("k", t0).has_value());
  const LocationCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.expired, 1u);
  EXPECT_EQ(stats.entries, 0u);
}

TEST(LocationCacheTest, AHotKeysReadsAreReportedAtMostEveryInterval) {
  ManualClock clock;
  LocationCache cache(16, &clock);
  const TimePoint t0 = clock.Now();
  cache.Insert("k", EntryUntil(t0 + seconds(2)));
  bool due = false;
  ASSERT_TRUE(cache.Find("k", t0, &due).has_value());
  EXPECT_TRUE(due);  // never reported yet
  for (int i = 1; i < 10; ++i) {
    ASSERT_TRUE(cache.Find("k", t0 + i * 10ms, &due).has_value());
    EXPECT_FALSE(due) << i;
  }
  ASSERT_TRUE(cache.Find("k", t0 + LocationCache::kReportEvery, &due));
  EXPECT_TRUE(due);
  // A renewed grant keeps the time of the last report.
  cache.Insert("k", EntryUntil(t0 + seconds(3)));
  ASSERT_TRUE(cache.Find("k", t0 + LocationCache::kReportEvery + 1ms, &due));
  EXPECT_FALSE(due);
}

TEST(LocationCacheTest, InsertReplacesAndEraseForgets) {
  ManualClock clock;
  LocationCache cache(16, &clock);
  const TimePoint t0 = clock.Now();
  cache.Insert("k", EntryUntil(t0 + seconds(2), 1));
  cache.Insert("k", EntryUntil(t0 + seconds(2), 2));
  ASSERT_TRUE(cache.Find("k", t0).has_value());
  EXPECT_EQ(cache.Find("k", t0)->replica.offset, 2u);
  cache.Erase("k");
  EXPECT_FALSE(cache.Find("k", t0).has_value());
  cache.Insert("a", EntryUntil(t0 + seconds(2)));
  cache.Insert("b", EntryUntil(t0 + seconds(2)));
  cache.Clear();
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(LocationCacheTest, StaysWithinItsCapacity) {
  ManualClock clock;
  // 16 stripes of 4 entries each.
  LocationCache cache(64, &clock);
  const TimePoint t0 = clock.Now();
  for (int i = 0; i < 10000; ++i) {
    cache.Insert("key-" + std::to_string(i), EntryUntil(t0 + seconds(2)));
  }
  const LocationCache::Stats stats = cache.stats();
  EXPECT_LE(stats.entries, 64u);
  EXPECT_EQ(stats.inserted, 10000u);
  EXPECT_EQ(stats.dropped, 10000u - stats.entries);
}

}  // namespace
}  // namespace location_cache_test
}  // namespace mooncake_tier
