#pragma once

// Exclusive use of a node's SSD directory by one process.
//
// The SSD store assumes it is the only writer of its data files; two nodes
// started on the same directory (an easy mistake with the default
// --ssd-dir) would corrupt each other's files. The daemon therefore takes
// an advisory lock (flock) on "<dir>/LOCK" before it opens the store and
// holds it until the store is closed. The kernel drops the lock when the
// process dies, so a `kill -9` never leaves the directory locked. The lock
// file holds the owner's pid for the error message; the store ignores files
// that are not its data files.
//
// Thread safety: not thread-safe; one owner.

#include <memory>
#include <string>

#include "mooncake_tier/status.h"

namespace mooncake_tier::daemon {

class SsdDirLock {
 public:
  // Creates `directory` (and its parents) if missing and locks it.
  // UNAVAILABLE when another process holds it (naming its pid), IO_ERROR
  // when the directory cannot be created or the lock file opened.
  static Result<std::unique_ptr<SsdDirLock>> Acquire(
      const std::string& directory);
  // Releases the lock.
  ~SsdDirLock();
  SsdDirLock(const SsdDirLock&) = delete;
  SsdDirLock& operator=(const SsdDirLock&) = delete;

  static constexpr const char* kFileName = "LOCK";

 private:
  explicit SsdDirLock(int fd) : fd_(fd) {}
  const int fd_;
};

}  // namespace mooncake_tier::daemon
