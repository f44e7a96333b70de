// mooncake-tierctl top, end to end: against the admin fixture
// (tierctl_admin_fixture.h), and against a stand-in status server (a failed
// read, a slow read).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "httplib.h"
#include "tests/integration/tierctl_admin_fixture.h"
#include "tests/integration/tierctl_test_util.h"
#include "tests/support/run_command.h"

namespace mooncake_tier::testing {
namespace tierctl_top_test {
namespace {

using namespace tierctl;  // NOLINT(build/namespaces): test helpers

TEST_F(TierctlAdminTest, TopRefreshesWithRatesAndStops) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());
  ASSERT_TRUE(h_.Get("k").ok());
  LoadGroups();

  CommandResult table = Ctl({"top", "--iterations", "2", "--interval", "50ms"});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_TRUE(Contains(table.out, "frame 1/2")) << table.out;
  EXPECT_TRUE(Contains(table.out, "frame 2/2")) << table.out;
  EXPECT_FALSE(Contains(table.out, "frame 3")) << table.out;
  EXPECT_FALSE(Contains(table.out, "\x1b[")) << "ANSI codes off a terminal";
  EXPECT_TRUE(Contains(table.out, "(rates from the next frame on)"));
  EXPECT_TRUE(Contains(table.out, "0.0/s")) << table.out;  // frame 2 rates
  EXPECT_TRUE(Contains(table.out, "filling 1  complete 2")) << table.out;
  EXPECT_TRUE(Contains(table.out, "100.0%")) << table.out;  // hit since start

  CommandResult lines =
      Ctl({"top", "--iterations", "2", "--interval", "50ms", "-o", "json"});
  ASSERT_EQ(lines.exit_code, kOk) << lines.err;
  std::vector<json> frames = JsonLines(lines);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_TRUE(frames[0]["interval_seconds"].is_null());
  EXPECT_TRUE(frames[0]["promotions"]["completed_per_second"].is_null());
  ASSERT_TRUE(frames[1]["interval_seconds"].is_number());
  EXPECT_GE(frames[1]["interval_seconds"].get<double>(), 0.04);
  EXPECT_EQ(frames[1]["promotions"]["completed_per_second"], 0.0);
  EXPECT_EQ(frames[1]["gets"]["since_start"]["memory_hit"], 1.0);
  EXPECT_EQ(frames[1]["groups"]["complete"], 2);
  EXPECT_EQ(frames[1]["tiers"]["memory"]["used_bytes"], 6 * kObj);
}

// A stand-in admin API for `top`: GET /api/v1/status answers a small
// document with objects = the request's number, except that the requests
// in `fail` answer 503 and the ones in `slow` come after `delay`.
class FakeStatusServer {
 public:
  FakeStatusServer(std::vector<int> fail, std::vector<int> slow,
                   std::chrono::milliseconds delay)
      : fail_(std::move(fail)), slow_(std::move(slow)), delay_(delay) {
    server_.Get("/api/v1/status", [this](const httplib::Request&,
                                         httplib::Response& res) {
      const int n = ++requests_;
      if (std::find(slow_.begin(), slow_.end(), n) != slow_.end()) {
        std::this_thread::sleep_for(delay_);
      }
      if (std::find(fail_.begin(), fail_.end(), n) != fail_.end()) {
        res.status = 503;
        res.set_content(R"({"error":{"code":"UNAVAILABLE","reason":)"
                        R"("NOT_READY","message":"not serving yet"}})",
                        "application/json");
        return;
      }
      res.set_content(json{{"objects", n}, {"gets", {{"miss", n}}}}.dump(),
                      "application/json");
    });
    // Small answers without the delayed-ACK wait, so reads take well under
    // the intervals the tests use.
    server_.set_tcp_nodelay(true);
    // Bound before the thread starts: a connection made before it accepts
    // waits in the listen backlog.
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeStatusServer() {
    server_.stop();
    thread_.join();
  }
  std::string endpoint() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }

 private:
  const std::vector<int> fail_;
  const std::vector<int> slow_;
  const std::chrono::milliseconds delay_;
  std::atomic<int> requests_{0};
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// A read that fails after the first good one is a frame showing the error;
// top goes on and its rates restart from the next good read.
TEST(TierctlTopTest, ATransientErrorIsAFrameAndTopGoesOn) {
  FakeStatusServer server({2}, {}, std::chrono::milliseconds(0));
  CommandResult lines =
      Tierctl({}, {"--endpoint", server.endpoint(), "top", "--iterations", "4",
                   "--interval", "20ms", "-o", "json"});
  ASSERT_EQ(lines.exit_code, kOk) << lines.err;
  std::vector<json> frames = JsonLines(lines);
  ASSERT_EQ(frames.size(), 4u) << lines.out;
  EXPECT_EQ(frames[0]["objects"], 1);
  EXPECT_EQ(frames[1]["error"]["reason"], "NOT_READY") << frames[1];
  EXPECT_EQ(frames[1]["error"]["http_status"], 503) << frames[1];
  EXPECT_EQ(frames[2]["objects"], 3);
  EXPECT_TRUE(frames[2]["interval_seconds"].is_null()) << frames[2];
  EXPECT_TRUE(frames[3]["interval_seconds"].is_number()) << frames[3];
  EXPECT_EQ(frames[3]["objects"], 4);

  FakeStatusServer table_server({2}, {}, std::chrono::milliseconds(0));
  CommandResult table =
      Tierctl({}, {"--endpoint", table_server.endpoint(), "top", "--iterations",
                   "3", "--interval", "20ms"});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_TRUE(Contains(table.out, "frame 2/3")) << table.out;
  EXPECT_TRUE(Contains(table.out, "error: NOT_READY: not serving yet"))
      << table.out;
  EXPECT_TRUE(Contains(table.out, "frame 3/3")) << table.out;

  // A failed first read ends top: the endpoint or the token is wrong.
  FakeStatusServer failing({1}, {}, std::chrono::milliseconds(0));
  CommandResult first = Tierctl(
      {}, {"--endpoint", failing.endpoint(), "top", "--iterations", "3"});
  EXPECT_EQ(first.exit_code, kError);
  EXPECT_TRUE(Contains(first.err, "NOT_READY")) << first.err;
  EXPECT_FALSE(Contains(first.out, "frame")) << first.out;
}

// After a read slower than the interval, the frames keep the interval
// rather than firing a burst to catch up.
TEST(TierctlTopTest, ASlowReadDoesNotCauseABurst) {
  FakeStatusServer server({}, {2}, std::chrono::milliseconds(400));
  CommandResult lines =
      Tierctl({}, {"--endpoint", server.endpoint(), "top", "--iterations", "5",
                   "--interval", "50ms", "-o", "json"});
  ASSERT_EQ(lines.exit_code, kOk) << lines.err;
  std::vector<json> frames = JsonLines(lines);
  ASSERT_EQ(frames.size(), 5u) << lines.out;
  // Frame 3 comes at once after the slow frame 2, then the schedule
  // restarts from it: frames 4 and 5 take about two intervals (at least one
  // even if a wake-up is late). A burst catching up with the old schedule
  // would fire them within a few milliseconds of frame 3.
  double after_frame_3 = 0;
  for (size_t i : {3u, 4u}) {
    ASSERT_TRUE(frames[i]["interval_seconds"].is_number()) << frames[i];
    after_frame_3 += frames[i]["interval_seconds"].get<double>();
  }
  EXPECT_GE(after_frame_3, 0.045) << lines.out;
}

}  // namespace
}  // namespace tierctl_top_test
}  // namespace mooncake_tier::testing
