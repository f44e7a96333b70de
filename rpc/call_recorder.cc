#include "rpc/call_recorder.h"

#include <algorithm>

namespace mooncake_tier::rpc {

namespace {

constexpr std::array<std::string_view, kGrpcCodeCount> kCodeNames = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};
constexpr int kUnknownCode = 2;

size_t BucketOf(Duration latency) {
  const auto it =
      std::lower_bound(kLatencyBounds.begin(), kLatencyBounds.end(), latency);
  return static_cast<size_t>(it - kLatencyBounds.begin());
}

}  // namespace

std::string_view GrpcCodeName(int code) {
  if (code < 0 || static_cast<size_t>(code) >= kGrpcCodeCount) {
    return kCodeNames[kUnknownCode];
  }
  return kCodeNames[code];
}

struct CallRecorder::Slot {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> latency_sum_ns{0};
  std::atomic<uint64_t> latency_max_ns{0};
  std::array<std::atomic<uint64_t>, kGrpcCodeCount> by_code{};
  std::array<std::atomic<uint64_t>, kLatencyBounds.size() + 1> buckets{};
};

CallRecorder::CallRecorder(std::vector<std::string> methods)
    : names_(std::move(methods)), slots_(new Slot[names_.size()]) {}

CallRecorder::~CallRecorder() = default;

void CallRecorder::Record(size_t method, int code, Duration latency) {
  if (method >= names_.size()) return;
  if (code < 0 || static_cast<size_t>(code) >= kGrpcCodeCount) {
    code = kUnknownCode;
  }
  const uint64_t ns =
      static_cast<uint64_t>(std::max<int64_t>(0, latency.count()));
  Slot& slot = slots_[method];
  constexpr auto kRelaxed = std::memory_order_relaxed;
  slot.calls.fetch_add(1, kRelaxed);
  slot.latency_sum_ns.fetch_add(ns, kRelaxed);
  uint64_t max = slot.latency_max_ns.load(kRelaxed);
  while (ns > max &&
         !slot.latency_max_ns.compare_exchange_weak(max, ns, kRelaxed)) {
  }
  slot.by_code[code].fetch_add(1, kRelaxed);
  slot.buckets[BucketOf(latency)].fetch_add(1, kRelaxed);
}

CallStats CallRecorder::Get(size_t method) const {
  CallStats stats;
  if (method >= names_.size()) return stats;
  const Slot& slot = slots_[method];
  constexpr auto kRelaxed = std::memory_order_relaxed;
  stats.method = names_[method];
  stats.calls = slot.calls.load(kRelaxed);
  stats.latency_sum_ns = slot.latency_sum_ns.load(kRelaxed);
  stats.latency_max_ns = slot.latency_max_ns.load(kRelaxed);
  for (size_t i = 0; i < kGrpcCodeCount; ++i) {
    stats.by_code[i] = slot.by_code[i].load(kRelaxed);
  }
  for (size_t i = 0; i < stats.latency_buckets.size(); ++i) {
    stats.latency_buckets[i] = slot.buckets[i].load(kRelaxed);
  }
  return stats;
}

}  // namespace mooncake_tier::rpc
