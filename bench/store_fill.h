#pragma once

// How full a spawned store's tiers are, from its admin API: one reading
// (ReadStoreFill), or readings every second while a replay runs
// (FillSampler), for the trace scenario's fill and write-amplification
// figures.
//
// Thread safety: ReadStoreFill is a pure call over HTTP; FillSampler runs
// a thread of its own and is used from one thread.

#include <cstdint>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "bench/remote_store.h"

namespace mooncake_tier::bench {

// What a spawned store's nodes say of their tiers, summed (`known` is
// false when it could not be read).
struct StoreFill {
  bool known = false;
  // The object bytes its SSD tier can hold as the master counts them (the
  // files' real room less record headers, padding and compaction room),
  // and those it holds.
  uint64_t ssd_object_capacity = 0;
  uint64_t ssd_used = 0;
  uint64_t dram_used = 0;
  uint64_t ssd_device_bytes_written = 0;  // by the SSD stores, all kinds
  // The master's promotion counters (ReadPromotionCounters), at the end.
  uint64_t promotion_attempts = 0;  // reads that found a unit only on SSD
  uint64_t promotions_completed = 0;
  uint64_t promotions_useful = 0;  // read from DRAM after they landed
  uint64_t promotion_admission_gated = 0;
  uint64_t promotion_watermark_gated = 0;
  uint64_t promotion_alloc_failed = 0;
};

// GET /api/v1/nodes of `store`'s admin server; unknown for a store the
// bench did not spawn.
StoreFill ReadStoreFill(const RemoteStore& store);
// The master's promotion counters into `fill` (GET /api/v1/status): read
// once, at the end of a run, not with every sample.
void ReadPromotionCounters(const RemoteStore& store, StoreFill& fill);

// Samples a spawned store's fill every second from construction to
// Finish(), which gives the tiers' use averaged over the second half of
// the samples (the replay fills both tiers early; the end alone would be
// one moment of a sawtooth), and the capacity and the bytes written as
// they are at the end.
class FillSampler {
 public:
  explicit FillSampler(const RemoteStore& store);
  ~FillSampler();
  FillSampler(const FillSampler&) = delete;
  FillSampler& operator=(const FillSampler&) = delete;

  StoreFill Finish();

 private:
  void Loop();
  void Stop();

  const RemoteStore& store_;
  Mutex mu_;
  CondVar wake_{&mu_};
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<StoreFill> samples_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace mooncake_tier::bench
