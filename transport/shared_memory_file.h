#pragma once

// Memory that another process on this host may map: an anonymous memory
// file (memfd) named ShmFileName(random token), sized, sealed against
// resizing and mapped shared. It has no name in any file system, so a node
// killed with SIGKILL leaks nothing: the kernel frees it once the last
// descriptor and mapping (the node's, and those of clients that mapped it)
// are gone.
//
// A node's DRAM segment lives in one (node/dram_segment.h). An exporter,
// which is given only the segment's address, finds the file through
// OpenForExport: the process keeps a table of its live SharedMemoryFiles.
//
// Thread safety: the mapping is fixed for the object's lifetime; Create,
// the destructor and OpenForExport may run concurrently from any thread.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "mooncake_tier/status.h"
#include "transport/shm_locator.h"

namespace mooncake_tier {

class SharedMemoryFile {
 public:
  // `size` bytes. With `huge_pages`, 2 MiB hugetlb pages when the host has
  // enough reserved, else normal pages with transparent huge pages asked
  // for (they apply to shared memory when the host allows it). INVALID_SIZE
  // for 0; NO_SPACE or IO_ERROR (with the errno text) when the kernel
  // refuses the file or the mapping.
  static Result<std::unique_ptr<SharedMemoryFile>> Create(uint64_t size,
                                                          bool huge_pages);
  // Unmaps and closes. Processes that mapped the file keep their mapping.
  ~SharedMemoryFile();
  SharedMemoryFile(const SharedMemoryFile&) = delete;
  SharedMemoryFile& operator=(const SharedMemoryFile&) = delete;

  std::byte* base() const { return base_; }
  uint64_t size() const { return size_; }
  // The file's size: `size` rounded up to the page size used.
  uint64_t mapped_size() const { return mapped_; }
  bool hugetlb() const { return hugetlb_; }
  const ShmToken& token() const { return token_; }

  // A new open file description of the SharedMemoryFile of this process
  // that holds [base, base + size), and the locator fields that describe
  // it (boot id, pid, the new descriptor, token, inode, file size and the
  // offset of `base`). The caller owns the descriptor. NOT_APPLICABLE when
  // no such file holds the whole range; IO_ERROR when it cannot be opened.
  struct Opened {
    int fd = -1;
    ShmLocator locator;
  };
  static Result<Opened> OpenForExport(const std::byte* base, uint64_t size);

 private:
  SharedMemoryFile(int fd, std::byte* base, uint64_t size, uint64_t mapped,
                   bool hugetlb, ShmToken token, uint64_t inode);

  const int fd_;
  std::byte* const base_;
  const uint64_t size_;
  const uint64_t mapped_;
  const bool hugetlb_;
  const ShmToken token_;
  const uint64_t inode_;
};

}  // namespace mooncake_tier
