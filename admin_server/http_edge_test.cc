// The admin ports' HTTP edge against hostile and careless clients, over
// real sockets: oversized and chunked bodies, requests refused before their
// body, slow and idle connections, a saturated API lane, pipelining, ranges.
// Deadlines are set short and the tests assert what happened to the
// connection, never how long it took.

#include "admin_server/http_edge.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/eventually.h"
#include "tests/support/raw_http_client.h"

namespace mooncake_tier::admin {
namespace http_edge_test {
namespace {

using std::chrono::milliseconds;

using ::mooncake_tier::testing::Eventually;
using ::mooncake_tier::testing::HttpGet;
using ::mooncake_tier::testing::ParseHttpResponses;
using RawClient = ::mooncake_tier::testing::RawHttpClient;

// Answers "<method> <target> <body>"; /healthz inline, /metrics on the
// observe lane, /block waits for Open(); /private needs "X-Token: yes".
class FakeHandler : public HttpEdgeHandler {
 public:
  HttpAdmission Admit(const HttpHead& head) override {
    admitted.fetch_add(1);
    HttpAdmission admission;
    if (head.target == "/healthz") admission.lane = HttpLane::kInline;
    if (head.target == "/metrics") admission.lane = HttpLane::kObserve;
    if (head.target == "/private" && head.Header("x-token") != "yes") {
      admission.answer = AdminResponse::Error(401, "UNAUTHENTICATED",
                                              "TOKEN_REQUIRED", "no token");
      admission.refusal = HttpRefusal::kUnauthenticated;
    }
    return admission;
  }
  AdminResponse Handle(const HttpHead& head, std::string body) override {
    handled.fetch_add(1);
    if (head.target == "/block") {
      std::unique_lock<std::mutex> lock(mu_);
      blocked_ += 1;
      cv_.notify_all();
      cv_.wait(lock, [this] { return open_; });
    }
    if (head.target == "/big") {
      return AdminResponse::Text(200, std::string(100000, 'x'));
    }
    return AdminResponse::Text(200,
                               head.method + " " + head.target + " " + body);
  }
  void WaitBlocked(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return blocked_ >= n; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

  std::atomic<int> admitted{0};
  std::atomic<int> handled{0};

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int blocked_ = 0;
  bool open_ = false;
};

class HttpEdgeTest : public ::testing::Test {
 protected:
  void Start(HttpEdgeOptions options = {}) {
    options.max_body_bytes = 4096;
    auto edge = HttpEdge::Start(options, &handler_, "the test edge");
    ASSERT_TRUE(edge.ok()) << edge.status().ToString();
    edge_ = std::move(*edge);
  }
  void TearDown() override {
    handler_.Open();
    if (edge_ != nullptr) {
      // Whatever a test did, a new client is still answered.
      RawClient client(edge_->port());
      ASSERT_TRUE(client.Send(HttpGet("/healthz")));
      auto responses =
          ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
      ASSERT_EQ(responses.size(), 1u) << "the edge stopped answering";
      EXPECT_EQ(responses[0].status, 200);
      edge_->Shutdown();
    }
  }
  uint64_t Refused(HttpRefusal refusal) const {
    return edge_->stats().refused[static_cast<size_t>(refusal)];
  }

  FakeHandler handler_;
  std::unique_ptr<HttpEdge> edge_;
};

TEST_F(HttpEdgeTest, AnswersPipelinedRequestsInOrder) {
  Start();
  RawClient client(edge_->port());
  ASSERT_TRUE(client.Send(HttpGet("/a") + HttpGet("/healthz") +
                          HttpGet("/metrics") + HttpGet("/b")));
  auto responses =
      ParseHttpResponses(client.ReadResponses(4, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 4u);
  EXPECT_EQ(responses[0].body, "GET /a ");
  EXPECT_EQ(responses[1].body, "GET /healthz ");
  EXPECT_EQ(responses[2].body, "GET /metrics ");
  EXPECT_EQ(responses[3].body, "GET /b ");
}

TEST_F(HttpEdgeTest, HeadIsGetWithoutTheBody) {
  Start();
  RawClient client(edge_->port());
  ASSERT_TRUE(
      client.Send("HEAD /a HTTP/1.1\r\nHost: t\r\n\r\n" + HttpGet("/b")));
  // The HEAD answer has Content-Length 7 and no body: the next bytes are
  // the second answer.
  const std::string text = client.ReadUntilText("GET /b ", milliseconds(5000));
  EXPECT_EQ(text.rfind("HTTP/1.1 200", 0), 0u) << text;
  EXPECT_NE(text.find("Content-Length: 7\r\n\r\nHTTP/1.1 200"),
            std::string::npos)
      << text;
}

TEST_F(HttpEdgeTest, RefusesAnOversizedContentLengthWithoutReadingTheBody) {
  Start();
  RawClient client(edge_->port());
  // Headers only: the answer must come without a byte of the body.
  ASSERT_TRUE(client.Send(
      "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 10000000\r\n\r\n"));
  auto responses =
      ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 413);
  EXPECT_NE(responses[0].body.find("PAYLOAD_TOO_LARGE"), std::string::npos);
  EXPECT_NE(responses[0].head.find("Connection: close"), std::string::npos);
  EXPECT_TRUE(client.ClosedWithin(milliseconds(5000)));
  EXPECT_EQ(handler_.handled.load(), 0);
  EXPECT_EQ(Refused(HttpRefusal::kBodyTooLarge), 1u);
}

TEST_F(HttpEdgeTest, StopsAChunkedBodyAtTheLimit) {
  Start();
  RawClient client(edge_->port());
  ASSERT_TRUE(client.Send(
      "POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"));
  // 1 MiB in 1 KiB chunks against a 4 KiB limit; the server stops reading
  // (and answers) long before the end.
  const std::string chunk = "400\r\n" + std::string(1024, 'c') + "\r\n";
  for (int i = 0; i < 1024 && client.Send(chunk); ++i) {
  }
  auto responses =
      ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 413);
  EXPECT_EQ(handler_.handled.load(), 0);
  EXPECT_EQ(Refused(HttpRefusal::kBodyTooLarge), 1u);
}

TEST_F(HttpEdgeTest, AChunkedBodyUnderTheLimitIsServed) {
  Start();
  RawClient client(edge_->port());
  ASSERT_TRUE(client.Send(
      "POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"));
  auto responses =
      ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 200);
  EXPECT_EQ(responses[0].body, "POST /x abcde");
}

TEST_F(HttpEdgeTest, AdmitRefusesFromTheHeadersBeforeTheBody) {
  Start();
  RawClient client(edge_->port());
  // A body is announced and never sent: the refusal cannot wait for it.
  ASSERT_TRUE(client.Send(
      "POST /private HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n"));
  auto responses =
      ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 401);
  EXPECT_TRUE(client.ClosedWithin(milliseconds(5000)));
  EXPECT_EQ(handler_.handled.load(), 0);
  EXPECT_EQ(Refused(HttpRefusal::kUnauthenticated), 1u);
}

TEST_F(HttpEdgeTest, AnEmptyPostNeedsNoContentLength) {
  Start();
  RawClient client(edge_->port());
  ASSERT_TRUE(
      client.Send("POST /evict HTTP/1.1\r\nHost: t\r\n\r\n" + HttpGet("/a")));
  auto responses =
      ParseHttpResponses(client.ReadResponses(2, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_EQ(responses[0].status, 200);
  EXPECT_EQ(responses[0].body, "POST /evict ");
  EXPECT_EQ(responses[1].body, "GET /a ");
}

TEST_F(HttpEdgeTest, ExpectContinueIsAnsweredBeforeTheBody) {
  Start();
  RawClient client(edge_->port());
  ASSERT_TRUE(
      client.Send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n"
                  "Expect: 100-continue\r\n\r\n"));
  const std::string interim =
      client.ReadUntilText("\r\n\r\n", milliseconds(5000));
  ASSERT_EQ(interim.rfind("HTTP/1.1 100", 0), 0u) << interim;
  ASSERT_TRUE(client.Send("hello"));
  auto responses =
      ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].body, "POST /x hello");
}

TEST_F(HttpEdgeTest, ManyRangesGetTheWholeBodyOnce) {
  Start();
  RawClient client(edge_->port());
  std::string ranges = "bytes=0-0";
  for (int i = 1; i < 2000; ++i) ranges += ",0-0";
  ASSERT_TRUE(client.Send("GET /big HTTP/1.1\r\nHost: t\r\nRange: " + ranges +
                          "\r\n\r\n"));
  auto responses =
      ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 200);
  EXPECT_EQ(responses[0].body.size(), 100000u);
}

TEST_F(HttpEdgeTest, OversizedHeadersAre431AndClose) {
  Start();
  RawClient client(edge_->port());
  ASSERT_TRUE(client.Send("GET /a HTTP/1.1\r\nHost: t\r\nX-Filler: " +
                          std::string(20000, 'x') + "\r\n\r\n"));
  auto responses =
      ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 431);
  EXPECT_TRUE(client.ClosedWithin(milliseconds(5000)));
  EXPECT_EQ(handler_.admitted.load(), 0);
}

TEST_F(HttpEdgeTest, GarbageIs400AndCloses) {
  Start();
  RawClient client(edge_->port());
  ASSERT_TRUE(client.Send("\x01\x02 nonsense\r\n\r\n"));
  auto responses =
      ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 400);
  EXPECT_TRUE(client.ClosedWithin(milliseconds(5000)));
  EXPECT_EQ(Refused(HttpRefusal::kMalformed), 1u);
}

TEST_F(HttpEdgeTest, SlowHeadersAreCutOffAtTheirDeadline) {
  HttpEdgeOptions options;
  options.header_timeout = milliseconds(200);
  Start(options);
  RawClient client(edge_->port());
  ASSERT_TRUE(client.Send("GET /a HTTP/1.1\r\nHost: t\r\n"));  // never ends
  EXPECT_TRUE(client.ClosedWithin(milliseconds(10000)));
  // Counted once the edge saw its deadline pass (just after it closed).
  EXPECT_TRUE(
      Eventually([&] { return Refused(HttpRefusal::kHeaderTimeout) == 1; },
                 milliseconds(5000)));
  EXPECT_EQ(handler_.admitted.load(), 0);
}

TEST_F(HttpEdgeTest, ASlowBodyIsCutOffAtItsDeadline) {
  HttpEdgeOptions options;
  options.body_timeout = milliseconds(200);
  Start(options);
  RawClient client(edge_->port());
  ASSERT_TRUE(client.Send(
      "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nabc"));
  EXPECT_TRUE(client.ClosedWithin(milliseconds(10000)));
  EXPECT_TRUE(
      Eventually([&] { return Refused(HttpRefusal::kBodyTimeout) == 1; },
                 milliseconds(5000)));
  EXPECT_EQ(handler_.handled.load(), 0);
}

TEST_F(HttpEdgeTest, IdleConnectionsCloseAfterTheIdleTimeout) {
  HttpEdgeOptions options;
  options.idle_timeout = milliseconds(200);
  Start(options);
  RawClient client(edge_->port());
  ASSERT_TRUE(client.Send(HttpGet("/a")));
  ASSERT_EQ(
      ParseHttpResponses(client.ReadResponses(1, milliseconds(5000))).size(),
      1u);
  EXPECT_TRUE(client.ClosedWithin(milliseconds(10000)));
  EXPECT_TRUE(Eventually([&] { return edge_->stats().idle_closed == 1; },
                         milliseconds(5000)));
}

TEST_F(HttpEdgeTest, SlowAndIdleConnectionsDoNotBlockHealth) {
  HttpEdgeOptions options;
  options.max_connections = 64;
  Start(options);
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < 40; ++i) {  // slow: a request line, never the end
    held.push_back(std::make_unique<RawClient>(edge_->port()));
    ASSERT_TRUE(held.back()->Send("GET /a HTTP/1.1\r\n"));
  }
  for (int i = 0; i < 200; ++i) {  // idle: connected, nothing sent
    held.push_back(std::make_unique<RawClient>(edge_->port()));
    ASSERT_TRUE(held.back()->connected());
  }
  for (const char* path : {"/healthz", "/metrics", "/a"}) {
    RawClient client(edge_->port());
    ASSERT_TRUE(client.Send(HttpGet(path)));
    auto responses =
        ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
    ASSERT_EQ(responses.size(), 1u) << path;
    EXPECT_EQ(responses[0].status, 200) << path;
  }
  EXPECT_GT(edge_->stats().idle_evicted, 0u);
  EXPECT_LE(edge_->stats().connections_open, 64u + 1);
}

TEST_F(HttpEdgeTest, ANewConnectionIsRefusedOnlyWhenNoneIsIdle) {
  HttpEdgeOptions options;
  options.max_connections = 4;
  Start(options);
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 4; ++i) {
    slow.push_back(std::make_unique<RawClient>(edge_->port()));
    ASSERT_TRUE(slow.back()->Send("GET /a HTTP/1.1\r\n"));
  }
  // Wait until the edge has all four mid-request.
  for (int i = 0; i < 500 && edge_->stats().connections_open < 4; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  // ... and has read their first bytes (idle ones would make room).
  std::this_thread::sleep_for(milliseconds(200));
  RawClient refused(edge_->port());
  EXPECT_TRUE(refused.ClosedWithin(milliseconds(5000)));
  EXPECT_EQ(Refused(HttpRefusal::kConnectionLimit), 1u);
  slow.clear();  // TearDown's health check gets in again
  for (int i = 0; i < 500 && edge_->stats().connections_open > 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
}

TEST_F(HttpEdgeTest, ASaturatedApiLaneLeavesHealthAndMetricsAnswerable) {
  HttpEdgeOptions options;
  options.api_threads = 1;
  options.api_queue = 1;
  Start(options);
  RawClient running(edge_->port());
  ASSERT_TRUE(running.Send(HttpGet("/block")));
  handler_.WaitBlocked(1);
  RawClient queued(edge_->port());
  ASSERT_TRUE(queued.Send(HttpGet("/block")));
  // The queue of one is taken once the edge has read the second request.
  for (int i = 0; i < 500 && handler_.admitted.load() < 2; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  RawClient busy(edge_->port());
  ASSERT_TRUE(busy.Send(HttpGet("/a")));
  auto responses =
      ParseHttpResponses(busy.ReadResponses(1, milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 503);
  EXPECT_NE(responses[0].body.find("BUSY"), std::string::npos);
  for (const char* path : {"/healthz", "/metrics"}) {
    RawClient client(edge_->port());
    ASSERT_TRUE(client.Send(HttpGet(path)));
    auto answered =
        ParseHttpResponses(client.ReadResponses(1, milliseconds(5000)));
    ASSERT_EQ(answered.size(), 1u) << path;
    EXPECT_EQ(answered[0].status, 200) << path;
  }
  handler_.Open();
  EXPECT_EQ(
      ParseHttpResponses(running.ReadResponses(1, milliseconds(5000))).size(),
      1u);
  EXPECT_EQ(
      ParseHttpResponses(queued.ReadResponses(1, milliseconds(5000))).size(),
      1u);
  EXPECT_EQ(Refused(HttpRefusal::kBusy), 1u);
}

TEST(HttpEdgeStartTest, RefusesZeroLimitsAndAPortInUse) {
  FakeHandler handler;
  HttpEdgeOptions options;
  options.max_connections = 0;
  EXPECT_EQ(HttpEdge::Start(options, &handler, "x").status().reason(),
            ErrorReason::kInvalidArgument);
  auto first = HttpEdge::Start(HttpEdgeOptions{}, &handler, "x");
  ASSERT_TRUE(first.ok());
  HttpEdgeOptions same;
  same.port = (*first)->port();
  EXPECT_EQ(HttpEdge::Start(same, &handler, "x").status().reason(),
            ErrorReason::kUnavailable);
}

}  // namespace
}  // namespace http_edge_test
}  // namespace mooncake_tier::admin
