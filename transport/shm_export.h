#pragma once

// The node's side of one segment shared with same-host clients: its own
// descriptor of the segment's SharedMemoryFile (the one the locator names)
// and an open-file-description read lock on the file's first byte, held
// for as long as the segment is exported.
//
// The lock is how a client that mapped the segment learns, with one
// fcntl, that the segment is no longer served: the kernel drops it when the
// exporter withdraws the segment (destructor) and when the node process
// dies, kill -9 included (ShmFileIsExported). Clients never take locks on
// the file; they only ask whether a conflicting one exists.
//
// Thread safety: immutable after Create.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "mooncake_tier/status.h"
#include "transport/shm_locator.h"

namespace mooncake_tier {

class ShmExport {
 public:
  // NOT_APPLICABLE when [base, base + size) is not in a SharedMemoryFile of
  // this process or this host has no boot id; IO_ERROR when the file cannot
  // be opened or locked.
  static Result<std::unique_ptr<ShmExport>> Create(const std::byte* base,
                                                   uint64_t size);
  // Closes the descriptor, which releases the lock.
  ~ShmExport();
  ShmExport(const ShmExport&) = delete;
  ShmExport& operator=(const ShmExport&) = delete;

  const ShmLocator& locator() const { return locator_; }

 private:
  ShmExport(int fd, ShmLocator locator) : fd_(fd), locator_(locator) {}

  const int fd_;
  const ShmLocator locator_;
};

// Whether some process still holds the export lock on the file open as
// `fd` (see above). IO_ERROR when the kernel cannot say.
Result<bool> ShmFileIsExported(int fd);

}  // namespace mooncake_tier
