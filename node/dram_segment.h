#pragma once

// The DRAM a storage node contributes to L1: one anonymous mapping whose
// ranges the master hands out and clients read and write remotely.
//
// Thread safety: the mapping is fixed for the segment's lifetime; callers
// coordinate access to bytes through the master's replica states and pins.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

class DramSegment {
 public:
  // Maps `size` bytes. With `huge_pages`, tries 2 MiB huge pages first and
  // falls back to normal pages (asking for transparent huge pages).
  // INVALID_SIZE for 0, NO_SPACE when the mapping fails.
  static Result<std::unique_ptr<DramSegment>> Create(uint64_t size,
                                                     bool huge_pages);
  ~DramSegment();
  DramSegment(const DramSegment&) = delete;
  DramSegment& operator=(const DramSegment&) = delete;

  std::byte* base() const { return base_; }
  uint64_t size() const { return size_; }
  bool huge_pages() const { return huge_pages_; }

  // The range [offset, offset + length); INVALID_ARGUMENT when outside.
  Result<std::span<std::byte>> Range(uint64_t offset, uint64_t length) const;

 private:
  DramSegment(std::byte* base, uint64_t size, uint64_t mapped, bool huge)
      : base_(base), size_(size), mapped_(mapped), huge_pages_(huge) {}

  std::byte* const base_;
  const uint64_t size_;
  const uint64_t mapped_;  // size rounded up to the page size used
  const bool huge_pages_;
};

}  // namespace mooncake_tier
