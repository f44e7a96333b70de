#include "node/dram_segment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "transport/shared_memory_file.h"

namespace mooncake_tier {
namespace dram_segment_test {
namespace {

TEST(DramSegmentTest, MapsWritableMemory) {
  Result<std::unique_ptr<DramSegment>> seg =
      DramSegment::Create(1 << 20, false);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  (*seg)->base()[0] = std::byte{1};
  (*seg)->base()[(1 << 20) - 1] = std::byte{2};
  EXPECT_EQ((*seg)->size(), 1u << 20);
}

TEST(DramSegmentTest, HugePagesFallBackWhenUnavailable) {
  Result<std::unique_ptr<DramSegment>> seg = DramSegment::Create(3 << 20, true);
  ASSERT_TRUE(seg.ok());
  (*seg)->base()[(3 << 20) - 1] = std::byte{2};
}

TEST(DramSegmentTest, RangeChecksBounds) {
  Result<std::unique_ptr<DramSegment>> seg = DramSegment::Create(4096, false);
  ASSERT_TRUE(seg.ok());
  EXPECT_TRUE((*seg)->Range(0, 4096).ok());
  EXPECT_TRUE((*seg)->Range(4096, 0).ok());
  EXPECT_FALSE((*seg)->Range(4000, 100).ok());
  EXPECT_FALSE((*seg)->Range(UINT64_MAX, 2).ok());
  EXPECT_EQ(DramSegment::Create(0, false).status().reason(),
            ErrorReason::kInvalidSize);
}

TEST(DramSegmentTest, IsSharedMemoryAnExporterCanFindUnlessAskedNotTo) {
  Result<std::unique_ptr<DramSegment>> seg =
      DramSegment::Create(1 << 20, false);
  ASSERT_TRUE(seg.ok());
  ASSERT_TRUE((*seg)->shared());
  Result<SharedMemoryFile::Opened> opened =
      SharedMemoryFile::OpenForExport((*seg)->base() + 4096, 8192);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->locator.file_offset, 4096u);
  EXPECT_EQ(opened->locator.file_size, 1u << 20);
  close(opened->fd);

  Result<std::unique_ptr<DramSegment>> private_seg =
      DramSegment::Create(1 << 20, false, /*shareable=*/false);
  ASSERT_TRUE(private_seg.ok());
  EXPECT_FALSE((*private_seg)->shared());
  EXPECT_EQ(SharedMemoryFile::OpenForExport((*private_seg)->base(), 4096)
                .status()
                .reason(),
            ErrorReason::kNotApplicable);
}

TEST(DramSegmentTest, StagingTailFollowsPageAlignedOutsideRange) {
  constexpr uint64_t kSize = (1 << 20) + 100;
  Result<std::unique_ptr<DramSegment>> seg =
      DramSegment::Create(kSize, false, true, (2 << 20) + 1);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  const DramSegment& s = **seg;
  EXPECT_EQ(s.size(), kSize);
  EXPECT_EQ(s.staging_offset(), (1u << 20) + 4096);
  EXPECT_EQ(s.staging_bytes(), (2u << 20) + 4096);
  EXPECT_EQ(s.total_size(), s.staging_offset() + s.staging_bytes());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s.base() + s.staging_offset()) % 4096,
            0u);
  s.base()[s.total_size() - 1] = std::byte{3};  // mapped
  EXPECT_FALSE(s.Range(kSize, 1).ok());         // but not the master's
  Result<SharedMemoryFile::Opened> opened =
      SharedMemoryFile::OpenForExport(s.base(), s.total_size());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_GE(opened->locator.file_size, s.total_size());
  close(opened->fd);
  Result<std::unique_ptr<DramSegment>> none = DramSegment::Create(kSize, false);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->staging_bytes(), 0u);
  EXPECT_EQ((*none)->total_size(), kSize);
}

}  // namespace
}  // namespace dram_segment_test
}  // namespace mooncake_tier
