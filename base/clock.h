#pragma once

// Time source of the engine. Every timeout (leases, puts, tasks, node expiry,
// group fill) is measured against a Clock so tests drive time by hand.
//
// Thread safety: implementations are safe to call from any thread.

#include <atomic>
#include <chrono>

namespace mooncake_tier {

using Duration = std::chrono::nanoseconds;
using TimePoint = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

// Monotonic wall time.
class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  // A process-wide instance; never destroyed.
  static SystemClock* Default();
};

// Time that moves only when told to. Starts at an arbitrary non-zero point so
// that "zero" never looks like a valid deadline.
class ManualClock final : public Clock {
 public:
  ManualClock() : now_ns_(std::chrono::hours(1).count() * 1'000'000'000LL) {}
  TimePoint Now() const override {
    return TimePoint(Duration(now_ns_.load(std::memory_order_acquire)));
  }
  void Advance(Duration d) {
    now_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
  }

 private:
  std::atomic<int64_t> now_ns_;
};

// A wait until `until` on an engine clock, bounded by as much real time:
// a wait on a test's ManualClock ends when the test advances it, or when
// that much real time has passed, whichever comes first; on the system
// clock both are the same moment.
class RealDeadline {
 public:
  RealDeadline(TimePoint now, TimePoint until)
      : end_(until <= now ? std::chrono::steady_clock::time_point::min()
                          : std::chrono::steady_clock::now() + (until - now)) {}
  bool passed() const { return std::chrono::steady_clock::now() >= end_; }

 private:
  const std::chrono::steady_clock::time_point end_;
};

}  // namespace mooncake_tier
