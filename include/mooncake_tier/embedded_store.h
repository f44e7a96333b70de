#pragma once

// The whole store inside the calling process: a master and one storage
// node (DRAM segment plus an optional SSD directory) with background work
// on its own threads. What standalone mode runs, and the quickest way to
// use mooncake-tier from C++.
//
// Thread safety: clients may be used from many threads.

#include <memory>
#include <string>

#include "mooncake_tier/client.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

struct EmbeddedStoreOptions {
  // DRAM tier (L1) size. Default: 256 MiB.
  uint64_t dram_bytes = 256ull << 20;
  // SSD tier (L2) directory; empty means no SSD tier. Keys never become
  // file names. Default: empty.
  std::string ssd_dir;
  // SSD tier capacity. Default: 4 GiB.
  uint64_t ssd_bytes = 4ull << 30;
  // Bypass the page cache for SSD I/O. Default: false.
  bool direct_io = false;
  // "off" | "write_through" | "on_evict". Default: "on_evict".
  std::string offload_mode = "on_evict";
  // DRAM eviction starts at this use ratio. Default: 0.90.
  double eviction_high_watermark = 0.90;
  // ... and frees this share of capacity. Default: 0.05.
  double eviction_ratio = 0.05;
};

class EmbeddedStore {
 public:
  // INVALID_ARGUMENT for bad options; IO_ERROR when the SSD directory
  // cannot be used.
  static Result<std::unique_ptr<EmbeddedStore>> Open(
      const EmbeddedStoreOptions& options);
  ~EmbeddedStore();

  // A client owned by the store.
  Client& client();
  // Another client (its own identity); must not outlive the store.
  std::unique_ptr<Client> NewClient();

 private:
  struct Impl;
  explicit EmbeddedStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mooncake_tier
