// LeaderElector without etcd: the step-down arithmetic on a manual clock,
// option checks, and, against a fake gateway whose replies the test paces,
// that the window counts from a renewal's send (what a real etcd on
// loopback answers too fast to show).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "ha/etcd_json.h"
#include "ha/leader_elector.h"
#include "ha/leader_elector_test_util.h"
#include "httplib.h"
#include "tests/support/ignore_sigpipe.h"

namespace mooncake_tier::ha {
namespace leader_elector_fake_test {
namespace {

using elector_test::Candidate;
using elector_test::Events;
using elector_test::kLong;
using elector_test::Ns;
using elector_test::Options;
using elector_test::Since;
using elector_test::StartCandidate;
using elector_test::WaitUntil;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

// ---- The step-down arithmetic, on a manual clock.

TEST(LeaseWindowTest, ValidUntilSendTimePlusTtlMinusMargin) {
  ManualClock clock;
  LeaseWindow window(milliseconds(250));
  EXPECT_FALSE(window.ValidAt(clock.Now()));
  EXPECT_EQ(window.valid_until(), TimePoint::min());

  const TimePoint sent = clock.Now();
  window.Confirmed(sent, std::chrono::seconds(1));
  EXPECT_EQ(window.valid_until(), sent + milliseconds(750));
  clock.Advance(milliseconds(749));
  EXPECT_TRUE(window.ValidAt(clock.Now()));
  clock.Advance(milliseconds(1));
  EXPECT_FALSE(window.ValidAt(clock.Now()));

  window.Reset();
  EXPECT_FALSE(window.ValidAt(sent));
}

TEST(LeaseWindowTest, LateReplyCountsFromItsSendAndNeverShrinks) {
  ManualClock clock;
  LeaseWindow window(milliseconds(250));
  const TimePoint first = clock.Now();
  window.Confirmed(first, std::chrono::seconds(1));

  // A renewal sent 200 ms later whose reply takes 500 ms: the window moves
  // to its send + 750 ms, not to its reply + 750 ms.
  clock.Advance(milliseconds(200));
  const TimePoint second = clock.Now();
  clock.Advance(milliseconds(500));
  window.Confirmed(second, std::chrono::seconds(1));
  EXPECT_EQ(window.valid_until(), second + milliseconds(750));

  // The first renewal's reply arriving last does not pull it back.
  window.Confirmed(first, std::chrono::seconds(1));
  EXPECT_EQ(window.valid_until(), second + milliseconds(750));

  // A longer TTL granted by etcd widens the window accordingly.
  window.Confirmed(second, std::chrono::seconds(2));
  EXPECT_EQ(window.valid_until(), second + milliseconds(1750));
}

TEST(LeaderElectorOptionsTest, RejectsBadOptionsAndFillsDefaults) {
  EXPECT_EQ(LeaderElector::ElectionName("c1"), "/mooncake-tier/c1/leader");
  auto reason = [](const std::function<void(LeaderElectorOptions&)>& adjust) {
    LeaderElectorOptions options = Options("127.0.0.1:2379", "c1", "h:1");
    adjust(options);
    return LeaderElector::Create(std::move(options)).status().reason();
  };
  for (const std::string& cluster :
       {std::string(), std::string("a/b"), std::string("a b"),
        std::string("\x01"), std::string("\x80"), std::string(129, 'c')}) {
    EXPECT_EQ(reason([&](LeaderElectorOptions& o) { o.cluster = cluster; }),
              ErrorReason::kInvalidArgument)
        << "cluster '" << cluster << "'";
  }
  using std::chrono::seconds;
  const std::vector<std::function<void(LeaderElectorOptions&)>> bad = {
      [](LeaderElectorOptions& o) { o.value.clear(); },
      [](LeaderElectorOptions& o) { o.lease_ttl = seconds(0); },
      [](LeaderElectorOptions& o) { o.safety_margin = milliseconds(1000); },
      [](LeaderElectorOptions& o) { o.safety_margin = milliseconds(-1); },
      [](LeaderElectorOptions& o) { o.renew_interval = milliseconds(750); },
      [](LeaderElectorOptions& o) { o.max_retry_backoff = milliseconds(0); },
      [](LeaderElectorOptions& o) { o.clock = nullptr; },
      [](LeaderElectorOptions& o) { o.etcd.endpoints.clear(); },
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(reason(bad[i]), ErrorReason::kInvalidArgument) << "case " << i;
  }

  LeaderElectorOptions options = Options("127.0.0.1:2379", "c-1.x_y", "h:1");
  options.lease_ttl = seconds(2);
  Result<std::unique_ptr<LeaderElector>> elector =
      LeaderElector::Create(options);
  ASSERT_TRUE(elector.ok()) << elector.status().ToString();
  const LeaderElectorOptions& used = (*elector)->options();
  EXPECT_EQ(used.safety_margin, milliseconds(500));
  EXPECT_EQ(used.renew_interval, milliseconds(500));
  // A renewal answered after the window minus one interval is useless.
  EXPECT_EQ(used.etcd.call_timeout, milliseconds(1000));
  EXPECT_EQ(used.etcd.watch_idle_timeout, milliseconds(2000));
  EXPECT_FALSE((*elector)->Leading());
  EXPECT_EQ((*elector)->Stats().role, ElectorRole::kIdle);
  (*elector)->Stop();  // never started: fine
  EXPECT_EQ((*elector)->Stats().role, ElectorRole::kStopped);
  EXPECT_EQ((*elector)->Start().reason(), ErrorReason::kNotApplicable);
}

// ---- A fake gateway that paces lease renewals, for what a real etcd on
// loopback answers too fast to show.

class FakeGateway {
 public:
  // Grants and renews leases with `ttl`.
  explicit FakeGateway(std::chrono::seconds ttl)
      : ttl_(std::to_string(ttl.count())) {
    server_.Post("/v3/lease/grant", [this](const httplib::Request&,
                                           httplib::Response& response) {
      MutexLock lock(&mu_);
      Reply(response, {{"ID", std::to_string(++last_lease_)}, {"TTL", ttl_}});
    });
    server_.Post("/v3/lease/keepalive", [this](const httplib::Request& request,
                                               httplib::Response& response) {
      KeepAlive(request, response);
    });
    server_.Post("/v3/lease/revoke",
                 [](const httplib::Request&, httplib::Response& response) {
                   Reply(response, nlohmann::json::object());
                 });
    server_.Post(
        "/v3/election/campaign",
        [this](const httplib::Request& request, httplib::Response& response) {
          const nlohmann::json body = nlohmann::json::parse(request.body);
          const std::string name =
              *etcd_json::Base64Decode(body["name"].get<std::string>());
          const std::string lease = body["lease"].get<std::string>();
          MutexLock lock(&mu_);
          const std::string key = name + "/" + lease;
          keys_[key] = ++revision_;
          Reply(response, {{"leader",
                            {{"name", etcd_json::Base64Encode(name)},
                             {"key", etcd_json::Base64Encode(key)},
                             {"rev", std::to_string(revision_)},
                             {"lease", lease}}}});
        });
    // One key, or (with a range_end) every key: the elector needs no more.
    server_.Post("/v3/kv/range", [this](const httplib::Request& request,
                                        httplib::Response& response) {
      const nlohmann::json body = nlohmann::json::parse(request.body);
      const std::string wanted =
          *etcd_json::Base64Decode(body["key"].get<std::string>());
      const bool all = body.contains("range_end");
      MutexLock lock(&mu_);
      nlohmann::json kvs = nlohmann::json::array();
      for (const auto& [key, revision] : keys_) {
        if (!all && key != wanted) continue;
        kvs.push_back({{"key", etcd_json::Base64Encode(key)},
                       {"create_revision", std::to_string(revision)},
                       {"mod_revision", std::to_string(revision)}});
      }
      Reply(response, {{"header", {{"revision", std::to_string(revision_)}}},
                       {"kvs", kvs}});
    });
    server_.Post("/v3/watch",
                 [](const httplib::Request&, httplib::Response& response) {
                   response.status = 503;
                   Reply(response, {{"error", "no watch here"}, {"code", 14}});
                 });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }

  ~FakeGateway() {
    {
      MutexLock lock(&mu_);
      closing_ = true;
      wake_.SignalAll();
    }
    server_.stop();
    thread_.join();
  }

  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  bool Ready() { return server_.is_running(); }

  // Renewals from now on: answered after `delay`, never (within any call
  // timeout), or with the lease gone.
  void AnswerRenewalsAfter(milliseconds delay) {
    MutexLock lock(&mu_);
    renewal_delay_ = delay;
  }
  void StopAnsweringRenewals() {
    MutexLock lock(&mu_);
    hang_ = true;
  }
  void ForgetLeases() {
    MutexLock lock(&mu_);
    for (int64_t id = 1; id <= last_lease_; ++id) gone_.insert(id);
  }

  // When the last renewal answered as alive arrived here.
  steady_clock::time_point LastAnsweredArrival() {
    MutexLock lock(&mu_);
    return last_answered_arrival_;
  }

 private:
  static void Reply(httplib::Response& response, const nlohmann::json& body) {
    response.set_content(body.dump(), "application/json");
  }

  void KeepAlive(const httplib::Request& request, httplib::Response& response) {
    const steady_clock::time_point arrived = steady_clock::now();
    const std::string id =
        nlohmann::json::parse(request.body)["ID"].get<std::string>();
    MutexLock lock(&mu_);
    const bool hang = hang_;
    // A hung renewal is answered well after the client gave up.
    const steady_clock::time_point until =
        arrived + (hang ? milliseconds(2500) : renewal_delay_);
    while (!closing_ && steady_clock::now() < until) {
      wake_.WaitFor(milliseconds(5));
    }
    if (hang || gone_.count(std::stoll(id)) > 0) {
      Reply(response, {{"result", {{"ID", id}}}});  // etcd's "gone"
      return;
    }
    last_answered_arrival_ = arrived;
    Reply(response, {{"result", {{"ID", id}, {"TTL", ttl_}}}});
  }

  const std::string ttl_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  Mutex mu_;
  CondVar wake_{&mu_};
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  int64_t last_lease_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int64_t> keys_ ABSL_GUARDED_BY(mu_);
  std::set<int64_t> gone_ ABSL_GUARDED_BY(mu_);
  milliseconds renewal_delay_ ABSL_GUARDED_BY(mu_){0};
  bool hang_ ABSL_GUARDED_BY(mu_) = false;
  steady_clock::time_point last_answered_arrival_ ABSL_GUARDED_BY(mu_);
};

// Renewals answered 300 ms late keep the leader leading; once they stop,
// leadership ends 1.5 s (TTL 2 s - margin 500 ms) after the last confirmed
// renewal was SENT (before it arrived at the gateway), not after its reply
// came back. TTL 2 s leaves a loaded host 700 ms of slack per renewal.
TEST(LeaderElectorFakeTest, WindowCountsFromTheRenewalsSend) {
  constexpr milliseconds kFakeWindow(1500);
  FakeGateway fake(std::chrono::seconds(2));
  ASSERT_TRUE(WaitUntil([&] { return fake.Ready(); }, kLong));
  fake.AnswerRenewalsAfter(milliseconds(300));
  LeaderElectorOptions options = Options(fake.endpoint(), "fake", "m");
  options.lease_ttl = std::chrono::seconds(2);
  std::unique_ptr<Candidate> candidate = StartCandidate(options);
  ASSERT_NE(candidate, nullptr);
  LeaderElector& elector = *candidate->elector;
  ASSERT_TRUE(WaitUntil([&] { return elector.Leading(); }, kLong));

  // Longer than the grant's own window: the late renewals keep it open.
  const auto start = steady_clock::now();
  while (Since(start) < milliseconds(2000)) {
    ASSERT_TRUE(elector.Leading()) << "after " << Since(start).count() << " ms";
    std::this_thread::sleep_for(milliseconds(2));
  }
  EXPECT_GE(elector.Stats().renewals_ok, 3u);

  Term term = 0;
  ASSERT_TRUE(elector.Leading(&term));
  fake.StopAnsweringRenewals();
  TimePoint valid_until = TimePoint::min();
  steady_clock::time_point last_true;
  const auto cut = steady_clock::now();
  while (true) {
    const steady_clock::time_point before = steady_clock::now();
    const TimePoint until = elector.LeaseValidUntil();
    // Deposed, it campaigns again with a fresh lease and may lead a new
    // term at once (the fake grants leases still): a slow sampler could
    // miss the gap between the two, so only this term counts.
    Term now_leading = 0;
    if (!elector.Leading(&now_leading) || now_leading != term) break;
    valid_until = std::max(valid_until, until);
    last_true = before;
    ASSERT_LT(Since(cut), milliseconds(3000));
  }
  ASSERT_NE(valid_until, TimePoint::min()) << "not leading at the cut-off";
  // In nanoseconds after the last good renewal reached the gateway (its
  // send was earlier still). That renewal's reply may have reached the
  // elector too late to count; none counts for more than its send allows.
  const steady_clock::time_point arrived = fake.LastAnsweredArrival();
  EXPECT_LE(Ns(valid_until - arrived), Ns(kFakeWindow));
  EXPECT_LT(Ns(last_true - arrived), Ns(kFakeWindow));
  std::optional<Events::Deposed> deposed = candidate->events.FirstDeposed();
  ASSERT_TRUE(deposed.has_value());
  EXPECT_EQ(deposed->reason, StepDownReason::kWindowLapsed);
  // The hung renewal may time out only after the step-down.
  EXPECT_TRUE(
      WaitUntil([&] { return elector.Stats().renewals_failed > 0; }, kLong));
}

TEST(LeaderElectorFakeTest, RenewalSayingTheLeaseIsGoneDeposes) {
  FakeGateway fake(std::chrono::seconds(1));
  ASSERT_TRUE(WaitUntil([&] { return fake.Ready(); }, kLong));
  std::unique_ptr<Candidate> candidate =
      StartCandidate(Options(fake.endpoint(), "fake", "m"));
  ASSERT_NE(candidate, nullptr);
  LeaderElector& elector = *candidate->elector;
  Term old_term = 0;
  ASSERT_TRUE(WaitUntil([&] { return elector.Leading(&old_term); }, kLong));

  fake.ForgetLeases();
  std::optional<Events::Deposed> deposed = candidate->events.FirstDeposed();
  ASSERT_TRUE(deposed.has_value());
  EXPECT_EQ(deposed->term, old_term);
  EXPECT_EQ(deposed->reason, StepDownReason::kLeaseLost);
  // A fresh lease, a new term.
  Term new_term = 0;
  ASSERT_TRUE(WaitUntil([&] { return elector.Leading(&new_term); }, kLong));
  EXPECT_GT(new_term, old_term);
  EXPECT_EQ(elector.Stats().step_downs[size_t(StepDownReason::kLeaseLost)], 1u);
  EXPECT_EQ(elector.Stats().leases_granted, 2u);
}

}  // namespace
}  // namespace leader_elector_fake_test
}  // namespace mooncake_tier::ha
