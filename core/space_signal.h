#pragma once

// Wakes callers waiting for DRAM to come free (puts held back by a full
// tier) whenever something may have freed some: a DRAM copy dropped, a
// writeback landed (its object turned clean, so evictable at once), a
// reader's lease released, a tier round done. A waiter notes generation()
// before it looks for room and waits only if nothing was notified since, so
// a notification between the look and the wait is never missed.
//
// Notify costs one atomic increment while nobody waits. Waits are bounded
// by a real-time timeout: callers re-check their own deadline (read from
// the engine's injectable Clock) after every wake, so a test on a
// ManualClock ends a wait by advancing the clock.
//
// Thread safety: thread-safe; its mutex is a leaf (nothing is called while
// it is held), so Notify may be called with any other lock held.

#include <atomic>
#include <cstdint>

#include "base/clock.h"
#include "base/mutex.h"

namespace mooncake_tier {

class SpaceSignal {
 public:
  uint64_t generation() const {
    return generation_.load(std::memory_order_seq_cst);
  }

  void Notify() {
    generation_.fetch_add(1, std::memory_order_seq_cst);
    if (waiters_.load(std::memory_order_seq_cst) == 0) return;
    MutexLock lock(&mu_);
    cv_.SignalAll();
  }

  // Returns once generation() differs from `seen` or `timeout` (real time)
  // passed.
  void WaitFor(uint64_t seen, Duration timeout) {
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    {
      MutexLock lock(&mu_);
      cv_.WaitFor(timeout, [&] { return generation() != seen; });
    }
    waiters_.fetch_sub(1, std::memory_order_seq_cst);
  }

 private:
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint32_t> waiters_{0};
  Mutex mu_;
  CondVar cv_{&mu_};
};

}  // namespace mooncake_tier
