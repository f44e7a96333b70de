#include "node/dram_segment.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "spdlog/spdlog.h"

namespace mooncake_tier {
namespace {

constexpr uint64_t kHugePage = 2ull << 20;
constexpr uint64_t kPage = 4096;

uint64_t RoundUp(uint64_t n, uint64_t unit) { return (n + unit - 1) / unit * unit; }

}  // namespace

Result<std::unique_ptr<DramSegment>> DramSegment::Create(uint64_t size,
                                                         bool huge_pages) {
  if (size == 0) return Status(ErrorReason::kInvalidSize, "segment size is 0");
  if (huge_pages) {
    const uint64_t mapped = RoundUp(size, kHugePage);
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (p != MAP_FAILED) {
      return std::unique_ptr<DramSegment>(
          new DramSegment(static_cast<std::byte*>(p), size, mapped, true));
    }
    spdlog::warn("DRAM segment: no {} MiB of huge pages ({}); using normal "
                 "pages with transparent huge pages",
                 mapped >> 20, std::strerror(errno));
  }
  const uint64_t mapped = RoundUp(size, kPage);
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    return Status(ErrorReason::kNoSpace,
                  "cannot map " + std::to_string(size) +
                      " bytes of DRAM: " + std::strerror(errno));
  }
  if (huge_pages) madvise(p, mapped, MADV_HUGEPAGE);
  return std::unique_ptr<DramSegment>(
      new DramSegment(static_cast<std::byte*>(p), size, mapped, false));
}

DramSegment::~DramSegment() { munmap(base_, mapped_); }

Result<std::span<std::byte>> DramSegment::Range(uint64_t offset,
                                                uint64_t length) const {
  if (offset > size_ || length > size_ - offset) {
    return Status(ErrorReason::kInvalidArgument,
                  "range [" + std::to_string(offset) + ", +" +
                      std::to_string(length) + ") is outside the " +
                      std::to_string(size_) + "-byte segment");
  }
  return std::span<std::byte>(base_ + offset, length);
}

}  // namespace mooncake_tier
