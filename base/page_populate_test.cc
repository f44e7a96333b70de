#include "base/page_populate.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace mooncake_tier {
namespace page_populate_test {
namespace {

const uint64_t kPage = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));

// A memfd of `pages` pages, mapped twice: as the node and as a client.
class SharedFile {
 public:
  explicit SharedFile(uint64_t pages) : size_(pages * kPage) {
    fd_ = memfd_create("page-populate-test", MFD_CLOEXEC);
    if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(size_)) != 0) return;
    node_ = Map();
    client_ = Map();
  }
  ~SharedFile() {
    if (node_ != nullptr) munmap(node_, size_);
    if (client_ != nullptr) munmap(client_, size_);
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return node_ != nullptr && client_ != nullptr; }
  std::byte* node() const { return node_; }
  std::byte* client() const { return client_; }
  uint64_t size() const { return size_; }
  // Bytes of memory the file holds.
  uint64_t allocated() const {
    struct stat st {};
    fstat(fd_, &st);
    return static_cast<uint64_t>(st.st_blocks) * 512;
  }

 private:
  std::byte* Map() const {
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
  }
  const uint64_t size_;
  int fd_ = -1;
  std::byte* node_ = nullptr;
  std::byte* client_ = nullptr;
};

uint64_t ResidentPages(std::byte* begin, uint64_t length) {
  std::vector<unsigned char> v((length + kPage - 1) / kPage);
  if (mincore(begin, length, v.data()) != 0) return 0;
  uint64_t n = 0;
  for (unsigned char c : v) n += c & 1;
  return n;
}

TEST(PagePopulateTest, PopulatesEveryPageAndChangesNoByte) {
  SharedFile file(64);
  ASSERT_TRUE(file.ok());
  std::memset(file.node() + 3 * kPage, 0x5a, kPage);
  EXPECT_EQ(file.allocated(), kPage);
  ASSERT_TRUE(PopulatePages(file.node(), file.size()));
  EXPECT_EQ(file.allocated(), file.size());
  EXPECT_EQ(ResidentPages(file.node(), file.size()), 64u);
  EXPECT_EQ(file.node()[3 * kPage], std::byte{0x5a});
  EXPECT_EQ(file.node()[4 * kPage - 1], std::byte{0x5a});
  EXPECT_EQ(file.node()[0], std::byte{0});
}

TEST(PagePopulateTest, ResidentOnlyNeverAllocates) {
  SharedFile file(64);
  ASSERT_TRUE(file.ok());
  // The node has touched pages 0, 1 and 40 only.
  file.node()[0] = std::byte{1};
  file.node()[kPage] = std::byte{2};
  file.node()[40 * kPage] = std::byte{3};
  EXPECT_EQ(file.allocated(), 3 * kPage);
  EXPECT_EQ(PopulateResidentPages(file.client(), file.size()), 3 * kPage);
  EXPECT_EQ(file.allocated(), 3 * kPage);
  EXPECT_EQ(file.client()[kPage], std::byte{2});
  EXPECT_EQ(file.client()[40 * kPage], std::byte{3});
}

TEST(PagePopulateTest, PopulatorRunsRangesInTheBackground) {
  SharedFile file(300);
  ASSERT_TRUE(file.ok());
  std::atomic<uint64_t> reported{0};
  {
    PagePopulator populator;
    populator.Add(file.node(), file.size(), PagePopulator::Mode::kAllocate,
                  [&](uint64_t bytes, double seconds) {
                    EXPECT_GE(seconds, 0.0);
                    reported = bytes;
                  });
    ASSERT_TRUE(populator.WaitIdle(30'000));
    EXPECT_EQ(reported.load(), file.size());
    EXPECT_EQ(populator.stats().populated_bytes, file.size());
    EXPECT_EQ(populator.stats().pending_ranges, 0u);
  }
  EXPECT_EQ(file.allocated(), file.size());
}

TEST(PagePopulateTest, ARangeWhoseOwnerWentIsSkipped) {
  SharedFile file(16);
  ASSERT_TRUE(file.ok());
  PagePopulator populator;
  std::weak_ptr<const void> gone;
  {
    auto owner = std::make_shared<int>(0);
    gone = owner;
  }
  bool called = false;
  populator.Add(gone, file.node(), file.size(), PagePopulator::Mode::kAllocate,
                [&](uint64_t bytes, double) {
                  called = true;
                  EXPECT_EQ(bytes, 0u);
                });
  auto owner = std::make_shared<int>(0);
  populator.Add(std::weak_ptr<const void>(owner), file.client(), file.size(),
                PagePopulator::Mode::kResidentOnly);
  ASSERT_TRUE(populator.WaitIdle(30'000));
  EXPECT_TRUE(called);
  EXPECT_EQ(file.allocated(), 0u);  // neither range allocated anything
  EXPECT_EQ(populator.stats().populated_bytes, 0u);
}

TEST(PagePopulateTest, DestroyedWhileBusyStopsBetweenChunks) {
  // 4 GiB reserved, never committed: the populator is destroyed long
  // before it could fill it (a chunk is 64 MiB).
  const uint64_t size = uint64_t{4} << 30;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  {
    PagePopulator populator;
    populator.Add(static_cast<std::byte*>(p), size,
                  PagePopulator::Mode::kAllocate);
  }
  EXPECT_LT(ResidentPages(static_cast<std::byte*>(p), size) * kPage, size);
  munmap(p, size);
}

}  // namespace
}  // namespace page_populate_test
}  // namespace mooncake_tier
