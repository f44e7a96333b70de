#pragma once

// Keeps a repeating log line to a bounded rate: Allow() says whether this
// occurrence may be logged (the first one, then at most one per interval),
// and how many were held back since the last one that was, so the line can
// say "(N more since)". A full disk or a dead master must not turn into a
// log flood.
//
// Thread safety: thread-safe.

#include <chrono>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace mooncake_tier {

class LogLimiter {
 public:
  explicit LogLimiter(
      std::chrono::steady_clock::duration interval = std::chrono::seconds(10))
      : interval_(interval) {}

  // True when this occurrence may be logged; *suppressed then holds the
  // occurrences held back since the last logged one.
  bool Allow(uint64_t* suppressed) {
    const auto now = std::chrono::steady_clock::now();
    MutexLock lock(&mu_);
    if (logged_once_ && now - last_ < interval_) {
      ++held_back_;
      return false;
    }
    logged_once_ = true;
    last_ = now;
    *suppressed = held_back_;
    held_back_ = 0;
    return true;
  }

 private:
  const std::chrono::steady_clock::duration interval_;
  Mutex mu_;
  bool logged_once_ ABSL_GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point last_ ABSL_GUARDED_BY(mu_);
  uint64_t held_back_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace mooncake_tier
