#include "node/dram_segment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "transport/shared_memory_file.h"

namespace mooncake_tier {
namespace {

TEST(DramSegmentTest, MapsWritableMemory) {
  Result<std::unique_ptr<DramSegment>> seg = DramSegment::Create(1 << 20, false);
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

}  // namespace
}  // namespace mooncake_tier
