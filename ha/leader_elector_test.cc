// LeaderElector: the step-down arithmetic on a manual clock, then elections
// against a real etcd (tests/support/etcd_server.h; skipped without
// /usr/bin/etcd): one leader among several, handover on Stop, Resign and a
// killed leader, a paused or killed etcd, and, against a fake gateway
// whose replies the test paces, that the window counts from a renewal's
// send.
//
// Leases use TTL 1 s (etcd's minimum with the fixture's flags), so the
// margin and the renewal interval default to 250 ms and the safe window is
// 750 ms from a renewal's send.

#include "ha/leader_elector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "ha/etcd_json.h"
#include "httplib.h"
#include "tests/support/etcd_server.h"

namespace mooncake_tier::ha {
namespace {

using mooncake_tier::testing::EtcdServer;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr milliseconds kLong(5000);   // bound of waits that should be short
constexpr milliseconds kWindow(750);  // TTL 1 s - margin 250 ms
// Lets etcd take a new candidate's watch into its synced set (it syncs
// every 100 ms), as it has long done for a standby in production.
constexpr milliseconds kSettle(200);

bool WaitUntil(const std::function<bool()>& done, milliseconds timeout) {
  const auto until = steady_clock::now() + timeout;
  while (!done()) {
    if (steady_clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return true;
}

milliseconds Since(steady_clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
}

// Nanoseconds, so that failed comparisons of instants print numbers.
int64_t Ns(steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

// What the callbacks reported, with when.
class Events {
 public:
  LeaderElectorCallbacks Callbacks() {
    return {[this](Term term) {
              MutexLock lock(&mu_);
              elected_.push_back(term);
            },
            [this](Term term, StepDownReason reason) {
              MutexLock lock(&mu_);
              deposed_.push_back({term, reason, steady_clock::now()});
            }};
  }

  struct Deposed {
    Term term;
    StepDownReason reason;
    steady_clock::time_point at;
  };
  std::vector<Term> elected() const {
    MutexLock lock(&mu_);
    return elected_;
  }
  std::vector<Deposed> deposed() const {
    MutexLock lock(&mu_);
    return deposed_;
  }
  // The first step-down, waiting up to kLong for it.
  std::optional<Deposed> FirstDeposed() const {
    std::optional<Deposed> first;
    WaitUntil(
        [&] {
          MutexLock lock(&mu_);
          if (!deposed_.empty()) first = deposed_.front();
          return first.has_value();
        },
        kLong);
    return first;
  }

 private:
  mutable Mutex mu_;
  std::vector<Term> elected_ ABSL_GUARDED_BY(mu_);
  std::vector<Deposed> deposed_ ABSL_GUARDED_BY(mu_);
};

// One master process's elector and what it reported.
struct Candidate {
  Events events;
  std::unique_ptr<LeaderElector> elector;  // after `events`, which it calls
};

LeaderElectorOptions Options(const std::string& endpoint,
                             const std::string& cluster,
                             const std::string& value) {
  LeaderElectorOptions options;
  options.etcd.endpoints = {endpoint};
  options.cluster = cluster;
  options.value = value;
  options.lease_ttl = std::chrono::seconds(1);
  return options;
}

std::unique_ptr<Candidate> StartCandidate(LeaderElectorOptions options) {
  auto candidate = std::make_unique<Candidate>();
  Result<std::unique_ptr<LeaderElector>> elector =
      LeaderElector::Create(std::move(options), candidate->events.Callbacks());
  EXPECT_TRUE(elector.ok()) << elector.status().ToString();
  if (!elector.ok()) return nullptr;
  candidate->elector = std::move(elector).value();
  const Status started = candidate->elector->Start();
  EXPECT_TRUE(started.ok()) << started.ToString();
  return candidate;
}

using Candidates = std::vector<std::unique_ptr<Candidate>>;

// `n` candidates of `cluster`, valued "master-<i>:<9000 + i>".
Candidates StartCandidates(const std::string& endpoint,
                           const std::string& cluster, int n) {
  Candidates candidates;
  for (int i = 0; i < n; ++i) {
    candidates.push_back(StartCandidate(Options(
        endpoint, cluster,
        "master-" + std::to_string(i) + ":" + std::to_string(9000 + i))));
  }
  return candidates;
}

// The index of the one candidate that leads when exactly one does, else -1.
int SoleLeader(const Candidates& candidates) {
  int leader = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i] == nullptr || !candidates[i]->elector->Leading()) {
      continue;
    }
    if (leader >= 0) return -1;
    leader = int(i);
  }
  return leader;
}

int WaitForSoleLeader(const Candidates& candidates,
                      milliseconds timeout = kLong) {
  int leader = -1;
  WaitUntil([&] { return (leader = SoleLeader(candidates)) >= 0; }, timeout);
  return leader;
}

// Every live candidate reports `leader` (value and term) as the leader.
bool AllSee(const Candidates& candidates, const LeaderInfo& leader) {
  return WaitUntil(
      [&] {
        for (const auto& c : candidates) {
          if (c == nullptr) continue;
          std::optional<LeaderInfo> seen = c->elector->CurrentLeader();
          if (!seen || seen->value != leader.value ||
              seen->term != leader.term) {
            return false;
          }
        }
        return true;
      },
      kLong);
}

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

// ---- Against a real etcd, shared by the tests that leave it running; each
// test is its own cluster.

class LeaderElectorTest : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    if (!EtcdServer::Available()) GTEST_SKIP() << EtcdServer::kMissing;
    if (server_ == nullptr) {
      auto server = std::make_unique<EtcdServer>();
      const Status started = server->Start();
      ASSERT_TRUE(started.ok()) << started.ToString();
      server_ = std::move(server);
    }
    cluster_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  Candidates StartCandidates(int n) {
    return ha::StartCandidates(server_->endpoint(), cluster_, n);
  }

  static std::unique_ptr<EtcdServer> server_;
  std::string cluster_;
};

std::unique_ptr<EtcdServer> LeaderElectorTest::server_;

void OneOfSeveralLeads(Candidates& candidates) {
  const int leader = WaitForSoleLeader(candidates);
  ASSERT_GE(leader, 0);
  LeaderElector& elector = *candidates[leader]->elector;
  Term term = 0;
  ASSERT_TRUE(elector.Leading(&term));
  EXPECT_GT(term, 0);
  // on_elected runs just after Leading() turned true.
  EXPECT_TRUE(WaitUntil(
      [&] { return !candidates[leader]->events.elected().empty(); }, kLong));
  EXPECT_EQ(candidates[leader]->events.elected(), std::vector<Term>{term});
  EXPECT_TRUE(AllSee(candidates, {elector.options().value, term}));
  std::optional<LeaderInfo> seen =
      candidates[(leader + 1) % candidates.size()]->elector->WaitForLeader(
          kLong);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->term, term);

  // Nobody else takes over while the leader renews (a few windows).
  std::this_thread::sleep_for(milliseconds(1000));
  EXPECT_EQ(SoleLeader(candidates), leader);
  const LeaderElectorStats stats = elector.Stats();
  EXPECT_EQ(stats.role, ElectorRole::kLeading);
  EXPECT_EQ(stats.term, term);
  EXPECT_EQ(stats.elections_won, 1u);
  EXPECT_GE(stats.renewals_ok, 2u);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (int(i) == leader) continue;
    EXPECT_EQ(candidates[i]->elector->Stats().role, ElectorRole::kCampaigning);
    EXPECT_TRUE(candidates[i]->events.elected().empty());
  }
}

TEST_F(LeaderElectorTest, OneOfTwoLeadsAndTheOtherSeesIt) {
  Candidates candidates = StartCandidates(2);
  OneOfSeveralLeads(candidates);
}

TEST_F(LeaderElectorTest, OneOfThreeLeadsAndTheOthersSeeIt) {
  Candidates candidates = StartCandidates(3);
  OneOfSeveralLeads(candidates);
}

TEST_F(LeaderElectorTest, StoppedLeaderIsReplacedAtOnce) {
  Candidates candidates = StartCandidates(2);
  const int leader = WaitForSoleLeader(candidates);
  ASSERT_GE(leader, 0);
  Term old_term = 0;
  ASSERT_TRUE(candidates[leader]->elector->Leading(&old_term));
  Candidate& standby = *candidates[1 - leader];
  // etcd delivers a deletion to a watcher it created less than ~100 ms ago
  // only at its next sync: measure the handover to a settled standby.
  std::this_thread::sleep_for(kSettle);

  const auto start = steady_clock::now();
  candidates[leader]->elector->Stop();
  const milliseconds stop_took = Since(start);
  EXPECT_FALSE(candidates[leader]->elector->Leading());
  Term new_term = 0;
  ASSERT_TRUE(
      WaitUntil([&] { return standby.elector->Leading(&new_term); }, kLong));
  const milliseconds handover = Since(start);
  std::printf("stop took %lld ms; handover after Stop: %lld ms\n",
              (long long)stop_took.count(), (long long)handover.count());
  EXPECT_LT(handover, milliseconds(500));
  EXPECT_GT(new_term, old_term);

  const std::vector<Events::Deposed> deposed =
      candidates[leader]->events.deposed();
  ASSERT_EQ(deposed.size(), 1u);
  EXPECT_EQ(deposed[0].term, old_term);
  EXPECT_EQ(deposed[0].reason, StepDownReason::kStopped);
  EXPECT_EQ(candidates[leader]->elector->Stats().role, ElectorRole::kStopped);
  candidates[leader].reset();
  EXPECT_TRUE(AllSee(candidates, {standby.elector->options().value, new_term}));
}

TEST_F(LeaderElectorTest, ResignedLeaderCampaignsAgainBehindTheOther) {
  Candidates candidates = StartCandidates(2);
  const int leader = WaitForSoleLeader(candidates);
  ASSERT_GE(leader, 0);
  LeaderElector& resigner = *candidates[leader]->elector;
  LeaderElector& other = *candidates[1 - leader]->elector;
  Term old_term = 0;
  ASSERT_TRUE(resigner.Leading(&old_term));
  std::this_thread::sleep_for(kSettle);

  const auto start = steady_clock::now();
  resigner.Resign();
  EXPECT_FALSE(resigner.Leading());
  Term new_term = 0;
  ASSERT_TRUE(WaitUntil([&] { return other.Leading(&new_term); }, kLong));
  std::printf("handover after Resign: %lld ms\n",
              (long long)Since(start).count());
  EXPECT_LT(Since(start), milliseconds(500));
  EXPECT_GT(new_term, old_term);
  EXPECT_TRUE(AllSee(candidates, {other.options().value, new_term}));
  EXPECT_FALSE(resigner.Leading());
  // It revokes its lease, takes a fresh one and waits behind the other.
  EXPECT_TRUE(WaitUntil(
      [&] { return resigner.Stats().role == ElectorRole::kCampaigning; },
      kLong));
  ASSERT_EQ(candidates[leader]->events.deposed().size(), 1u);
  EXPECT_EQ(candidates[leader]->events.deposed()[0].reason,
            StepDownReason::kResigned);
  EXPECT_EQ(resigner.Stats().step_downs[size_t(StepDownReason::kResigned)], 1u);

  // It is next in line.
  other.Stop();
  EXPECT_TRUE(WaitUntil([&] { return resigner.Leading(); }, kLong));
}

TEST_F(LeaderElectorTest, KilledLeaderIsReplacedAfterItsLeaseNeverTwoAtOnce) {
  Candidates candidates = StartCandidates(3);
  const int leader = WaitForSoleLeader(candidates);
  ASSERT_GE(leader, 0);
  Term old_term = 0;
  ASSERT_TRUE(candidates[leader]->elector->Leading(&old_term));

  const auto start = steady_clock::now();
  candidates[leader]->elector->AbandonForTest();  // as kill -9
  int new_leader = -1;
  steady_clock::time_point old_last_true = start;
  int samples = 0;
  while (Since(start) < milliseconds(4000)) {
    const steady_clock::time_point before = steady_clock::now();
    int leading = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (!candidates[i]->elector->Leading()) continue;
      ++leading;
      if (int(i) == leader) old_last_true = before;
      if (int(i) != leader) new_leader = int(i);
    }
    ++samples;
    ASSERT_LE(leading, 1) << "two leaders at " << Since(start).count() << " ms";
    if (new_leader >= 0) break;
    std::this_thread::sleep_for(milliseconds(2));
  }
  const milliseconds handover = Since(start);
  ASSERT_GE(new_leader, 0) << "nobody took over";
  const milliseconds old_lasted =
      std::chrono::duration_cast<milliseconds>(old_last_true - start);
  std::printf(
      "killed leader: its Leading() last true %lld ms after, new leader "
      "after %lld ms (%d samples)\n",
      (long long)old_lasted.count(), (long long)handover.count(), samples);
  // Its last renewal was sent before it was killed.
  EXPECT_LT(old_lasted, kWindow);
  EXPECT_LT(handover, milliseconds(1000 + 1500));
  Term new_term = 0;
  ASSERT_TRUE(candidates[new_leader]->elector->Leading(&new_term));
  EXPECT_GT(new_term, old_term);
  EXPECT_TRUE(candidates[leader]->events.deposed().empty());
  candidates[leader].reset();
  EXPECT_TRUE(
      AllSee(candidates,
             {candidates[new_leader]->elector->options().value, new_term}));
}

TEST_F(LeaderElectorTest, DeletedKeyDeposesTheLeader) {
  Candidates candidates = StartCandidates(2);
  const int leader = WaitForSoleLeader(candidates);
  ASSERT_GE(leader, 0);
  Term old_term = 0;
  ASSERT_TRUE(candidates[leader]->elector->Leading(&old_term));

  EtcdClientOptions options;
  options.endpoints = {server_->endpoint()};
  Result<std::unique_ptr<EtcdClient>> client = EtcdClient::Create(options);
  ASSERT_TRUE(client.ok());
  const std::string election = LeaderElector::ElectionName(cluster_);
  Result<std::optional<KeyValue>> key = (*client)->Leader(election);
  ASSERT_TRUE(key.ok() && key->has_value()) << key.status().ToString();
  ASSERT_EQ((*key)->create_revision, old_term);
  ASSERT_TRUE((*client)->Delete((*key)->key).ok());

  const std::optional<Events::Deposed> deposed =
      candidates[leader]->events.FirstDeposed();
  ASSERT_TRUE(deposed.has_value());
  EXPECT_EQ(deposed->reason, StepDownReason::kKeyLost);
  EXPECT_EQ(deposed->term, old_term);
  const int next = WaitForSoleLeader(candidates);
  ASSERT_GE(next, 0);
  Term new_term = 0;
  ASSERT_TRUE(candidates[next]->elector->Leading(&new_term));
  EXPECT_GT(new_term, old_term);
}

TEST_F(LeaderElectorTest, StoppingAStandbyIsPromptAndLeavesTheLeader) {
  Candidates candidates = StartCandidates(2);
  const int leader = WaitForSoleLeader(candidates);
  ASSERT_GE(leader, 0);
  Term term = 0;
  ASSERT_TRUE(candidates[leader]->elector->Leading(&term));
  EXPECT_EQ(candidates[leader]->elector->Start().reason(),
            ErrorReason::kNotApplicable);

  const auto start = steady_clock::now();
  candidates[1 - leader]->elector->Stop();
  EXPECT_LT(Since(start), milliseconds(500));
  EXPECT_TRUE(candidates[1 - leader]->events.deposed().empty());
  EXPECT_FALSE(candidates[1 - leader]->elector->Leading());
  Term still = 0;
  EXPECT_TRUE(candidates[leader]->elector->Leading(&still));
  EXPECT_EQ(still, term);
}

// ---- etcd itself failing: each test owns its etcd.

class LeaderElectorFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EtcdServer::Available()) GTEST_SKIP() << EtcdServer::kMissing;
    server_ = std::make_unique<EtcdServer>();
    const Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
  }

  std::unique_ptr<EtcdServer> server_;  // outlives the electors below
};

// The leader whose etcd stops answering: Leading() is never true past the
// window of its last confirmed renewal, which was sent before the pause;
// on_deposed follows at once.
void ExpectStepDownByTheWindow(Candidate& leader, Term term,
                               steady_clock::time_point cut_off) {
  // A reply already on its way may still move the window, never past the
  // cut-off + the window.
  TimePoint valid_until = TimePoint::min();
  steady_clock::time_point last_true;
  while (true) {
    const steady_clock::time_point before = steady_clock::now();
    const TimePoint until = leader.elector->LeaseValidUntil();
    if (!leader.elector->Leading()) break;
    valid_until = std::max(valid_until, until);
    last_true = before;
    ASSERT_LT(Since(cut_off), milliseconds(3000));
  }
  ASSERT_NE(valid_until, TimePoint::min()) << "not leading at the cut-off";
  // In nanoseconds after the cut-off.
  EXPECT_LE(Ns(valid_until - cut_off), Ns(kWindow));
  EXPECT_LT(Ns(last_true - cut_off), Ns(valid_until - cut_off));
  const std::optional<Events::Deposed> deposed = leader.events.FirstDeposed();
  ASSERT_TRUE(deposed.has_value());
  EXPECT_EQ(deposed->term, term);
  EXPECT_EQ(deposed->reason, StepDownReason::kWindowLapsed);
  std::printf(
      "etcd cut off: window ended %lld ms after, on_deposed %lld ms after\n",
      (long long)std::chrono::duration_cast<milliseconds>(valid_until - cut_off)
          .count(),
      (long long)std::chrono::duration_cast<milliseconds>(deposed->at - cut_off)
          .count());
  EXPECT_LT(Ns(deposed->at - valid_until), Ns(milliseconds(500)));
}

TEST_F(LeaderElectorFailureTest, PausedEtcdEndsLeadershipByTheWindow) {
  Candidates candidates = StartCandidates(server_->endpoint(), "paused", 2);
  const int leader = WaitForSoleLeader(candidates);
  ASSERT_GE(leader, 0);
  Term old_term = 0;
  ASSERT_TRUE(candidates[leader]->elector->Leading(&old_term));
  std::this_thread::sleep_for(milliseconds(300));  // mid-renewals

  server_->Pause();
  const steady_clock::time_point paused = steady_clock::now();
  ExpectStepDownByTheWindow(*candidates[leader], old_term, paused);
  EXPECT_EQ(SoleLeader(candidates), -1);

  // Stopping the standby now waits at most for the calls it has in flight
  // to an etcd that answers nothing (500 ms call timeout each).
  const auto stop_start = steady_clock::now();
  candidates[1 - leader]->elector->Stop();
  std::printf("standby stopped in %lld ms with etcd paused\n",
              (long long)Since(stop_start).count());
  EXPECT_LT(Since(stop_start), milliseconds(1500));

  server_->Resume();
  const auto resumed = steady_clock::now();
  const int next = WaitForSoleLeader(candidates);
  ASSERT_GE(next, 0);
  std::printf("a leader again %lld ms after etcd resumed\n",
              (long long)Since(resumed).count());
  Term new_term = 0;
  ASSERT_TRUE(candidates[next]->elector->Leading(&new_term));
  EXPECT_GT(new_term, old_term);
}

TEST_F(LeaderElectorFailureTest, KilledEtcdEndsLeadershipARestartElectsAgain) {
  Candidates candidates = StartCandidates(server_->endpoint(), "killed", 2);
  const int leader = WaitForSoleLeader(candidates);
  ASSERT_GE(leader, 0);
  Term old_term = 0;
  ASSERT_TRUE(candidates[leader]->elector->Leading(&old_term));

  server_->Kill();
  const steady_clock::time_point killed = steady_clock::now();
  ExpectStepDownByTheWindow(*candidates[leader], old_term, killed);

  // The old lease comes back with etcd (its TTL restarts): the old leader
  // revokes it before campaigning, so nobody waits it out.
  ASSERT_TRUE(server_->Start().ok());
  const auto restarted = steady_clock::now();
  const int next = WaitForSoleLeader(candidates);
  ASSERT_GE(next, 0);
  std::printf("a leader again %lld ms after etcd restarted\n",
              (long long)Since(restarted).count());
  Term new_term = 0;
  ASSERT_TRUE(candidates[next]->elector->Leading(&new_term));
  EXPECT_GT(new_term, old_term);
}

// With the clock driven by hand, leadership ends exactly where the window
// does, even though no renewal failed yet (etcd is only paused).
TEST_F(LeaderElectorFailureTest, ClockPassingTheWindowEndsLeadership) {
  ManualClock clock;
  LeaderElectorOptions options = Options(server_->endpoint(), "manual", "m");
  options.clock = &clock;
  std::unique_ptr<Candidate> candidate = StartCandidate(options);
  ASSERT_NE(candidate, nullptr);
  LeaderElector& elector = *candidate->elector;
  ASSERT_TRUE(WaitUntil([&] { return elector.Leading(); }, kLong));
  Term old_term = 0;
  ASSERT_TRUE(elector.Leading(&old_term));
  // Every confirmation was sent at the frozen time.
  EXPECT_EQ(elector.LeaseValidUntil(), clock.Now() + kWindow);

  server_->Pause();
  clock.Advance(kWindow - milliseconds(1));
  EXPECT_TRUE(elector.Leading());
  clock.Advance(milliseconds(1));
  EXPECT_FALSE(elector.Leading());
  std::optional<Events::Deposed> deposed = candidate->events.FirstDeposed();
  ASSERT_TRUE(deposed.has_value());
  EXPECT_EQ(deposed->reason, StepDownReason::kWindowLapsed);

  server_->Resume();
  Term new_term = 0;
  ASSERT_TRUE(WaitUntil([&] { return elector.Leading(&new_term); }, kLong));
  EXPECT_GT(new_term, old_term);
  const LeaderElectorStats stats = elector.Stats();
  EXPECT_EQ(stats.elections_won, 2u);
  EXPECT_EQ(stats.step_downs[size_t(StepDownReason::kWindowLapsed)], 1u);
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
}  // namespace mooncake_tier::ha
