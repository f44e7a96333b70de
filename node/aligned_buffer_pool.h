#pragma once

// Keeps released AlignedBuffers for reuse. Fresh memory costs a page fault
// per 4 KiB on first touch, several times the cost of the copy that fills
// it, so the SSD data path (write staging, read bounce buffers) recycles its
// buffers through a pool bounded in bytes.
//
// Thread safety: safe to use from any number of threads.

#include <cstddef>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "node/aligned_buffer.h"

namespace mooncake_tier {

class AlignedBufferPool {
 public:
  // Holds at most `max_cached_bytes` of released buffers.
  explicit AlignedBufferPool(size_t max_cached_bytes)
      : max_cached_bytes_(max_cached_bytes) {}

  // A 4096-aligned buffer of at least `size` bytes; contents unspecified.
  AlignedBuffer Get(size_t size) {
    {
      MutexLock lock(&mu_);
      size_t best = free_.size();
      for (size_t i = 0; i < free_.size(); ++i) {
        if (free_[i].size() >= size &&
            (best == free_.size() || free_[i].size() < free_[best].size())) {
          best = i;
        }
      }
      if (best != free_.size()) {
        AlignedBuffer buffer = std::move(free_[best]);
        free_[best] = std::move(free_.back());
        free_.pop_back();
        cached_bytes_ -= buffer.size();
        return buffer;
      }
    }
    return AlignedBuffer(size);
  }

  // Gives a buffer back; dropped if the pool is full.
  void Put(AlignedBuffer buffer) {
    if (buffer.size() == 0) return;
    MutexLock lock(&mu_);
    if (cached_bytes_ + buffer.size() > max_cached_bytes_) return;
    cached_bytes_ += buffer.size();
    free_.push_back(std::move(buffer));
  }

 private:
  const size_t max_cached_bytes_;
  Mutex mu_;
  std::vector<AlignedBuffer> free_ ABSL_GUARDED_BY(mu_);
  size_t cached_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace mooncake_tier
