// LeaderElector against a real etcd (tests/support/etcd_server.h; skipped
// without /usr/bin/etcd): one leader among several, handover on Stop,
// Resign and a killed leader, a paused or killed etcd. The step-down
// arithmetic and a fake gateway's paced renewals are in
// leader_elector_fake_test.cc.
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
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "ha/leader_elector_test_util.h"
#include "tests/support/etcd_server.h"
#include "tests/support/ignore_sigpipe.h"

namespace mooncake_tier::ha {
namespace leader_elector_test {
namespace {

using elector_test::Candidate;
using elector_test::Events;
using elector_test::kLong;
using elector_test::Ns;
using elector_test::Options;
using elector_test::Since;
using elector_test::StartCandidate;
using elector_test::WaitUntil;

using mooncake_tier::testing::EtcdServer;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr milliseconds kWindow(750);  // TTL 1 s - margin 250 ms
// Lets etcd take a new candidate's watch into its synced set (it syncs
// every 100 ms), as it has long done for a standby in production.
constexpr milliseconds kSettle(200);

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
    return leader_elector_test::StartCandidates(server_->endpoint(), cluster_,
                                                n);
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

}  // namespace
}  // namespace leader_elector_test
}  // namespace mooncake_tier::ha
