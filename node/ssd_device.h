#pragma once

// The I/O seam of the SSD store: a directory of data files with batched
// positional reads and writes. UringSsdDevice is the real one (io_uring,
// optional O_DIRECT); MemorySsdDevice is its in-memory twin for tests. The
// store never touches the file system except through these interfaces (as
// leveldb's Env, CacheLib's navy Device).
//
// Thread safety: implementations are safe to use from several threads at
// once, both the device and each SsdFile. Concurrent writes to overlapping
// ranges of one file leave unspecified bytes there; callers avoid them.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

// One positional transfer of a batch.
struct IoRequest {
  uint64_t offset = 0;
  void* buf = nullptr;
  size_t len = 0;
  // Out: bytes transferred, or -errno. A read returns fewer than `len` bytes
  // only when it reaches the end of the file.
  ssize_t result = 0;
};

class SsdFile {
 public:
  virtual ~SsdFile() = default;

  // Reads every request, submitted together so that the device sees them at
  // once. Fills each `result`. Returns IO_ERROR if any request failed (the
  // others are still done), INVALID_ARGUMENT if a request breaks the
  // device's alignment rule. A short read at the end of the file is not an
  // error.
  // REQUIRES: with direct_io, every offset, len and buf is a multiple of
  // the device's alignment().
  virtual Status ReadBatch(std::span<IoRequest> requests) = 0;

  // Writes every request in full (short writes are resumed), extending the
  // file as needed. Same error and alignment rules as ReadBatch, except
  // that a full file system is NO_SPACE (result -ENOSPC), not IO_ERROR.
  virtual Status WriteBatch(std::span<IoRequest> requests) = 0;

  // Makes every write that completed before the call durable.
  virtual Status Sync() = 0;

  // Sets the file's size; bytes past `size` are gone.
  virtual Status Truncate(uint64_t size) = 0;

  virtual Result<uint64_t> Size() const = 0;
};

class SsdDevice {
 public:
  virtual ~SsdDevice() = default;

  // Opens the data file `name` (a plain file name, no '/'). With `create`,
  // a missing file is created empty; without, a missing file is
  // OBJECT_NOT_FOUND. The file stays usable after Remove(name) for as long
  // as the returned handle lives (POSIX unlink semantics).
  virtual Result<std::unique_ptr<SsdFile>> Open(const std::string& name,
                                                bool create) = 0;

  // Names of the files in the device, in no particular order.
  virtual Result<std::vector<std::string>> List() const = 0;

  // Deletes `name`; OBJECT_NOT_FOUND if it does not exist.
  virtual Status Remove(const std::string& name) = 0;

  // Makes creations and removals of files durable (fsync of the directory).
  virtual Status Sync() = 0;

  // The room of the file system holding the files, as an unprivileged
  // writer sees it: UINT64_MAX in both fields when there is no such limit.
  struct Space {
    uint64_t free = UINT64_MAX;   // what it can still give the files
    uint64_t total = UINT64_MAX;  // all it can hold (used and free)
  };
  virtual Result<Space> FreeSpace() const = 0;

  // True when I/O bypasses the page cache; alignment() then applies.
  virtual bool direct_io() const = 0;

  // Offsets, lengths and buffer addresses of I/O must be multiples of this
  // (1 when there is no rule).
  virtual uint64_t alignment() const = 0;
};

}  // namespace mooncake_tier
