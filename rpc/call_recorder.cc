#include "rpc/call_recorder.h"

#include <memory>
#include <utility>

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

}  // namespace

std::string_view GrpcCodeName(int code) {
  if (code < 0 || static_cast<size_t>(code) >= kGrpcCodeCount) {
    return kCodeNames[kUnknownCode];
  }
  return kCodeNames[code];
}

struct CallRecorder::Slot {
  std::array<std::atomic<uint64_t>, kGrpcCodeCount> by_code{};
  LatencyHistogram latency{kLatencyBounds};
};

CallRecorder::CallRecorder(std::vector<std::string> methods)
    : names_(std::move(methods)) {
  slots_.reserve(names_.size());
  for (size_t i = 0; i < names_.size(); ++i) {
    slots_.push_back(std::make_unique<Slot>());
  }
}

CallRecorder::~CallRecorder() = default;

void CallRecorder::Record(size_t method, int code, Duration latency) {
  if (method >= names_.size()) return;
  if (code < 0 || static_cast<size_t>(code) >= kGrpcCodeCount) {
    code = kUnknownCode;
  }
  Slot& slot = *slots_[method];
  slot.by_code[code].fetch_add(1, std::memory_order_relaxed);
  slot.latency.Record(latency);
}

CallStats CallRecorder::Get(size_t method) const {
  CallStats stats;
  if (method >= names_.size()) return stats;
  const Slot& slot = *slots_[method];
  stats.method = names_[method];
  for (size_t i = 0; i < kGrpcCodeCount; ++i) {
    stats.by_code[i] = slot.by_code[i].load(std::memory_order_relaxed);
  }
  const LatencySnapshot latency = slot.latency.Snapshot();
  stats.calls = latency.count;
  stats.latency_sum_ns = latency.sum_ns;
  stats.latency_max_ns = latency.max_ns;
  stats.latency_buckets = latency.buckets;
  return stats;
}

}  // namespace mooncake_tier::rpc
