#include "node/dram_directory.h"

#include <gtest/gtest.h>

namespace mooncake_tier {
namespace dram_directory_test {
namespace {

DirectoryOp Add(uint64_t seq, std::string key, uint64_t offset, uint64_t size) {
  return DirectoryOp{seq, DirectoryOp::Kind::kAdd,
                     DramEntry{std::move(key), offset, size, std::nullopt}};
}

DirectoryOp Drop(uint64_t seq, std::string key, uint64_t offset) {
  return DirectoryOp{seq, DirectoryOp::Kind::kDrop,
                     DramEntry{std::move(key), offset, 0, std::nullopt}};
}

TEST(DramDirectoryTest, AddsAndDropsEntriesIdempotently) {
  DramDirectory dir(4096);
  EXPECT_TRUE(dir.Apply(Add(1, "a", 0, 100)));
  EXPECT_TRUE(dir.Apply(Add(2, "b", 128, 100)));
  EXPECT_TRUE(dir.Apply(Add(2, "b", 128, 100)));  // sent again
  EXPECT_EQ(dir.size(), 2u);
  EXPECT_EQ(dir.bytes(), 200u);
  EXPECT_TRUE(dir.Apply(Drop(3, "a", 0)));
  EXPECT_TRUE(dir.Apply(Drop(3, "a", 0)));  // already gone
  ASSERT_EQ(dir.size(), 1u);
  EXPECT_EQ(dir.Entries()[0].key, "b");
  EXPECT_EQ(dir.bytes(), 100u);
  // A drop that names only the range.
  EXPECT_TRUE(dir.Apply(Drop(4, "", 128)));
  EXPECT_EQ(dir.size(), 0u);
  EXPECT_EQ(dir.bytes(), 0u);
}

TEST(DramDirectoryTest, RefusesChangesThatDoNotFit) {
  DramDirectory dir(4096);
  EXPECT_FALSE(dir.Apply(Add(1, "past-end", 4000, 200)));
  EXPECT_FALSE(dir.Apply(Add(2, "outside", 4096, 1)));
  EXPECT_FALSE(dir.Apply(Add(3, "empty", 0, 0)));
  EXPECT_FALSE(dir.Apply(Add(4, "wrap", 64, UINT64_MAX)));
  EXPECT_EQ(dir.size(), 0u);
  ASSERT_TRUE(dir.Apply(Add(5, "a", 0, 100)));
  // A drop naming another key leaves the entry.
  EXPECT_FALSE(dir.Apply(Drop(6, "b", 0)));
  EXPECT_EQ(dir.size(), 1u);
}

TEST(DramDirectoryTest, ANewerEntryReplacesTheOnesItOverlaps) {
  DramDirectory dir(4096);
  ASSERT_TRUE(dir.Apply(Add(1, "a", 0, 100)));
  ASSERT_TRUE(dir.Apply(Add(2, "b", 128, 100)));
  ASSERT_TRUE(dir.Apply(Add(3, "c", 256, 100)));
  // Reaches from inside "a" into "b": both go, "c" stays.
  ASSERT_TRUE(dir.Apply(Add(4, "d", 64, 100)));
  std::vector<DramEntry> entries = dir.Entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].key, "d");
  EXPECT_EQ(entries[1].key, "c");
  EXPECT_EQ(dir.bytes(), 200u);
  // Adjacent ranges do not overlap.
  ASSERT_TRUE(dir.Apply(Add(5, "e", 356, 10)));
  EXPECT_EQ(dir.size(), 3u);
}

}  // namespace
}  // namespace dram_directory_test
}  // namespace mooncake_tier
