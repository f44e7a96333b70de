#include "base/space_allocator.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace mooncake_tier {
namespace space_allocator_test {
namespace {

TEST(SpaceAllocatorTest, AllocatesAlignedRangesUntilFull) {
  SpaceAllocator alloc(1024, 64);
  auto a = alloc.Allocate(100);
  auto b = alloc.Allocate(64);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a % 64, 0u);
  EXPECT_EQ(*b % 64, 0u);
  EXPECT_EQ(alloc.allocated_bytes(), 128u + 64u);
  EXPECT_FALSE(alloc.Allocate(1024 - 192 + 1));
  EXPECT_TRUE(alloc.Allocate(1024 - 192));
  EXPECT_EQ(alloc.free_bytes(), 0u);
  EXPECT_FALSE(alloc.Allocate(1));
}

TEST(SpaceAllocatorTest, RejectsZeroAndOversized) {
  SpaceAllocator alloc(4096, 64);
  EXPECT_FALSE(alloc.Allocate(0));
  EXPECT_FALSE(alloc.Allocate(4097));
  EXPECT_EQ(alloc.allocated_bytes(), 0u);
}

TEST(SpaceAllocatorTest, FreeCoalescesBothNeighbours) {
  SpaceAllocator alloc(64 * 3, 64);
  auto a = alloc.Allocate(64), b = alloc.Allocate(64), c = alloc.Allocate(64);
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE(alloc.Free(*a, 64));
  EXPECT_TRUE(alloc.Free(*c, 64));
  EXPECT_EQ(alloc.free_extent_count(), 2u);
  EXPECT_TRUE(alloc.Free(*b, 64));
  EXPECT_EQ(alloc.free_extent_count(), 1u);
  EXPECT_EQ(alloc.largest_free_extent(), 64u * 3);
  EXPECT_TRUE(alloc.Allocate(64 * 3));
}

TEST(SpaceAllocatorTest, DoubleFreeAndBogusRangesChangeNothing) {
  SpaceAllocator alloc(4096, 64);
  auto a = alloc.Allocate(128);
  ASSERT_TRUE(a);
  EXPECT_TRUE(alloc.Free(*a, 128));
  EXPECT_FALSE(alloc.Free(*a, 128));   // double free
  EXPECT_FALSE(alloc.Free(8, 64));     // misaligned
  EXPECT_FALSE(alloc.Free(4096, 64));  // past the end
  EXPECT_FALSE(alloc.Free(0, 0));
  EXPECT_EQ(alloc.allocated_bytes(), 0u);
  EXPECT_EQ(alloc.largest_free_extent(), 4096u);
}

TEST(SpaceAllocatorTest, BestFitKeepsLargeExtentsIntact) {
  SpaceAllocator alloc(64 * 10, 64);
  auto a = alloc.Allocate(64), b = alloc.Allocate(64 * 2),
       c = alloc.Allocate(64);
  ASSERT_TRUE(a && b && c);
  ASSERT_TRUE(alloc.Free(*a, 64));  // hole of 1 unit at the start
  // A 1-unit request takes the 1-unit hole, not the large tail.
  auto d = alloc.Allocate(64);
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, *a);
}

TEST(SpaceAllocatorTest, RandomChurnKeepsAccountingExact) {
  SpaceAllocator alloc(1 << 20, 64);
  std::mt19937_64 rng(7);
  std::vector<std::pair<uint64_t, uint64_t>> live;
  for (int i = 0; i < 20000; ++i) {
    if (live.empty() || rng() % 3 != 0) {
      const uint64_t size = 1 + rng() % 8192;
      if (auto off = alloc.Allocate(size)) live.emplace_back(*off, size);
    } else {
      const size_t pick = rng() % live.size();
      ASSERT_TRUE(alloc.Free(live[pick].first, live[pick].second));
      live[pick] = live.back();
      live.pop_back();
    }
    if (i % 1000 == 0) {
      uint64_t sum = 0;
      for (auto& [off, size] : live) sum += alloc.RoundUp(size);
      ASSERT_EQ(sum, alloc.allocated_bytes());
    }
  }
  for (auto& [off, size] : live) ASSERT_TRUE(alloc.Free(off, size));
  EXPECT_EQ(alloc.allocated_bytes(), 0u);
  EXPECT_EQ(alloc.free_extent_count(), 1u);
}

TEST(SpaceAllocatorTest, ReserveTakesAKnownRangeOnlyWhenFree) {
  SpaceAllocator alloc(4096, 64);
  // Ranges rebuilt from a node's record, in any order.
  EXPECT_TRUE(alloc.Reserve(1024, 100));  // rounded up to 128
  EXPECT_TRUE(alloc.Reserve(0, 64));
  EXPECT_EQ(alloc.allocated_bytes(), 192u);
  // Overlapping, misaligned, out of bounds or empty: refused, nothing taken.
  EXPECT_FALSE(alloc.Reserve(1088, 64));
  EXPECT_FALSE(alloc.Reserve(960, 128));
  EXPECT_FALSE(alloc.Reserve(1000, 64));
  EXPECT_FALSE(alloc.Reserve(4096, 64));
  EXPECT_FALSE(alloc.Reserve(4032, 128));
  EXPECT_FALSE(alloc.Reserve(64, 0));
  EXPECT_EQ(alloc.allocated_bytes(), 192u);
  // What is left is allocatable around them, and frees coalesce back.
  EXPECT_EQ(alloc.Allocate(960), std::optional<uint64_t>(64));
  EXPECT_TRUE(alloc.Free(1024, 100));
  EXPECT_TRUE(alloc.Free(0, 64));
  EXPECT_TRUE(alloc.Free(64, 960));
  EXPECT_EQ(alloc.allocated_bytes(), 0u);
  EXPECT_EQ(alloc.free_extent_count(), 1u);
}

}  // namespace
}  // namespace space_allocator_test
}  // namespace mooncake_tier
