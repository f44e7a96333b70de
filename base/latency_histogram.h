#pragma once

// A fixed-bucket latency histogram kept as relaxed atomics, so recording
// never takes a lock and a snapshot can be read from a scrape thread at any
// time. The owner chooses the bucket bounds (an SSD batch and a metadata
// RPC live on different scales); the metrics layer turns a snapshot into a
// Prometheus histogram. Used by the SSD store (node/ssd_store.h) and the RPC
// and admin request recorder (rpc/call_recorder.h).
//
// Thread safety: thread-safe and lock-free; a snapshot taken during traffic
// may be a few samples out of step between fields, never torn within one.

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace mooncake_tier {

// Upper bounds of the buckets, ascending; a last, unbounded bucket follows.
inline constexpr size_t kLatencyBoundCount = 16;
using LatencyBounds = std::array<std::chrono::nanoseconds, kLatencyBoundCount>;

// A point-in-time copy.
struct LatencySnapshot {
  uint64_t count = 0;
  uint64_t sum_ns = 0;
  uint64_t max_ns = 0;
  // Samples per bucket (not cumulative): bucket i counts latencies <=
  // bounds[i] and above the previous bound; the last bucket the rest.
  std::array<uint64_t, kLatencyBoundCount + 1> buckets{};
};

class LatencyHistogram {
 public:
  // REQUIRES: `bounds` ascending.
  explicit LatencyHistogram(const LatencyBounds& bounds) : bounds_(bounds) {}
  LatencyHistogram(const LatencyHistogram&) = delete;
  LatencyHistogram& operator=(const LatencyHistogram&) = delete;

  const LatencyBounds& bounds() const { return bounds_; }

  // A negative latency (a clock that stepped back) counts as zero.
  void Record(std::chrono::nanoseconds latency) {
    constexpr auto r = std::memory_order_relaxed;
    const std::chrono::nanoseconds clamped =
        std::max(latency, std::chrono::nanoseconds(0));
    const auto ns = static_cast<uint64_t>(clamped.count());
    const size_t bucket = static_cast<size_t>(
        std::lower_bound(bounds_.begin(), bounds_.end(), clamped) -
        bounds_.begin());
    buckets_[bucket].fetch_add(1, r);
    sum_ns_.fetch_add(ns, r);
    uint64_t max = max_ns_.load(r);
    while (ns > max && !max_ns_.compare_exchange_weak(max, ns, r)) {
    }
    count_.fetch_add(1, r);
  }

  LatencySnapshot Snapshot() const {
    constexpr auto r = std::memory_order_relaxed;
    LatencySnapshot s;
    s.count = count_.load(r);
    s.sum_ns = sum_ns_.load(r);
    s.max_ns = max_ns_.load(r);
    for (size_t i = 0; i < buckets_.size(); ++i) {
      s.buckets[i] = buckets_[i].load(r);
    }
    return s;
  }

 private:
  const LatencyBounds bounds_;
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
  std::atomic<uint64_t> max_ns_{0};
  std::array<std::atomic<uint64_t>, kLatencyBoundCount + 1> buckets_{};
};

}  // namespace mooncake_tier
