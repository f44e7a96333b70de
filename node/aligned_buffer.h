#pragma once

// A heap buffer whose start and size are multiples of an alignment, as
// O_DIRECT I/O needs. Its contents start uninitialised (callers fill it by a
// read or an encode; zeroing megabytes per I/O would cost as much as a copy).
// Move-only.
//
// Thread safety: none; owned by one thread at a time.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <span>
#include <utility>

namespace mooncake_tier {

class AlignedBuffer {
 public:
  static constexpr size_t kDefaultAlignment = 4096;

  AlignedBuffer() = default;
  // `size` is rounded up to a multiple of `alignment` (a power of two).
  explicit AlignedBuffer(size_t size, size_t alignment = kDefaultAlignment)
      : size_(RoundUp(size, alignment)) {
    if (size_ == 0) return;
    data_ = static_cast<std::byte*>(std::aligned_alloc(alignment, size_));
    if (data_ == nullptr) throw std::bad_alloc();
  }
  ~AlignedBuffer() { std::free(data_); }

  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    if (this != &other) {
      std::free(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<std::byte> span() { return {data_, size_}; }
  std::span<const std::byte> span() const { return {data_, size_}; }

  static constexpr size_t RoundUp(size_t n, size_t alignment) {
    return (n + alignment - 1) & ~(alignment - 1);
  }

 private:
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace mooncake_tier
