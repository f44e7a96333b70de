#include "rpc/call_recorder.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "rpc/master_methods.h"

namespace mooncake_tier::rpc {
namespace call_recorder_test {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// Stands in for grpc::Status: anything with error_code().
struct FakeStatus {
  int code;
  int error_code() const { return code; }
};

TEST(CallRecorderTest, CountsCallsCodesAndLatencyPerMethod) {
  CallRecorder recorder({"A", "B"});
  recorder.Record(0, 0, microseconds(30));
  recorder.Record(0, 5, milliseconds(3));
  recorder.Record(1, 14, std::chrono::seconds(30));

  const CallStats a = recorder.Get(0);
  EXPECT_EQ(a.method, "A");
  EXPECT_EQ(a.calls, 2u);
  EXPECT_EQ(a.by_code[0], 1u);
  EXPECT_EQ(a.by_code[5], 1u);
  EXPECT_EQ(a.latency_sum_ns, 3'030'000u);
  EXPECT_EQ(a.latency_max_ns, 3'000'000u);
  EXPECT_EQ(a.latency_buckets[0], 1u);  // <= 50 us
  EXPECT_EQ(a.latency_buckets[6], 1u);  // (2.5 ms, 5 ms]
  const CallStats b = recorder.Get(1);
  EXPECT_EQ(b.calls, 1u);
  EXPECT_EQ(b.by_code[14], 1u);
  EXPECT_EQ(b.latency_buckets.back(), 1u);  // beyond the last bound
}

TEST(CallRecorderTest, BadIndexIsIgnoredAndBadCodeIsUnknown) {
  CallRecorder recorder({"A"});
  recorder.Record(7, 0, microseconds(1));
  recorder.Record(0, 99, microseconds(1));
  recorder.Record(0, -1, microseconds(1));
  EXPECT_EQ(recorder.Get(0).calls, 2u);
  EXPECT_EQ(recorder.Get(0).by_code[2], 2u);
  EXPECT_EQ(recorder.Get(7).calls, 0u);
  EXPECT_EQ(GrpcCodeName(2), "UNKNOWN");
  EXPECT_EQ(GrpcCodeName(5), "NOT_FOUND");
  EXPECT_EQ(GrpcCodeName(16), "UNAUTHENTICATED");
  EXPECT_EQ(GrpcCodeName(17), "UNKNOWN");
}

TEST(CallRecorderTest, TimeRecordsTheCallsCodeAndPassesItsResultOn) {
  CallRecorder recorder(MasterMethodNames());
  const size_t m = static_cast<size_t>(MasterMethod::kHeartbeat);
  const FakeStatus s = recorder.Time(m, [] { return FakeStatus{14}; });
  EXPECT_EQ(s.code, 14);
  EXPECT_EQ(recorder.Get(m).method, "Heartbeat");
  EXPECT_EQ(recorder.Get(m).by_code[14], 1u);
}

TEST(CallRecorderTest, VisitSeesEveryMethodInOrder) {
  CallRecorder recorder(MasterMethodNames());
  std::vector<std::string> seen;
  recorder.Visit([&](const CallStats& s) { seen.emplace_back(s.method); });
  EXPECT_EQ(seen, MasterMethodNames());
  EXPECT_EQ(seen.size(), kMasterMethodCount);
  EXPECT_EQ(seen.front(), "PutStart");
}

TEST(CallRecorderTest, ConcurrentRecordsAllCount) {
  CallRecorder recorder({"A"});
  constexpr int kThreads = 4;
  constexpr int kCalls = 10000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        recorder.Record(0, t, microseconds(i % 100));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const CallStats s = recorder.Get(0);
  EXPECT_EQ(s.calls, uint64_t{kThreads * kCalls});
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(s.by_code[t], uint64_t{kCalls});
  EXPECT_EQ(s.latency_max_ns, 99'000u);
}

}  // namespace
}  // namespace call_recorder_test
}  // namespace mooncake_tier::rpc
