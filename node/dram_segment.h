#pragma once

// The DRAM a storage node contributes to L1: one mapping whose ranges the
// master hands out and clients read and write remotely.
//
// By default the mapping is shared memory (transport/shared_memory_file.h:
// an anonymous memory file with a random name), so that a client on the
// same host can map the segment and copy with memcpy instead of going
// through the network stack; the UCX exporter offers it to such clients
// (docs/design/ucx-transport.md). Where the kernel refuses that file, or
// when asked not to share, it is a private anonymous mapping as before.
//
// Behind the segment a node may keep a staging tail (`staging_bytes`): the
// same mapping (and shared-memory file) continues past size(), from a
// 4096-aligned offset, with memory the master never allocates; the node
// stages SSD-tier reads for same-host clients there. size() and Range()
// cover the DRAM part only.
//
// Thread safety: the mapping is fixed for the segment's lifetime; callers
// coordinate access to bytes through the master's replica states and pins.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

class PagePopulator;
class SharedMemoryFile;

class DramSegment {
 public:
  // Maps `size` bytes, then a staging tail of `staging_bytes` (rounded up
  // to 4096) from the next 4096-aligned offset, shared memory when
  // `shareable` and the kernel allows it. With `huge_pages`, tries 2 MiB
  // huge pages first and falls back to normal pages (asking for
  // transparent huge pages). INVALID_SIZE for a size of 0 or a total that
  // overflows, NO_SPACE when the mapping fails.
  static Result<std::unique_ptr<DramSegment>> Create(
      uint64_t size, bool huge_pages, bool shareable = true,
      uint64_t staging_bytes = 0);
  ~DramSegment();
  DramSegment(const DramSegment&) = delete;
  DramSegment& operator=(const DramSegment&) = delete;

  std::byte* base() const { return base_; }
  // The DRAM part: what the master allocates.
  uint64_t size() const { return size_; }
  // The staging tail, [staging_offset(), total_size()); empty when none.
  uint64_t staging_offset() const { return total_size_ - staging_bytes_; }
  uint64_t staging_bytes() const { return staging_bytes_; }
  // The DRAM part, its alignment padding and the staging tail: what the
  // node exports.
  uint64_t total_size() const { return total_size_; }
  bool huge_pages() const { return huge_pages_; }
  // Whether the segment lives in shared memory another process may map.
  bool shared() const { return shared_ != nullptr; }

  // The range [offset, offset + length); INVALID_ARGUMENT when outside.
  Result<std::span<std::byte>> Range(uint64_t offset, uint64_t length) const;

  // Faults the DRAM part in from a background thread (base/page_populate.h),
  // so that puts do not pay for allocating and zeroing its pages, and the
  // memory is the node's (its cgroup's) before any client touches it.
  // Logs when done. Safe while the segment is in use; at most once.
  void PopulateInBackground();

 private:
  DramSegment(std::byte* base, uint64_t size, uint64_t total_size,
              uint64_t staging_bytes, uint64_t mapped, bool huge,
              std::unique_ptr<SharedMemoryFile> shared);

  std::byte* const base_;
  const uint64_t size_;
  const uint64_t total_size_;
  const uint64_t staging_bytes_;
  const uint64_t mapped_;  // size rounded up to the page size used
  const bool huge_pages_;
  // Owns the mapping when set; otherwise the destructor unmaps it.
  const std::unique_ptr<SharedMemoryFile> shared_;
  // Stopped first in the destructor, before the mapping goes.
  std::unique_ptr<PagePopulator> populator_;
};

}  // namespace mooncake_tier
