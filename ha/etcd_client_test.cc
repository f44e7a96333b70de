// EtcdClient against a real etcd (tests/support/etcd_server.h): leases,
// keys, the fenced write, elections, watches, and what callers see when
// etcd dies, hangs or is one of several endpoints. Skips without
// /usr/bin/etcd.
//
// Leases use TTL 1, the minimum etcd grants with the fixture's 100 ms
// election timeout (1.5 election timeouts, rounded up to a second); such a
// lease, not renewed, was gone 1.2-1.5 s after its grant.

#include "ha/etcd_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "httplib.h"
#include "tests/support/etcd_server.h"
#include "tests/support/ignore_sigpipe.h"

namespace mooncake_tier::ha {
namespace etcd_client_test {
namespace {

using mooncake_tier::testing::EtcdServer;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr milliseconds kLong(5000);  // bound of waits that should be short

// Polls `done` every 20 ms until it holds (true) or `timeout` passes.
bool WaitUntil(const std::function<bool()>& done, milliseconds timeout) {
  const auto until = steady_clock::now() + timeout;
  while (!done()) {
    if (steady_clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

milliseconds Since(steady_clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
}

// Runs a long call on its own thread. Cancels and joins when destroyed, so
// a failed assertion cannot leave the test hung on it.
template <typename T>
class Background {
 public:
  Background(CallCanceller* cancel, std::function<T()> call)
      : cancel_(cancel),
        future_(std::async(std::launch::async, std::move(call))) {}
  ~Background() {
    if (future_.valid()) {
      cancel_->Cancel();
      future_.wait();
    }
  }
  bool Finished(milliseconds wait = milliseconds(0)) {
    return future_.wait_for(wait) == std::future_status::ready;
  }
  T Take() { return future_.get(); }

 private:
  CallCanceller* const cancel_;
  std::future<T> future_;
};

std::unique_ptr<EtcdClient> MakeClient(
    std::vector<std::string> endpoints,
    const std::function<void(EtcdClientOptions&)>& adjust = nullptr) {
  EtcdClientOptions options;
  options.endpoints = std::move(endpoints);
  if (adjust) adjust(options);
  Result<std::unique_ptr<EtcdClient>> client =
      EtcdClient::Create(std::move(options));
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

// Every byte value, NUL and invalid UTF-8 included.
std::string AllBytes() {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(char(b));
  return bytes;
}

// One etcd shared by the tests that leave it running; each test works
// under its own key prefix.
class EtcdClientTest : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    if (!EtcdServer::Available()) GTEST_SKIP() << EtcdServer::kMissing;
    if (server_ == nullptr) {
      auto server = std::make_unique<EtcdServer>();
      Status started = server->Start();
      ASSERT_TRUE(started.ok()) << started.ToString();
      server_ = std::move(server);
    }
    client_ = MakeClient({server_->endpoint()});
    ASSERT_NE(client_, nullptr);
    prefix_ = std::string("/test/") +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() +
              "/";
  }

  // A lease of `ttl` seconds; fails the test when it cannot be had.
  int64_t Lease(int64_t ttl) {
    Result<LeaseGrant> grant = client_->GrantLease(ttl);
    EXPECT_TRUE(grant.ok()) << grant.status().ToString();
    return grant.ok() ? grant->id : 0;
  }

  size_t KeysUnder(const std::string& prefix) {
    Result<PrefixRange> range = client_->GetPrefix(prefix);
    EXPECT_TRUE(range.ok()) << range.status().ToString();
    return range.ok() ? range->kvs.size() : 0;
  }

  static std::unique_ptr<EtcdServer> server_;
  std::unique_ptr<EtcdClient> client_;
  std::string prefix_;
};

std::unique_ptr<EtcdServer> EtcdClientTest::server_;

TEST(EtcdClientOptionsTest, RejectsBadOptions) {
  EXPECT_EQ(EtcdClient::Create({}).status().reason(),
            ErrorReason::kInvalidArgument);
  for (const char* endpoint :
       {"127.0.0.1", "127.0.0.1:0", "127.0.0.1:99999", ":2379",
        "https://127.0.0.1:2379", "127.0.0.1:23x"}) {
    EtcdClientOptions options;
    options.endpoints = {endpoint};
    EXPECT_EQ(EtcdClient::Create(options).status().reason(),
              ErrorReason::kInvalidArgument)
        << endpoint;
  }
  EtcdClientOptions options;
  options.endpoints = {"http://127.0.0.1:2379", "[::1]:2379"};
  EXPECT_TRUE(EtcdClient::Create(options).ok());
  options.call_timeout = milliseconds(0);
  EXPECT_FALSE(EtcdClient::Create(options).ok());
}

TEST_F(EtcdClientTest, LeaseGrantRenewRevoke) {
  EXPECT_EQ(client_->GrantLease(0).status().reason(),
            ErrorReason::kInvalidArgument);
  Result<LeaseGrant> grant = client_->GrantLease(30);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  EXPECT_NE(grant->id, 0);
  EXPECT_EQ(grant->ttl_seconds, 30);

  Result<int64_t> renewed = client_->RenewLease(grant->id);
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(*renewed, 30);
  Result<int64_t> left = client_->LeaseTimeToLive(grant->id);
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  EXPECT_GE(*left, 28);
  EXPECT_LE(*left, 30);

  ASSERT_TRUE(client_->RevokeLease(grant->id).ok());
  EXPECT_EQ(client_->RenewLease(grant->id).status().reason(),
            ErrorReason::kObjectNotFound);
  EXPECT_EQ(client_->LeaseTimeToLive(grant->id).status().reason(),
            ErrorReason::kObjectNotFound);
  EXPECT_EQ(client_->RevokeLease(grant->id).reason(),
            ErrorReason::kObjectNotFound);
}

TEST_F(EtcdClientTest, UnrenewedLeaseExpiresRenewedOneLives) {
  const int64_t lapsing = Lease(1);
  const int64_t renewed = Lease(1);
  ASSERT_TRUE(client_->Put(prefix_ + "lapsing", "x", lapsing).ok());
  ASSERT_TRUE(client_->Put(prefix_ + "renewed", "y", renewed).ok());

  // Renew one every 200 ms while the other runs out (TimeToLive does not
  // renew).
  EXPECT_TRUE(WaitUntil(
      [&] {
        EXPECT_TRUE(client_->RenewLease(renewed).ok());
        return client_->LeaseTimeToLive(lapsing).status().reason() ==
               ErrorReason::kObjectNotFound;
      },
      kLong));
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(client_->RenewLease(lapsing).status().reason(),
            ErrorReason::kObjectNotFound);
  Result<std::optional<KeyValue>> gone = client_->Get(prefix_ + "lapsing");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value()) << "a lapsed lease's key stays";

  Result<int64_t> ttl = client_->RenewLease(renewed);
  ASSERT_TRUE(ttl.ok()) << ttl.status().ToString();
  EXPECT_EQ(*ttl, 1);
  Result<std::optional<KeyValue>> kept = client_->Get(prefix_ + "renewed");
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_EQ((*kept)->lease, renewed);
}

TEST_F(EtcdClientTest, PutGetAreBinarySafe) {
  const std::string key = prefix_ + std::string("k\0\xff\xc3(", 5);
  const std::string value = AllBytes() + AllBytes();
  Result<int64_t> first = client_->Put(key, value);
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  Result<std::optional<KeyValue>> got = client_->Get(key);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->key, key);
  EXPECT_EQ((*got)->value, value);
  EXPECT_EQ((*got)->create_revision, *first);
  EXPECT_EQ((*got)->mod_revision, *first);
  EXPECT_EQ((*got)->version, 1);
  EXPECT_EQ((*got)->lease, 0);

  // Every tail length of the base64 groups, and the empty value etcd
  // leaves out of its reply.
  for (const std::string& v :
       {std::string(), std::string(1, '\0'), std::string("\xff\xfe", 2),
        std::string("abc")}) {
    Result<int64_t> again = client_->Put(key, v);
    ASSERT_TRUE(again.ok());
    got = client_->Get(key);
    ASSERT_TRUE(got.ok() && got->has_value());
    EXPECT_EQ((*got)->value, v);
    EXPECT_EQ((*got)->create_revision, *first) << "an overwrite recreated";
    EXPECT_EQ((*got)->mod_revision, *again);
  }
  EXPECT_EQ((*got)->version, 5);

  Result<std::optional<KeyValue>> missing = client_->Get(prefix_ + "none");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(client_->Put("", "v").status().reason(),
            ErrorReason::kInvalidArgument);
}

TEST_F(EtcdClientTest, PutWithLease) {
  const int64_t lease = Lease(30);
  ASSERT_TRUE(client_->Put(prefix_ + "k", "v", lease).ok());
  Result<std::optional<KeyValue>> got = client_->Get(prefix_ + "k");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->lease, lease);
  ASSERT_TRUE(client_->RevokeLease(lease).ok());
  got = client_->Get(prefix_ + "k");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value()) << "revoking keeps the lease's keys";
  EXPECT_EQ(client_->Put(prefix_ + "k", "v", lease).status().reason(),
            ErrorReason::kObjectNotFound);
}

TEST_F(EtcdClientTest, GetPrefixAndDelete) {
  // A prefix ending in 0xff: the range's end must carry into the byte
  // before it.
  const std::string p = prefix_ + "\xff";
  for (const std::string& k : {p + "b", p + "a", p + "\xff", p}) {
    ASSERT_TRUE(client_->Put(k, "v:" + k).ok());
  }
  Result<int64_t> outside = client_->Put(prefix_ + "~", "not under p");
  ASSERT_TRUE(outside.ok());

  Result<PrefixRange> range = client_->GetPrefix(p);
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  ASSERT_EQ(range->kvs.size(), 4u);
  EXPECT_EQ(range->kvs[0].key, p);
  EXPECT_EQ(range->kvs[1].key, p + "a");
  EXPECT_EQ(range->kvs[2].key, p + "b");
  EXPECT_EQ(range->kvs[3].key, p + "\xff");
  EXPECT_EQ(range->kvs[1].value, "v:" + p + "a");
  EXPECT_GE(range->revision, *outside);

  Result<bool> deleted = client_->Delete(p + "a");
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE(*deleted);
  deleted = client_->Delete(p + "a");
  ASSERT_TRUE(deleted.ok());
  EXPECT_FALSE(*deleted);
  EXPECT_EQ(KeysUnder(p), 3u);
  EXPECT_EQ(KeysUnder(prefix_ + "nothing/"), 0u);
  // The empty prefix is every key.
  EXPECT_GE(KeysUnder(""), 4u);
}

TEST_F(EtcdClientTest, FencedWriteNeedsTheGuardsCreateRevision) {
  const std::string guard = prefix_ + "leader";
  Result<int64_t> created = client_->Put(guard, "term 1");
  ASSERT_TRUE(created.ok());
  ASSERT_TRUE(client_->Put(prefix_ + "old", "x").ok());
  // Rewriting the guard keeps its create revision: still the same term.
  ASSERT_TRUE(client_->Put(guard, "term 1, new value").ok());

  Result<bool> applied =
      client_->FencedWrite(guard, *created,
                           {WriteOp::Put(prefix_ + "a", std::string("1\0", 2)),
                            WriteOp::Delete(prefix_ + "old")});
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_TRUE(*applied);
  Result<std::optional<KeyValue>> a = client_->Get(prefix_ + "a");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->value, std::string("1\0", 2));
  EXPECT_EQ(KeysUnder(prefix_ + "old"), 0u);

  // A new term: the guard deleted and created again.
  ASSERT_TRUE(client_->Delete(guard).ok());
  Result<int64_t> recreated = client_->Put(guard, "term 2");
  ASSERT_TRUE(recreated.ok());
  applied = client_->FencedWrite(guard, *created,
                                 {WriteOp::Put(prefix_ + "a", "stale")});
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_FALSE(*applied);
  a = client_->Get(prefix_ + "a");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->value, std::string("1\0", 2)) << "a stale write landed";

  applied = client_->FencedWrite(guard, *recreated,
                                 {WriteOp::Put(prefix_ + "a", "fresh")});
  ASSERT_TRUE(applied.ok());
  EXPECT_TRUE(*applied);
  // No guard at all.
  applied = client_->FencedWrite(prefix_ + "absent", *recreated,
                                 {WriteOp::Put(prefix_ + "a", "x")});
  ASSERT_TRUE(applied.ok());
  EXPECT_FALSE(*applied);
  EXPECT_EQ(
      client_->FencedWrite(guard, 0, {WriteOp::Delete("k")}).status().reason(),
      ErrorReason::kInvalidArgument);
}

TEST_F(EtcdClientTest, SecondCandidateLeadsAfterTheFirstResigns) {
  const std::string election = prefix_ + "master";
  const int64_t lease_a = Lease(30);
  const int64_t lease_b = Lease(30);
  Result<std::optional<KeyValue>> nobody = client_->Leader(election);
  ASSERT_TRUE(nobody.ok()) << nobody.status().ToString();
  EXPECT_FALSE(nobody->has_value());

  Result<LeaderKey> a = client_->Campaign(election, lease_a, "a:9000");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->name, election);
  EXPECT_EQ(a->lease, lease_a);
  EXPECT_TRUE(a->key.starts_with(election + "/"));
  Result<std::optional<KeyValue>> leader = client_->Leader(election);
  ASSERT_TRUE(leader.ok() && leader->has_value());
  EXPECT_EQ((*leader)->value, "a:9000");
  EXPECT_EQ((*leader)->key, a->key);
  EXPECT_EQ((*leader)->create_revision, a->revision);

  CallCanceller cancel;
  Background<Result<LeaderKey>> b(&cancel, [&] {
    return client_->Campaign(election, lease_b, "b:9000", &cancel);
  });
  // B's candidate key appears; B waits, renewing its lease on this thread
  // meanwhile (its campaign does not hold up other calls).
  ASSERT_TRUE(WaitUntil([&] { return KeysUnder(election + "/") == 2; }, kLong));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client_->RenewLease(lease_b).ok());
    std::this_thread::sleep_for(milliseconds(40));
  }
  EXPECT_FALSE(b.Finished()) << "B leads while A does";
  leader = client_->Leader(election);
  ASSERT_TRUE(leader.ok() && leader->has_value());
  EXPECT_EQ((*leader)->value, "a:9000");

  ASSERT_TRUE(client_->Resign(*a).ok());
  ASSERT_TRUE(b.Finished(kLong)) << "B still waits after A resigned";
  Result<LeaderKey> b_key = b.Take();
  ASSERT_TRUE(b_key.ok()) << b_key.status().ToString();
  EXPECT_GT(b_key->revision, a->revision) << "terms must grow";
  leader = client_->Leader(election);
  ASSERT_TRUE(leader.ok() && leader->has_value());
  EXPECT_EQ((*leader)->value, "b:9000");
  EXPECT_EQ((*leader)->create_revision, b_key->revision);

  // The deposed leader is fenced out; the new one is not.
  const std::string state = prefix_ + "state";
  Result<bool> write =
      client_->FencedWrite(a->key, a->revision, {WriteOp::Put(state, "a")});
  ASSERT_TRUE(write.ok());
  EXPECT_FALSE(*write);
  write = client_->FencedWrite(b_key->key, b_key->revision,
                               {WriteOp::Put(state, "b")});
  ASSERT_TRUE(write.ok());
  EXPECT_TRUE(*write);

  EXPECT_TRUE(client_->Resign(*a).ok()) << "resign is idempotent";
  EXPECT_EQ(client_->Proclaim(*a, "again").reason(),
            ErrorReason::kNotApplicable);
  ASSERT_TRUE(client_->Proclaim(*b_key, "b:9001").ok());
  leader = client_->Leader(election);
  ASSERT_TRUE(leader.ok() && leader->has_value());
  EXPECT_EQ((*leader)->value, "b:9001");
  EXPECT_EQ((*leader)->create_revision, b_key->revision);
}

TEST_F(EtcdClientTest, SecondCandidateLeadsWhenTheFirstsLeaseExpires) {
  const std::string election = prefix_ + "master";
  const int64_t lease_a = Lease(1);  // never renewed
  const int64_t lease_b = Lease(30);
  Result<LeaderKey> a = client_->Campaign(election, lease_a, "a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();

  CallCanceller cancel;
  Background<Result<LeaderKey>> b(&cancel, [&] {
    return client_->Campaign(election, lease_b, "b", &cancel);
  });
  ASSERT_TRUE(b.Finished(kLong)) << "A's lease expiry did not elect B";
  Result<LeaderKey> b_key = b.Take();
  ASSERT_TRUE(b_key.ok()) << b_key.status().ToString();
  EXPECT_GT(b_key->revision, a->revision);
  EXPECT_EQ(client_->LeaseTimeToLive(lease_a).status().reason(),
            ErrorReason::kObjectNotFound);
  Result<std::optional<KeyValue>> leader = client_->Leader(election);
  ASSERT_TRUE(leader.ok() && leader->has_value());
  EXPECT_EQ((*leader)->value, "b");
}

TEST_F(EtcdClientTest, CampaignWhoseLeaseExpiredWhileWaitingIsNotLeader) {
  const std::string election = prefix_ + "master";
  Result<LeaderKey> a = client_->Campaign(election, Lease(30), "a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const int64_t lease_b = Lease(1);  // never renewed
  CallCanceller cancel;
  Background<Result<LeaderKey>> b(&cancel, [&] {
    return client_->Campaign(election, lease_b, "b", &cancel);
  });
  ASSERT_TRUE(WaitUntil(
      [&] {
        return client_->LeaseTimeToLive(lease_b).status().reason() ==
               ErrorReason::kObjectNotFound;
      },
      kLong));
  // etcd answers B as leader once A goes, though B's key is gone.
  ASSERT_TRUE(client_->Resign(*a).ok());
  ASSERT_TRUE(b.Finished(kLong));
  EXPECT_EQ(b.Take().status().reason(), ErrorReason::kObjectNotFound);
  Result<std::optional<KeyValue>> leader = client_->Leader(election);
  ASSERT_TRUE(leader.ok());
  EXPECT_FALSE(leader->has_value());
}

TEST_F(EtcdClientTest, CancelUnblocksAWaitingCampaign) {
  const std::string election = prefix_ + "master";
  Result<LeaderKey> a = client_->Campaign(election, Lease(30), "a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  CallCanceller cancel;
  Background<Result<LeaderKey>> b(&cancel, [&] {
    return client_->Campaign(election, Lease(30), "b", &cancel);
  });
  ASSERT_TRUE(WaitUntil([&] { return KeysUnder(election + "/") == 2; }, kLong));

  const auto start = steady_clock::now();
  cancel.Cancel();
  ASSERT_TRUE(b.Finished(kLong)) << "campaign_timeout is 60 s: not cancelled";
  EXPECT_LT(Since(start), milliseconds(1000));
  EXPECT_EQ(b.Take().status().reason(), ErrorReason::kAborted);
  // Its connection closed, etcd withdrew the candidate.
  EXPECT_TRUE(WaitUntil([&] { return KeysUnder(election + "/") == 1; }, kLong));
  // Sticky: a later call with the same canceller does not start.
  EXPECT_EQ(
      client_->Campaign(election, Lease(30), "c", &cancel).status().reason(),
      ErrorReason::kAborted);
}

TEST_F(EtcdClientTest, CampaignGivesUpAfterCampaignTimeout) {
  const std::string election = prefix_ + "master";
  ASSERT_TRUE(client_->Campaign(election, Lease(30), "a").ok());
  std::unique_ptr<EtcdClient> impatient = MakeClient(
      {server_->endpoint()},
      [](EtcdClientOptions& o) { o.campaign_timeout = milliseconds(300); });
  Result<LeaderKey> b = impatient->Campaign(election, Lease(30), "b");
  EXPECT_EQ(b.status().reason(), ErrorReason::kTimeout)
      << b.status().ToString();
  EXPECT_TRUE(WaitUntil([&] { return KeysUnder(election + "/") == 1; }, kLong))
      << "the timed-out candidate stays";
  EXPECT_EQ(client_->Campaign("", 1, "x").status().reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ(client_->Campaign(election, 0, "x").status().reason(),
            ErrorReason::kInvalidArgument);
}

// Collects a watch's batches on a background thread.
class WatchRecorder {
 public:
  WatchRecorder(EtcdClient* client, std::string prefix, int64_t start)
      : call_(&cancel_, [this, client, prefix, start] {
          return client->WatchPrefix(
              prefix, start,
              [this](const WatchBatch& batch) {
                std::lock_guard<std::mutex> lock(mu_);
                if (batch.created) ++created_;
                for (const WatchBatch::Event& e : batch.events) {
                  events_.push_back(e);
                }
                return true;
              },
              &cancel_);
        }) {}

  int created() {
    std::lock_guard<std::mutex> lock(mu_);
    return created_;
  }
  std::vector<WatchBatch::Event> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  bool WaitForEvents(size_t n) {
    return WaitUntil([&] { return events().size() >= n; }, kLong);
  }
  CallCanceller& cancel() { return cancel_; }
  Background<Status>& call() { return call_; }

 private:
  std::mutex mu_;
  int created_ = 0;
  std::vector<WatchBatch::Event> events_;
  CallCanceller cancel_;
  Background<Status> call_;  // last: stops before the fields it uses go
};

TEST_F(EtcdClientTest, WatchPrefixReportsPutsAndDeletesInOrder) {
  WatchRecorder watch(client_.get(), prefix_, 0);
  ASSERT_TRUE(WaitUntil([&] { return watch.created() == 1; }, kLong));
  const std::string value = AllBytes();
  Result<int64_t> put = client_->Put(prefix_ + "a", value);
  ASSERT_TRUE(put.ok());
  ASSERT_TRUE(client_->Put("/elsewhere", "x").ok());
  ASSERT_TRUE(client_->Delete(prefix_ + "a").ok());
  ASSERT_TRUE(client_->Put(prefix_ + "b", "").ok());
  ASSERT_TRUE(watch.WaitForEvents(3));

  std::vector<WatchBatch::Event> events = watch.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, WatchBatch::Event::Type::kPut);
  EXPECT_EQ(events[0].kv.key, prefix_ + "a");
  EXPECT_EQ(events[0].kv.value, value);
  EXPECT_EQ(events[0].kv.mod_revision, *put);
  EXPECT_EQ(events[1].type, WatchBatch::Event::Type::kDelete);
  EXPECT_EQ(events[1].kv.key, prefix_ + "a");
  EXPECT_GT(events[1].kv.mod_revision, events[0].kv.mod_revision);
  EXPECT_EQ(events[2].kv.key, prefix_ + "b");
  EXPECT_EQ(events[2].kv.value, "");

  const auto start = steady_clock::now();
  watch.cancel().Cancel();
  ASSERT_TRUE(watch.call().Finished(kLong));
  EXPECT_LT(Since(start), milliseconds(1000));
  EXPECT_EQ(watch.call().Take().reason(), ErrorReason::kAborted);
}

TEST_F(EtcdClientTest, WatchStopsWhenTheCallbackSaysSo) {
  ASSERT_TRUE(client_->Put(prefix_ + "x", "1").ok());
  Result<PrefixRange> before = client_->GetPrefix(prefix_);
  ASSERT_TRUE(before.ok());
  // Replays from a past revision; stops at the first event.
  std::vector<std::string> seen;
  Status status = client_->WatchPrefix(prefix_, before->revision,
                                       [&](const WatchBatch& batch) {
                                         for (const auto& e : batch.events)
                                           seen.push_back(e.kv.value);
                                         return batch.events.empty();
                                       });
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(seen, std::vector<std::string>{"1"});
}

TEST_F(EtcdClientTest, WatchResumesAcrossIdleReconnects) {
  std::unique_ptr<EtcdClient> client = MakeClient(
      {server_->endpoint()},
      [](EtcdClientOptions& o) { o.watch_idle_timeout = milliseconds(200); });
  WatchRecorder watch(client.get(), prefix_, 0);
  ASSERT_TRUE(WaitUntil([&] { return watch.created() == 1; }, kLong));
  ASSERT_TRUE(client_->Put(prefix_ + "1", "a").ok());
  ASSERT_TRUE(watch.WaitForEvents(1));
  std::this_thread::sleep_for(milliseconds(700));  // three idle periods
  ASSERT_TRUE(client_->Put(prefix_ + "2", "b").ok());
  ASSERT_TRUE(watch.WaitForEvents(2));
  std::this_thread::sleep_for(milliseconds(300));
  std::vector<WatchBatch::Event> events = watch.events();
  ASSERT_EQ(events.size(), 2u) << "an event was repeated";
  EXPECT_EQ(events[0].kv.value, "a");
  EXPECT_EQ(events[1].kv.value, "b");
  EXPECT_EQ(watch.created(), 1);
  EXPECT_FALSE(watch.call().Finished());
}

TEST_F(EtcdClientTest, WatchFromACompactedRevisionIsNotApplicable) {
  Result<int64_t> first = client_->Put(prefix_ + "k", "1");
  ASSERT_TRUE(first.ok());
  Result<int64_t> second = client_->Put(prefix_ + "k", "2");
  ASSERT_TRUE(second.ok());
  // The client has no compaction call (HA needs none): ask etcd directly.
  httplib::Client http("127.0.0.1", server_->client_port());
  httplib::Result compacted =
      http.Post("/v3/kv/compaction",
                nlohmann::json{{"revision", std::to_string(*second)}}.dump(),
                "application/json");
  ASSERT_TRUE(compacted && compacted->status == 200);
  Status status = client_->WatchPrefix(prefix_, *first,
                                       [](const WatchBatch&) { return true; });
  EXPECT_EQ(status.reason(), ErrorReason::kNotApplicable) << status.ToString();
}

TEST_F(EtcdClientTest, ManyThreadsShareOneClient) {
  constexpr int kThreads = 8;
  constexpr int kCalls = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const std::string key =
            prefix_ + std::to_string(t) + "/" + std::to_string(i);
        Result<std::optional<KeyValue>> got = client_->Get(key);
        if (!client_->Put(key, key).ok() || !got.ok() || got->has_value()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(KeysUnder(prefix_), size_t(kThreads * kCalls));
}

// Replies that are not etcd's, from a fake gateway.
TEST(EtcdClientRepliesTest, MalformedRepliesAreInternal) {
  httplib::Server fake;
  fake.Post("/v3/kv/range", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(R"({"kvs":[{"key":"not base64!","value":"eA=="}]})",
                  "application/json");
  });
  fake.Post("/v3/kv/put", [](const httplib::Request&, httplib::Response& r) {
    r.set_content("<html>proxy</html>", "text/html");
  });
  fake.Post("/v3/lease/grant",
            [](const httplib::Request&, httplib::Response& r) {
              r.status = 503;
              r.set_content("Service Unavailable", "text/plain");
            });
  const int port = fake.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serve([&] { fake.listen_after_bind(); });
  ASSERT_TRUE(WaitUntil([&] { return fake.is_running(); }, kLong));
  std::unique_ptr<EtcdClient> client =
      MakeClient({"127.0.0.1:" + std::to_string(port)});
  ASSERT_NE(client, nullptr);

  Status get = client->Get("k").status();
  EXPECT_EQ(get.reason(), ErrorReason::kInternal);
  EXPECT_NE(get.message().find("not base64!"), std::string::npos)
      << get.ToString();
  Status put = client->Put("k", "v").status();
  EXPECT_EQ(put.reason(), ErrorReason::kInternal);
  EXPECT_NE(put.message().find("<html>"), std::string::npos) << put.ToString();
  Status grant = client->GrantLease(5).status();
  EXPECT_EQ(grant.reason(), ErrorReason::kInternal);
  EXPECT_NE(grant.message().find("503"), std::string::npos) << grant.ToString();
  client.reset();  // its idle connection would hold the server's stop()
  fake.stop();
  serve.join();
}

// ---- Failures of etcd itself: each test owns its etcd.

class EtcdFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EtcdServer::Available()) GTEST_SKIP() << EtcdServer::kMissing;
  }

  // A started etcd, or nullptr after failing the test.
  static std::unique_ptr<EtcdServer> StartEtcd() {
    auto server = std::make_unique<EtcdServer>();
    Status started = server->Start();
    EXPECT_TRUE(started.ok()) << started.ToString();
    return started.ok() ? std::move(server) : nullptr;
  }
};

TEST_F(EtcdFailureTest, KilledEtcdIsUnavailableThenRestartedWorksAgain) {
  std::unique_ptr<EtcdServer> server = StartEtcd();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<EtcdClient> client = MakeClient(
      {server->endpoint()},
      [](EtcdClientOptions& o) { o.call_timeout = milliseconds(1000); });
  ASSERT_TRUE(client->Put("/k", "before").ok());
  Result<LeaseGrant> grant = client->GrantLease(30);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  const int64_t lease = grant->id;
  WatchRecorder watch(client.get(), "/", 0);
  ASSERT_TRUE(WaitUntil([&] { return watch.created() == 1; }, kLong));

  server->Kill();
  const auto start = steady_clock::now();
  for (const Status& s :
       {client->Put("/k", "during").status(), client->Get("/k").status(),
        client->GrantLease(5).status(), client->RenewLease(lease).status(),
        client->Leader("/e").status()}) {
    EXPECT_EQ(s.reason(), ErrorReason::kUnavailable) << s.ToString();
    EXPECT_NE(s.message().find(server->endpoint()), std::string::npos)
        << s.ToString();
  }
  EXPECT_LT(Since(start), milliseconds(3000));
  ASSERT_TRUE(watch.call().Finished(kLong)) << "the watch outlived etcd";
  EXPECT_EQ(watch.call().Take().reason(), ErrorReason::kUnavailable);

  Status restarted = server->Start();
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  Result<std::optional<KeyValue>> got = client->Get("/k");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->value, "before");
  EXPECT_TRUE(client->Put("/k", "after").ok());
  // etcd restores leases at restart with their full TTL.
  EXPECT_TRUE(client->RenewLease(lease).ok());
}

TEST_F(EtcdFailureTest, HungEtcdTimesOutAsUnavailable) {
  std::unique_ptr<EtcdServer> server = StartEtcd();
  ASSERT_NE(server, nullptr);
  const milliseconds timeout(300);
  std::unique_ptr<EtcdClient> client =
      MakeClient({server->endpoint()},
                 [&](EtcdClientOptions& o) { o.call_timeout = timeout; });
  ASSERT_TRUE(client->Put("/k", "v").ok());

  server->Pause();
  const auto start = steady_clock::now();
  Status put = client->Put("/k", "w").status();
  const milliseconds took = Since(start);
  server->Resume();
  EXPECT_EQ(put.reason(), ErrorReason::kUnavailable) << put.ToString();
  EXPECT_GE(took, timeout * 9 / 10);
  EXPECT_LT(took, timeout * 5) << "the call timeout did not bound the call";
  EXPECT_TRUE(client->Put("/k", "x").ok());
}

TEST_F(EtcdFailureTest, SkipsAnEndpointThatRefusesConnections) {
  std::unique_ptr<EtcdServer> server = StartEtcd();
  ASSERT_NE(server, nullptr);
  EtcdServer never_started;  // its ports are free: connections are refused
  const std::string dead = never_started.endpoint();
  std::unique_ptr<EtcdClient> client = MakeClient({dead, server->endpoint()});
  EXPECT_EQ(client->CurrentEndpoint(), dead);
  ASSERT_TRUE(client->Put("/k", "v").ok());
  EXPECT_EQ(client->CurrentEndpoint(), server->endpoint());
  Result<LeaseGrant> grant = client->GrantLease(30);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  // A campaign (its own connection) skips the dead endpoint too.
  Result<LeaderKey> leader = client->Campaign("/e", grant->id, "v");
  EXPECT_TRUE(leader.ok()) << leader.status().ToString();

  // Every endpoint dead: UNAVAILABLE naming the last one tried.
  std::unique_ptr<EtcdClient> hopeless = MakeClient({dead});
  Status s = hopeless->Get("/k").status();
  EXPECT_EQ(s.reason(), ErrorReason::kUnavailable);
  EXPECT_NE(s.message().find(dead), std::string::npos) << s.ToString();
}

TEST_F(EtcdFailureTest, MovesOnFromAnEndpointThatTimedOut) {
  std::unique_ptr<EtcdServer> first = StartEtcd();
  std::unique_ptr<EtcdServer> second = StartEtcd();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  std::unique_ptr<EtcdClient> client = MakeClient(
      {first->endpoint(), second->endpoint()},
      [](EtcdClientOptions& o) { o.call_timeout = milliseconds(300); });
  ASSERT_TRUE(client->Put("/k", "1").ok());
  EXPECT_EQ(client->CurrentEndpoint(), first->endpoint()) << "not sticky";

  first->Pause();
  // Sent, then no answer: the call fails (it may have been applied) and
  // the next one goes to the other endpoint.
  EXPECT_EQ(client->Put("/k", "2").status().reason(),
            ErrorReason::kUnavailable);
  Result<int64_t> put = client->Put("/k", "3");
  first->Resume();
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(client->CurrentEndpoint(), second->endpoint());
}

}  // namespace
}  // namespace etcd_client_test
}  // namespace mooncake_tier::ha
