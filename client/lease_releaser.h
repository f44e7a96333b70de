#pragma once

// Ends readers' leases once their copies are done, off the caller's path:
// a get queues its releases here and returns; a thread sends them to the
// master in batches (one ReleaseLeases call for everything queued, at most
// every `linger`). A lease whose release is late or lost only lasts until
// its expiry (the master's lease_ttl), which is what that TTL is for.
//
// The queue is bounded: past `max_queued` releases the oldest are dropped
// (and counted); they expire instead.
//
// Thread safety: thread-safe. The destructor sends what is queued (one
// last call, bounded by the master's deadline) and joins the thread.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "protocol/master_api.h"

namespace mooncake_tier {

class LeaseReleaser {
 public:
  struct Options {
    // How long releases wait to be sent with others. Default: 2 ms.
    Duration linger = std::chrono::milliseconds(2);
    // Releases per ReleaseLeases call, at most. Default: 1024.
    size_t max_batch = 1024;
    // Releases waiting to be sent, at most. Default: 65536.
    size_t max_queued = 65536;
  };

  // `master` must outlive this object.
  explicit LeaseReleaser(MasterApi* master) : LeaseReleaser(master, {}) {}
  LeaseReleaser(MasterApi* master, Options options);
  ~LeaseReleaser();
  LeaseReleaser(const LeaseReleaser&) = delete;
  LeaseReleaser& operator=(const LeaseReleaser&) = delete;

  // Queues the releases; never waits for the master.
  void Release(std::vector<LeaseRelease> releases);

  // Releases sent (in calls the master answered), and dropped (queue full
  // or a failed call: those leases expire instead).
  uint64_t sent() const;
  uint64_t dropped() const;

 private:
  void Loop();

  MasterApi* const master_;
  const Options options_;
  mutable Mutex mu_;
  CondVar cv_{&mu_};
  std::deque<LeaseRelease> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace mooncake_tier
