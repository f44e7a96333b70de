#include "node/dram_segment.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/byte_units.h"
#include "base/page_populate.h"
#include "spdlog/spdlog.h"
#include "transport/shared_memory_file.h"

namespace mooncake_tier {
namespace {

constexpr uint64_t kHugePage = 2ull << 20;
constexpr uint64_t kPage = 4096;

uint64_t RoundUp(uint64_t n, uint64_t unit) {
  return (n + unit - 1) / unit * unit;
}

}  // namespace

Result<std::unique_ptr<DramSegment>> DramSegment::Create(
    uint64_t dram_size, bool huge_pages, bool shareable,
    uint64_t staging_bytes) {
  if (dram_size == 0) {
    return Status(ErrorReason::kInvalidSize, "segment size is 0");
  }
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  if (dram_size > kLimit || staging_bytes > kLimit) {
    return Status(ErrorReason::kInvalidSize,
                  "segment or staging size too large");
  }
  // The staging tail starts page-aligned, so O_DIRECT reads can land in it.
  const uint64_t staging = RoundUp(staging_bytes, kPage);
  const uint64_t size =
      staging == 0 ? dram_size : RoundUp(dram_size, kPage) + staging;
  auto make = [&](std::byte* base, uint64_t mapped, bool huge,
                  std::unique_ptr<SharedMemoryFile> shared) {
    return std::unique_ptr<DramSegment>(new DramSegment(
        base, dram_size, size, staging, mapped, huge, std::move(shared)));
  };
  if (shareable) {
    Result<std::unique_ptr<SharedMemoryFile>> file =
        SharedMemoryFile::Create(size, huge_pages);
    if (file.ok()) {
      std::byte* base = (*file)->base();
      const uint64_t mapped = (*file)->mapped_size();
      const bool huge = (*file)->hugetlb();
      if (huge_pages && !huge) {
        spdlog::warn(
            "DRAM segment: no {} MiB of huge pages; using normal "
            "pages with transparent huge pages",
            (RoundUp(size, kHugePage)) >> 20);
      }
      return make(base, mapped, huge, std::move(*file));
    }
    spdlog::warn(
        "DRAM segment: no shared memory ({}); clients on this host "
        "will use the network path",
        file.status().message());
  }
  if (huge_pages) {
    const uint64_t mapped = RoundUp(size, kHugePage);
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (p != MAP_FAILED) {
      return make(static_cast<std::byte*>(p), mapped, true, nullptr);
    }
    spdlog::warn(
        "DRAM segment: no {} MiB of huge pages ({}); using normal "
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
  return make(static_cast<std::byte*>(p), mapped, false, nullptr);
}

DramSegment::DramSegment(std::byte* base, uint64_t size, uint64_t total_size,
                         uint64_t staging_bytes, uint64_t mapped, bool huge,
                         std::unique_ptr<SharedMemoryFile> shared)
    : base_(base),
      size_(size),
      total_size_(total_size),
      staging_bytes_(staging_bytes),
      mapped_(mapped),
      huge_pages_(huge),
      shared_(std::move(shared)) {}

DramSegment::~DramSegment() {
  populator_.reset();  // its thread touches the mapping
  if (shared_ == nullptr) munmap(base_, mapped_);
}

void DramSegment::PopulateInBackground() {
  if (populator_ != nullptr) return;
  populator_ = std::make_unique<PagePopulator>();
  populator_->Add(base_, size_, PagePopulator::Mode::kAllocate,
                  [size = size_](uint64_t bytes, double seconds) {
                    if (bytes < size) {
                      spdlog::warn(
                          "DRAM segment: populated {} of {} ahead of use "
                          "(the rest faults in as puts first touch it)",
                          HumanBytes(bytes, ByteUnit::kTiB),
                          HumanBytes(size, ByteUnit::kTiB));
                    } else {
                      spdlog::info("DRAM segment: {} populated in {:.1f} s",
                                   HumanBytes(bytes, ByteUnit::kTiB), seconds);
                    }
                  });
}

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
