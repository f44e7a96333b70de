#pragma once

// A store for the client-side scenarios: either one already running (the
// master's address is given) or a `mooncake-tierd standalone` process the
// benchmark starts itself (--spawn) on a free loopback port, with its SSD
// directory in a temp dir, stopped with SIGTERM (and its files removed)
// when the object goes away.
//
// Thread safety: not thread-safe; create and destroy on one thread.

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "mooncake_tier/status.h"

namespace mooncake_tier::bench {

struct SpawnOptions {
  std::string tierd_path;   // the mooncake-tierd binary
  std::string scratch_dir;  // parent of the temp dir
  // Extra flags for `mooncake-tierd standalone` (DRAM size, offload mode).
  std::vector<std::string> flags;
};

class SpawnedStore {
 public:
  // Starts the daemon and waits (up to 60 s) until it reports ready.
  // UNAVAILABLE with the daemon's last log lines when it does not come up.
  static Result<std::unique_ptr<SpawnedStore>> Start(
      const SpawnOptions& options);
  ~SpawnedStore();

  // The master's "127.0.0.1:port".
  const std::string& master() const { return master_; }
  // The admin API's "127.0.0.1:port" (from the ready file).
  const std::string& admin() const { return admin_; }

 private:
  SpawnedStore(pid_t pid, std::string dir, std::string master)
      : pid_(pid), dir_(std::move(dir)), master_(std::move(master)) {}
  std::string LogTail() const;

  const pid_t pid_;
  const std::string dir_;
  const std::string master_;
  std::string admin_;
};

// The mooncake-tierd built beside this benchmark, or "" if none is known.
std::string DefaultTierdPath();

}  // namespace mooncake_tier::bench
