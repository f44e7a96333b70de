// Following the leader over real gRPC: masters whose MasterSource is
// switched by the test between serving (in a term) and standing by
// (NOT_LEADER naming another address), reached through GrpcMasterApi and
// GrpcMasterLink given one or several addresses.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "rpc/grpc_master_api.h"
#include "rpc/grpc_master_link.h"
#include "rpc/master_service.h"
#include "rpc/master_source.h"
#include "rpc/rpc_server.h"
#include "tests/support/eventually.h"
#include "tests/support/master_harness.h"
#include "tests/support/silent_listener.h"

namespace mooncake_tier::rpc {
namespace leader_follow_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::MasterHarness;
using testing::SilentListener;

// A master whose role the test sets: leading in a term (served by its own
// engine), or standing by and naming a leader.
class SwitchableSource final : public MasterSource {
 public:
  explicit SwitchableSource(MasterHarness* harness) : harness_(harness) {}

  void Lead(uint64_t term) {
    MutexLock lock(&mu_);
    term_ = term;
    leading_ = true;
  }
  void StandBy(std::string leader) {
    MutexLock lock(&mu_);
    leading_ = false;
    leader_ = std::move(leader);
  }
  // The next call is served, then found to have outlived leadership: the
  // master stands by from then on, knowing no leader.
  void LoseLeadershipDuringNextCall() { lose_during_call_ = true; }
  int refused() const { return refused_; }

  Result<ServingMaster> Acquire(Caller, std::string* leader) override {
    MutexLock lock(&mu_);
    if (!leading_) {
      ++refused_;
      *leader = leader_;
      return Status(ErrorReason::kNotLeader, "standby (test)");
    }
    return ServingMaster{&harness_->api(), &harness_->link(), term_, nullptr};
  }
  void CapGrants(Duration cap) { grant_cap_ = cap.count(); }
  Duration GrantCap(const ServingMaster&) override {
    return Duration(grant_cap_.load());
  }
  bool StillServing(const ServingMaster&) override {
    if (!lose_during_call_.exchange(false)) return true;
    MutexLock lock(&mu_);
    leading_ = false;
    leader_.clear();
    return false;
  }

 private:
  MasterHarness* const harness_;
  Mutex mu_;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t term_ ABSL_GUARDED_BY(mu_) = 0;
  std::string leader_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> lose_during_call_{false};
  std::atomic<Duration::rep> grant_cap_{Duration::max().count()};
  std::atomic<int> refused_{0};
};

// One master: its engine, its source and its server.
struct TestMaster {
  explicit TestMaster(const std::string& address = "127.0.0.1:0")
      : source(&harness), service(&source, {.clock = &harness.clock()}) {
    RpcServerOptions options;
    options.address = address;
    server = std::move(*RpcServer::Start(options, {service.grpc_service()}));
  }
  std::string address() const { return server->address(); }

  MasterHarness harness;
  SwitchableSource source;
  MasterService service;
  std::unique_ptr<RpcServer> server;
};

NodeSpec Spec(const std::string& name) {
  NodeSpec spec;
  spec.name = name;
  spec.dram_size = 64 << 20;
  spec.ssd_capacity = 0;
  spec.transport_address = std::string("\0addr", 5);
  return spec;
}

std::unique_ptr<GrpcMasterApi> ApiTo(const std::string& targets,
                                     milliseconds deadline = seconds(3)) {
  GrpcChannelOptions options;
  options.target = targets;
  options.deadline = deadline;
  return std::move(*GrpcMasterApi::Create(options));
}

std::unique_ptr<GrpcMasterLink> LinkTo(const std::string& targets) {
  GrpcChannelOptions options;
  options.target = targets;
  options.deadline = seconds(3);
  return std::move(*GrpcMasterLink::Create(options));
}

// Reaches the master with a call that needs no node: OK when served.
Status Probe(GrpcMasterApi& api) {
  Result<ExistsInfo> exists =
      std::move(api.Exists(std::vector<std::string>{"probe"})[0]);
  if (exists.ok() || exists.status().reason() == ErrorReason::kObjectNotFound) {
    return Status::Ok();
  }
  return exists.status();
}

Status Put(GrpcMasterApi& api, const std::string& key) {
  PutStartRequest request{key, 4096, {}, "client"};
  Result<ReplicaDescriptor> started = std::move(api.PutStart({&request, 1})[0]);
  if (!started.ok()) return started.status();
  return api.PutEnd("client", {&key, 1})[0];
}

TEST(LeaderFollowTest, ACallToAStandbyGoesToTheLeaderItNames) {
  TestMaster a;
  TestMaster b;
  a.source.StandBy(b.address());
  b.source.Lead(7);
  ASSERT_TRUE(LinkTo(b.address())->RegisterNode(Spec("n1"), {}, {}).ok());

  // Given only the standby's address.
  std::unique_ptr<GrpcMasterApi> api = ApiTo(a.address());
  ASSERT_TRUE(Put(*api, "k").ok());
  EXPECT_GE(a.source.refused(), 1);
  // The next call goes to the leader at once.
  const int refused = a.source.refused();
  ASSERT_TRUE(std::move(api->Exists(std::vector<std::string>{"k"})[0]).ok());
  EXPECT_EQ(a.source.refused(), refused);
}

TEST(LeaderFollowTest, FollowsTheLeaderFromOneMasterToAnother) {
  TestMaster a;
  TestMaster b;
  a.source.Lead(3);
  b.source.StandBy(a.address());
  const std::string both = a.address() + "," + b.address();
  std::unique_ptr<GrpcMasterLink> link = LinkTo(both);
  ASSERT_TRUE(link->RegisterNode(Spec("n1"), {}, {}).ok());
  std::unique_ptr<GrpcMasterApi> api = ApiTo(both);
  ASSERT_TRUE(Put(*api, "before").ok());

  // A failover: b leads in a later term, a stands by.
  a.source.StandBy(b.address());
  b.source.Lead(4);
  Result<NodeId> again = link->RegisterNode(Spec("n1"), {}, {});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(link->highest_term(), 4u);
  EXPECT_TRUE(Put(*api, "after").ok());
}

TEST(LeaderFollowTest, OnlyStandbysAnswerUntilTheDeadline) {
  TestMaster a;
  TestMaster b;
  a.source.StandBy("");  // an election under way: nobody known
  b.source.StandBy("");
  std::unique_ptr<GrpcMasterApi> api =
      ApiTo(a.address() + "," + b.address(), milliseconds(600));
  const auto start = std::chrono::steady_clock::now();
  const Status put = Probe(*api);
  const auto took = std::chrono::steady_clock::now() - start;
  // The last answer was a standby's refusal, or, on a loaded machine, the
  // attempt still in flight at the deadline.
  EXPECT_TRUE(put.reason() == ErrorReason::kNotLeader ||
              put.reason() == ErrorReason::kTimeout)
      << put.ToString();
  EXPECT_GE(a.source.refused() + b.source.refused(), 3);
  // Waited for its deadline, not forever.
  EXPECT_LT(took, seconds(3));

  // A leader appears while a call waits: the call succeeds.
  std::unique_ptr<GrpcMasterApi> patient =
      ApiTo(a.address() + "," + b.address(), seconds(5));
  std::thread elect([&] {
    std::this_thread::sleep_for(milliseconds(300));
    b.source.Lead(9);
  });
  const Status waited = Probe(*patient);
  elect.join();
  EXPECT_TRUE(waited.ok()) << waited.ToString();
}

TEST(LeaderFollowTest, AnUnreachableMasterIsSkippedWhenThereAreOthers) {
  TestMaster b;
  b.source.Lead(2);
  // Nothing listens on the first address (a master that died).
  TestMaster gone;
  const std::string dead = gone.address();
  gone.server->Shutdown(milliseconds(0));
  std::unique_ptr<GrpcMasterApi> api = ApiTo(dead + "," + b.address());
  EXPECT_TRUE(Probe(*api).ok());

  // Alone, an unreachable master still fails at once, as before.
  std::unique_ptr<GrpcMasterApi> alone = ApiTo(dead);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Probe(*alone).reason(), ErrorReason::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(2));
}

TEST(LeaderFollowTest, AMasterThatNeverAnswersIsLeftForAnother) {
  TestMaster b;
  b.source.Lead(2);
  // A master whose host accepts connections but whose process never
  // answers (paused, or hung): its connection never becomes ready; the
  // attempt is given up after twice the keepalive (2 s), not gRPC's 20 s,
  // well within the deadline.
  SilentListener silent;
  ASSERT_GT(silent.port(), 0);
  std::unique_ptr<GrpcMasterApi> api =
      ApiTo(silent.address() + "," + b.address(), seconds(8));
  Status probed = Probe(*api);
  EXPECT_TRUE(probed.ok()) << probed.ToString();
  // The stub stays with the master that answered.
  EXPECT_TRUE(Probe(*api).ok());
}

// One master address, and a connection attempt that never completes (a
// master that accepted the connection as it went away, or a SYN caught as
// a restarted master began to listen): the attempt is given up after
// MasterStub::kConnectTimeout and the call fails UNAVAILABLE well before
// its deadline (with gRPC's default it would wait out the deadline, and
// every call behind it too); the calls after it reach the master that now
// listens there.
TEST(LeaderFollowTest, AConnectionAttemptThatNeverCompletesIsGivenUp) {
  SilentListener silent;
  ASSERT_GT(silent.port(), 0);
  std::unique_ptr<GrpcMasterApi> api = ApiTo(silent.address(), seconds(8));
  std::unique_ptr<TestMaster> back;
  std::thread restart([&] {
    ASSERT_TRUE(silent.WaitForConnection(seconds(5)));
    silent.HoldConnectionsAndStopListening();
    back = std::make_unique<TestMaster>(silent.address());
    back->source.Lead(1);
  });
  const auto start = std::chrono::steady_clock::now();
  const Status first = Probe(*api);
  const auto took = std::chrono::steady_clock::now() - start;
  restart.join();
  EXPECT_EQ(first.reason(), ErrorReason::kUnavailable) << first.ToString();
  EXPECT_LT(took, seconds(6)) << "the call waited for its deadline";
  // Once gRPC's reconnect backoff (at most a second) has passed.
  EXPECT_TRUE(
      testing::Eventually([&] { return Probe(*api).ok(); }, seconds(4)));
}

// A leader's grants run out with its lease's window: the reply's
// write_within_ms is cut to what the source can vouch for.
TEST(LeaderFollowTest, AGrantNeverOutlastsWhatTheLeaderCanVouchFor) {
  TestMaster a;
  a.source.Lead(2);
  a.harness.AddNode("n", 64 << 20);
  std::unique_ptr<GrpcMasterApi> api = ApiTo(a.address());
  PutStartRequest request{"k", 4096, {}, "client"};
  Result<ReplicaDescriptor> full = std::move(api->PutStart({&request, 1})[0]);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->write_within_ms,
            std::chrono::duration_cast<milliseconds>(
                a.harness.master().config().EffectiveGrantWindow())
                .count());
  a.source.CapGrants(milliseconds(300));
  request.key = "k2";
  Result<ReplicaDescriptor> cut = std::move(api->PutStart({&request, 1})[0]);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(cut->write_within_ms, 300u);
  // A window already over: the grant is useless, and says so.
  a.source.CapGrants(-milliseconds(5));
  request.key = "k3";
  Result<ReplicaDescriptor> none = std::move(api->PutStart({&request, 1})[0]);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->write_within_ms, 0u);
}

TEST(LeaderFollowTest, ANodeRefusesAnswersOfAnOlderTerm) {
  TestMaster b;
  b.source.Lead(5);
  std::unique_ptr<GrpcMasterLink> link = LinkTo(b.address());
  Result<NodeId> id = link->RegisterNode(Spec("n1"), {}, {});
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(link->highest_term(), 5u);
  // A second link (another node) sees term 5 too; then the master answers
  // as term 4 does, a leader paused while term 5 began.
  std::unique_ptr<GrpcMasterLink> same_node = LinkTo(b.address());
  ASSERT_TRUE(same_node->RegisterNode(Spec("n2"), {}, {}).ok());
  b.source.Lead(4);
  Result<NodeId> stale = same_node->RegisterNode(Spec("n2"), {}, {});
  EXPECT_EQ(stale.status().reason(), ErrorReason::kNotLeader)
      << stale.status().ToString();
  Result<NodeTasks> tasks = same_node->PullTasks(*id, 8, milliseconds(0));
  EXPECT_EQ(tasks.status().reason(), ErrorReason::kNotLeader);
  Result<DirectoryChanges> changes =
      same_node->SyncDirectory(*id, 0, 8, milliseconds(0));
  EXPECT_EQ(changes.status().reason(), ErrorReason::kNotLeader);
}

TEST(LeaderFollowTest, ACallThatOutlivedLeadershipIsRefused) {
  TestMaster a;
  a.source.Lead(1);
  std::unique_ptr<GrpcMasterApi> api = ApiTo(a.address(), milliseconds(500));
  ASSERT_TRUE(Probe(*api).ok());
  // Served, then found to have outlived the term: NOT_LEADER, and the
  // master stands by, so the retries until the deadline are refused too.
  a.source.LoseLeadershipDuringNextCall();
  EXPECT_EQ(Probe(*api).reason(), ErrorReason::kNotLeader);
  a.source.Lead(2);
  EXPECT_TRUE(Probe(*api).ok());
}

}  // namespace
}  // namespace leader_follow_test
}  // namespace mooncake_tier::rpc
