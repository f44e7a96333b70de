#pragma once

// A fixed-bucket latency histogram for the storage node's I/O (SSD store
// batches), kept as relaxed atomics so recording never takes a lock and a
// snapshot can be read from a scrape thread at any time. The metrics layer
// (metrics/node_metrics.cc) turns a snapshot into a Prometheus histogram.
//
// Thread safety: thread-safe and lock-free; a snapshot taken during traffic
// may be a few samples out of step between fields, never torn within one.

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace mooncake_tier {

// Upper bounds of the buckets; a last, unbounded bucket follows. Chosen for
// SSD batches: a page-cache hit is microseconds, an io_uring batch on a
// loaded device milliseconds, a stalled device seconds.
inline constexpr std::array<std::chrono::microseconds, 16> kIoLatencyBounds = {
    std::chrono::microseconds(10),      std::chrono::microseconds(25),
    std::chrono::microseconds(50),      std::chrono::microseconds(100),
    std::chrono::microseconds(250),     std::chrono::microseconds(500),
    std::chrono::microseconds(1000),    std::chrono::microseconds(2500),
    std::chrono::microseconds(5000),    std::chrono::microseconds(10000),
    std::chrono::microseconds(25000),   std::chrono::microseconds(50000),
    std::chrono::microseconds(100000),  std::chrono::microseconds(250000),
    std::chrono::microseconds(1000000), std::chrono::microseconds(2500000)};

// A point-in-time copy.
struct LatencySnapshot {
  uint64_t count = 0;
  uint64_t sum_ns = 0;
  // Samples per bucket (not cumulative): bucket i counts latencies
  // <= kIoLatencyBounds[i] and above the previous bound; the last bucket the
  // rest.
  std::array<uint64_t, kIoLatencyBounds.size() + 1> buckets{};
};

class LatencyHistogram {
 public:
  // A negative latency (a clock that stepped back) counts as zero.
  void Record(std::chrono::nanoseconds latency) {
    constexpr auto r = std::memory_order_relaxed;
    const int64_t ns = latency.count() < 0 ? 0 : latency.count();
    size_t bucket = 0;
    while (bucket < kIoLatencyBounds.size() &&
           std::chrono::nanoseconds(ns) > kIoLatencyBounds[bucket]) {
      ++bucket;
    }
    buckets_[bucket].fetch_add(1, r);
    sum_ns_.fetch_add(static_cast<uint64_t>(ns), r);
    count_.fetch_add(1, r);
  }

  LatencySnapshot Snapshot() const {
    constexpr auto r = std::memory_order_relaxed;
    LatencySnapshot s;
    s.count = count_.load(r);
    s.sum_ns = sum_ns_.load(r);
    for (size_t i = 0; i < buckets_.size(); ++i)
      s.buckets[i] = buckets_[i].load(r);
    return s;
  }

 private:
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
  std::array<std::atomic<uint64_t>, kIoLatencyBounds.size() + 1> buckets_{};
};

}  // namespace mooncake_tier
