#pragma once

// The file a daemon writes once it is serving, so that scripts and tests
// wait for readiness instead of sleeping.
//
// Contents are "key=value" lines (pid, mode, master_address, and for a
// node node_name and node_id). The file appears atomically: it is written
// under a temporary name in the same directory, flushed, and renamed, so a
// reader never sees it half written. A stale file from an earlier run is
// removed when the object is created, and the file is removed again by
// Withdraw (at the start of a shutdown), so its presence means "serving".
//
// Thread safety: not thread-safe; one owner.

#include <string>
#include <utility>
#include <vector>

#include "mooncake_tier/status.h"

namespace mooncake_tier::daemon {

class ReadyFile {
 public:
  // An empty `path` makes every call a no-op (no ready file wanted).
  explicit ReadyFile(std::string path);
  ReadyFile(const ReadyFile&) = delete;
  ReadyFile& operator=(const ReadyFile&) = delete;

  // Writes the file atomically. IO_ERROR (naming the path) when it cannot.
  Status Publish(
      const std::vector<std::pair<std::string, std::string>>& fields);
  // Removes the file if this object published it.
  void Withdraw();

  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  bool published_ = false;
};

}  // namespace mooncake_tier::daemon
