#pragma once

// Records every RPC of one service on one side (server or client): how
// many calls each method got, how long they took and which canonical code
// they ended with. The server and the stubs both go through Time(), so the
// figures are gathered in exactly one place; the metrics layer reads them
// with Visit() (mooncake_rpc_requests_total{method,code},
// mooncake_rpc_duration_seconds{method}).
//
// The call's code is the gRPC status of the call as a whole; per-item
// failures inside an OK batch are not counted here (the engine's own
// counters see them).
//
// Thread safety: thread-safe and lock-free; counters are relaxed atomics,
// so a snapshot taken during traffic may be a few calls out of step between
// fields, never torn within one.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/latency_histogram.h"

namespace mooncake_tier::rpc {

// gRPC canonical codes 0 (OK) .. 16 (UNAUTHENTICATED).
inline constexpr size_t kGrpcCodeCount = 17;
// "OK", "NOT_FOUND", ... for a gRPC canonical code; "UNKNOWN" when out of
// range.
std::string_view GrpcCodeName(int code);

// Upper bounds of the latency histogram buckets; a last, unbounded bucket
// follows. Chosen for a metadata RPC: tens of microseconds to seconds.
inline constexpr LatencyBounds kLatencyBounds = {
    std::chrono::microseconds(50),   std::chrono::microseconds(100),
    std::chrono::microseconds(250),  std::chrono::microseconds(500),
    std::chrono::milliseconds(1),    std::chrono::microseconds(2500),
    std::chrono::milliseconds(5),    std::chrono::milliseconds(10),
    std::chrono::milliseconds(25),   std::chrono::milliseconds(50),
    std::chrono::milliseconds(100),  std::chrono::milliseconds(250),
    std::chrono::milliseconds(500),  std::chrono::seconds(1),
    std::chrono::milliseconds(2500), std::chrono::seconds(5)};

// A point-in-time copy of one method's figures.
struct CallStats {
  std::string_view method;
  uint64_t calls = 0;
  uint64_t latency_sum_ns = 0;
  uint64_t latency_max_ns = 0;
  // Calls by canonical code (index = code).
  std::array<uint64_t, kGrpcCodeCount> by_code{};
  // Calls per latency bucket (not cumulative): bucket i counts latencies
  // <= kLatencyBounds[i] and above the previous bound; the last bucket the
  // rest.
  std::array<uint64_t, kLatencyBoundCount + 1> latency_buckets{};
};

class CallRecorder {
 public:
  // `methods` names the methods; Record's `method` indexes it.
  explicit CallRecorder(std::vector<std::string> methods);
  CallRecorder(const CallRecorder&) = delete;
  CallRecorder& operator=(const CallRecorder&) = delete;
  ~CallRecorder();

  size_t method_count() const { return names_.size(); }

  // Records one finished call. A method index out of range is ignored (it
  // is a programming error, never outside input); a code outside 0..16 is
  // counted as UNKNOWN (2).
  void Record(size_t method, int code, Duration latency);

  // Runs `call()` (which returns something with error_code(), such as
  // grpc::Status), records it under `method` and returns its result.
  template <typename Call>
  auto Time(size_t method, Call&& call) {
    const auto start = std::chrono::steady_clock::now();
    auto result = call();
    Record(method, static_cast<int>(result.error_code()),
           std::chrono::steady_clock::now() - start);
    return result;
  }

  CallStats Get(size_t method) const;
  // Calls visitor(const CallStats&) for every method, in index order.
  template <typename Visitor>
  void Visit(Visitor&& visitor) const {
    for (size_t i = 0; i < names_.size(); ++i) visitor(Get(i));
  }

 private:
  struct Slot;
  const std::vector<std::string> names_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace mooncake_tier::rpc
