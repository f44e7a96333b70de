#pragma once

// Offset/extent allocator for one DRAM segment. Hands out aligned byte ranges
// of [0, capacity); the caller maps offsets onto the segment's base address.
// Best fit over a size-ordered index of free extents: Allocate and Free are
// O(log n) in the number of free extents; Free coalesces with both
// neighbours, so free space never fragments into adjacent pieces.
//
// Thread safety: not thread-safe; the owner (NodeRegistry) serialises calls.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace mooncake_tier {

class SpaceAllocator {
 public:
  // REQUIRES: alignment is a power of two; capacity > 0. Capacity is rounded
  // down to a multiple of alignment.
  explicit SpaceAllocator(uint64_t capacity, uint64_t alignment = 64);

  SpaceAllocator(const SpaceAllocator&) = delete;
  SpaceAllocator& operator=(const SpaceAllocator&) = delete;

  // Offset of a free range of at least `size` bytes (rounded up to the
  // alignment), or nullopt when no free extent is large enough or size is 0.
  std::optional<uint64_t> Allocate(uint64_t size);

  // Takes the range [offset, offset + size) (size rounded up) if it lies
  // wholly in one free extent: a placement known from elsewhere (a node's
  // record of what it holds) rebuilt into a fresh allocator. Returns false
  // (and changes nothing) when any of it is taken, out of bounds or
  // misaligned.
  bool Reserve(uint64_t offset, uint64_t size);

  // Returns the range that Allocate(size) returned at `offset`.
  // Returns false (and changes nothing) for a range that is not currently
  // allocated as a whole, e.g. a double free.
  bool Free(uint64_t offset, uint64_t size);

  uint64_t capacity() const { return capacity_; }
  uint64_t allocated_bytes() const { return allocated_; }
  uint64_t free_bytes() const { return capacity_ - allocated_; }
  uint64_t largest_free_extent() const;
  size_t free_extent_count() const { return by_offset_.size(); }
  // Size actually reserved for a request of `size` bytes.
  uint64_t RoundUp(uint64_t size) const {
    return (size + alignment_ - 1) & ~(alignment_ - 1);
  }

 private:
  void InsertFree(uint64_t offset, uint64_t size);
  void EraseFree(std::map<uint64_t, uint64_t>::iterator it);

  const uint64_t alignment_;
  const uint64_t capacity_;
  uint64_t allocated_ = 0;
  std::map<uint64_t, uint64_t> by_offset_;           // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> by_size_;  // (size, offset)
};

}  // namespace mooncake_tier
