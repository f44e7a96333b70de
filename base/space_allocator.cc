#include "base/space_allocator.h"

#include <iterator>

namespace mooncake_tier {

SpaceAllocator::SpaceAllocator(uint64_t capacity, uint64_t alignment)
    : alignment_(alignment), capacity_(capacity & ~(alignment - 1)) {
  if (capacity_ > 0) InsertFree(0, capacity_);
}

void SpaceAllocator::InsertFree(uint64_t offset, uint64_t size) {
  by_offset_.emplace(offset, size);
  by_size_.emplace(size, offset);
}

void SpaceAllocator::EraseFree(std::map<uint64_t, uint64_t>::iterator it) {
  by_size_.erase({it->second, it->first});
  by_offset_.erase(it);
}

std::optional<uint64_t> SpaceAllocator::Allocate(uint64_t size) {
  if (size == 0 || size > capacity_) return std::nullopt;
  const uint64_t need = RoundUp(size);
  // Best fit: the smallest extent that holds the request; ties go to the
  // lowest offset, which keeps allocations packed towards the start.
  auto fit = by_size_.lower_bound({need, 0});
  if (fit == by_size_.end()) return std::nullopt;
  const auto [extent_size, offset] = *fit;
  EraseFree(by_offset_.find(offset));
  if (extent_size > need) InsertFree(offset + need, extent_size - need);
  allocated_ += need;
  return offset;
}

bool SpaceAllocator::Reserve(uint64_t offset, uint64_t size) {
  const uint64_t len = RoundUp(size);
  if (len == 0 || offset % alignment_ != 0 || offset > capacity_ ||
      len > capacity_ - offset) {
    return false;
  }
  // The free extent that starts at or before `offset` must cover the range.
  auto it = by_offset_.upper_bound(offset);
  if (it == by_offset_.begin()) return false;
  it = std::prev(it);
  const auto [start, extent] = *it;
  if (start + extent < offset + len) return false;
  EraseFree(it);
  if (offset > start) InsertFree(start, offset - start);
  if (start + extent > offset + len) {
    InsertFree(offset + len, start + extent - offset - len);
  }
  allocated_ += len;
  return true;
}

bool SpaceAllocator::Free(uint64_t offset, uint64_t size) {
  const uint64_t len = RoundUp(size);
  if (len == 0 || offset % alignment_ != 0 || offset > capacity_ ||
      len > capacity_ - offset || len > allocated_) {
    return false;
  }
  // The range must not overlap any free extent.
  auto next = by_offset_.lower_bound(offset);
  if (next != by_offset_.end() && next->first < offset + len) return false;
  auto prev = next == by_offset_.begin() ? by_offset_.end() : std::prev(next);
  if (prev != by_offset_.end() && prev->first + prev->second > offset) {
    return false;
  }

  uint64_t start = offset;
  uint64_t end = offset + len;
  if (prev != by_offset_.end() && prev->first + prev->second == start) {
    start = prev->first;
    EraseFree(prev);
  }
  if (next != by_offset_.end() && next->first == end) {
    end += next->second;
    EraseFree(next);
  }
  InsertFree(start, end - start);
  allocated_ -= len;
  return true;
}

uint64_t SpaceAllocator::largest_free_extent() const {
  return by_size_.empty() ? 0 : by_size_.rbegin()->first;
}

}  // namespace mooncake_tier
