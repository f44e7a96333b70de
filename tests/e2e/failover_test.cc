// A high-availability cluster as deployed, on loopback: a real etcd, three
// `mooncake-tierd master --etcd ... --cluster` processes, two nodes and
// clients given all three masters' addresses (gRPC + UCX). The leader is
// killed or paused at awkward moments and nothing acknowledged may be lost:
// - kill -9 of the leader under a put/get load, several rounds: every
//   object and every group whose puts were acknowledged reads back with
//   its bytes after each failover;
// - SIGSTOP of the leader: nodes and the client leave it for the new
//   leader while it sleeps (their probes go unanswered); SIGCONT: the old
//   leader serves nothing more (standby), and the store stays whole;
// - a client paused between its grant (from the old leader) and its write,
//   woken after a new leader handed the same space to other puts: it
//   writes nothing, and every object put meanwhile keeps its bytes;
// - a standby answers with its role and names the leader (gRPC and admin);
// - a node killed and restarted while the leader is killed: the new leader
//   gets both nodes back, and what the other node holds is all there;
// - etcd killed and restarted while a leader serves: no master leads while
//   etcd is away, one leads again after, and nothing acknowledged is lost.

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/store_client.h"
#include "httplib.h"
#include "mooncake_tier/remote_client.h"
#include "nlohmann/json.hpp"
#include "rpc/grpc_master_api.h"
#include "tests/support/etcd_server.h"
#include "tests/support/eventually.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tierd_process.h"
#include "transport/ucx_transport.h"

namespace mooncake_tier::testing {
namespace failover_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

constexpr uint64_t kValueBytes = 64 << 10;
constexpr int kMasters = 3;
constexpr uint32_t kGroupSize = 4;

std::vector<std::byte> Bytes(const std::string& key) {
  std::vector<std::byte> out(kValueBytes);
  std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(key)));
  for (std::byte& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// What a load acknowledged: keys whose put returned OK, groups whose every
// member's did.
struct Acknowledged {
  std::mutex mu;
  std::vector<std::string> keys;
  std::vector<std::string> groups;
  // Members acknowledged of groups that were not: owed nothing, but what
  // reads must have their bytes.
  std::vector<std::string> partial;
  std::atomic<int> failed{0};
};

// A master API that forwards every call, except that the PutStart of one
// key, once answered, holds its caller until released: a client paused
// (stopped, swapped out, stalled) between its grant and its write.
class PausingMasterApi final : public MasterApi {
 public:
  PausingMasterApi(std::unique_ptr<MasterApi> inner, std::string key)
      : inner_(std::move(inner)), key_(std::move(key)) {}

  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  bool Granted() {
    std::lock_guard<std::mutex> lock(mu_);
    return granted_;
  }

  std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests) override {
    std::vector<Result<ReplicaDescriptor>> out = inner_->PutStart(requests);
    if (requests.size() == 1 && requests[0].key == key_ && out[0].ok()) {
      std::unique_lock<std::mutex> lock(mu_);
      granted_ = true;
      cv_.wait(lock, [&] { return released_; });
    }
    return out;
  }
  std::vector<Status> PutEnd(const ClientId& client,
                             std::span<const std::string> keys) override {
    return inner_->PutEnd(client, keys);
  }
  std::vector<Status> PutRevoke(const ClientId& client,
                                std::span<const std::string> keys) override {
    return inner_->PutRevoke(client, keys);
  }
  std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys) override {
    return inner_->GetReplicaList(keys);
  }
  Result<size_t> ReleaseLeases(
      std::span<const LeaseRelease> releases) override {
    return inner_->ReleaseLeases(releases);
  }
  std::vector<Result<ExistsInfo>> Exists(
      std::span<const std::string> keys) override {
    return inner_->Exists(keys);
  }
  Result<PrefixInfo> ProbePrefix(std::span<const std::string> keys) override {
    return inner_->ProbePrefix(keys);
  }
  std::vector<Status> Remove(std::span<const std::string> keys,
                             RemoveOptions options) override {
    return inner_->Remove(keys, options);
  }
  std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) override {
    return inner_->GetGroup(group_ids);
  }
  std::vector<Status> RemoveGroup(std::span<const std::string> group_ids,
                                  RemoveOptions options) override {
    return inner_->RemoveGroup(group_ids, options);
  }
  Result<NodeView> GetNode(NodeId node) override {
    return inner_->GetNode(node);
  }

 private:
  const std::unique_ptr<MasterApi> inner_;
  const std::string key_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool granted_ = false;
  bool released_ = false;
};

class FailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EtcdServer::Available()) GTEST_SKIP() << EtcdServer::kMissing;
    ASSERT_TRUE(etcd_.Start().ok()) << etcd_.LogTail();
    for (int i = 0; i < kMasters; ++i) {
      rpc_ports_[i] = PickFreePort();
      admin_ports_[i] = PickFreePort();
      ASSERT_NE(rpc_ports_[i], 0);
      ASSERT_NE(admin_ports_[i], 0);
      if (!all_masters_.empty()) all_masters_ += ",";
      all_masters_ += RpcAddress(i);
    }
  }

  std::string Path(const std::string& name) const {
    return dir_.path() + "/" + name;
  }
  std::string RpcAddress(int i) const {
    return "127.0.0.1:" + std::to_string(rpc_ports_[i]);
  }

  void StartMaster(int i) {
    const std::string ready = Path("master" + std::to_string(i) + ".ready");
    std::remove(ready.c_str());
    masters_[i] =
        Start("master" + std::to_string(i),
              {"master", "--listen", RpcAddress(i), "--admin-listen",
               "127.0.0.1:" + std::to_string(admin_ports_[i]), "--etcd",
               etcd_.endpoint(), "--cluster", "failover-test",
               // etcd's minimum TTL with the test server's 100 ms elections.
               "--etcd-lease-ttl", "1s", "--node-ttl", "2s", "--put-timeout",
               "2s", "--lease-ttl", "500ms", "--ready-file", ready});
    ASSERT_TRUE(WaitForFile(ready, seconds(30))) << masters_[i]->OutputTail();
  }

  void StartNode(const std::string& name) {
    const std::string ready = Path(name + ".ready");
    std::remove(ready.c_str());
    nodes_[name] = Start(
        name, {"node", "--master", all_masters_, "--name", name,
               "--admin-listen", "127.0.0.1:0", "--dram", "64MiB", "--ssd-dir",
               Path(name + "-ssd"), "--ssd-capacity", "512MiB",
               "--heartbeat-interval", "100ms", "--ready-file", ready});
    ASSERT_TRUE(WaitForFile(ready, seconds(30))) << nodes_[name]->OutputTail();
  }

  std::unique_ptr<Subprocess> Start(const std::string& name,
                                    std::vector<std::string> args) {
    return StartTierd(MOONCAKE_TIERD_PATH, dir_.path(),
                      name + "-" + std::to_string(++starts_), std::move(args));
  }

  void StartCluster() {
    for (int i = 0; i < kMasters; ++i) StartMaster(i);
    ASSERT_GE(WaitForLeader(seconds(20)), 0);
    StartNode("n1");
    StartNode("n2");
  }

  // Master i's /api/v1/status "ha" object; null when it does not answer.
  nlohmann::json Ha(int i) {
    httplib::Client http("127.0.0.1", admin_ports_[i]);
    http.set_connection_timeout(0, 300'000);
    http.set_read_timeout(1, 0);
    auto res = http.Get("/api/v1/status");
    if (!res || res->status != 200) return nullptr;
    nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
    return body.is_object() && body.contains("ha") ? body["ha"] : nullptr;
  }

  // The index of the master that leads and serves clients (not
  // recovering), among those `alive`; -1 when none within `timeout`.
  int WaitForLeader(milliseconds timeout, int except = -1) {
    int leader = -1;
    Eventually(
        [&] {
          for (int i = 0; i < kMasters; ++i) {
            if (i == except || !masters_[i]) continue;
            nlohmann::json ha = Ha(i);
            if (ha.is_object() && ha["role"] == "leader" &&
                ha["recovering"] == false) {
              leader = i;
              return true;
            }
          }
          return false;
        },
        timeout);
    return leader;
  }

  std::unique_ptr<Client> Connect() {
    RemoteClientOptions options;
    options.master = all_masters_;
    options.rpc_timeout = seconds(5);
    options.transfer_timeout = seconds(3);
    Result<std::unique_ptr<Client>> client = ConnectRemote(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }

  // Puts `key`, and once more if that failed, as an engine would; true when
  // a put returned OK.
  static bool PutWithRetry(Client& client, const std::string& key,
                           const PutOptions& options) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (client.Put(key, Bytes(key), options).ok()) return true;
    }
    return false;
  }

  // Puts single keys and groups of kGroupSize under `prefix` until `stop`,
  // recording what was acknowledged, and reads earlier keys back between.
  void Load(Client& client, const std::string& prefix,
            const std::atomic<bool>& stop, Acknowledged* acked) {
    for (int i = 0; !stop; ++i) {
      if (i % 3 == 2) {
        const std::string group = prefix + "-g" + std::to_string(i);
        std::vector<std::string> members;
        for (uint32_t m = 0; m < kGroupSize; ++m) {
          const std::string key = group + "-" + std::to_string(m);
          PutOptions options;
          options.group = GroupSpec{group, kGroupSize, m};
          options.preferred_node = preferred_node_;
          if (PutWithRetry(client, key, options)) {
            members.push_back(key);
          } else {
            ++acked->failed;
          }
        }
        std::lock_guard<std::mutex> lock(acked->mu);
        if (members.size() == kGroupSize) {
          // Members of a group are readable once it is complete: only a
          // whole group is owed.
          acked->groups.push_back(group);
          acked->keys.insert(acked->keys.end(), members.begin(), members.end());
        } else {
          acked->partial.insert(acked->partial.end(), members.begin(),
                                members.end());
        }
      } else {
        const std::string key = prefix + "-k" + std::to_string(i);
        PutOptions options;
        options.preferred_node = preferred_node_;
        if (PutWithRetry(client, key, options)) {
          std::lock_guard<std::mutex> lock(acked->mu);
          acked->keys.push_back(key);
        } else {
          ++acked->failed;
        }
      }
      if (i % 4 == 0) {
        std::string earlier;
        {
          std::lock_guard<std::mutex> lock(acked->mu);
          if (!acked->keys.empty())
            earlier = acked->keys[i % acked->keys.size()];
        }
        if (!earlier.empty()) client.Get(earlier).status().IgnoreError();
      }
    }
  }

  // Waits until leader `i` has every node registered again: the end of a
  // failover (its gate opens when they are, or at its recovery timeout).
  void WaitForNodesBack(int i) {
    nlohmann::json ha;
    EXPECT_TRUE(Eventually(
        [&] {
          ha = Ha(i);
          return ha.is_object() && ha["nodes_registered"] == nodes_.size();
        },
        seconds(20)))
        << ha.dump();
  }

  // Every acknowledged key reads back with its bytes; every acknowledged
  // group is complete.
  void ExpectAllReadable(Client& client, Acknowledged& acked) {
    std::lock_guard<std::mutex> lock(acked.mu);
    int lost = 0;
    int wrong = 0;
    for (const std::string& key : acked.keys) {
      Result<std::vector<std::byte>> got = client.Get(key);
      if (!got.ok()) {
        if (++lost <= 5) {
          ADD_FAILURE() << key << ": " << got.status().ToString();
        }
      } else if (*got != Bytes(key)) {
        ++wrong;
      }
    }
    for (const std::string& key : acked.partial) {
      Result<std::vector<std::byte>> got = client.Get(key);
      if (got.ok() && *got != Bytes(key)) ++wrong;
    }
    for (const std::string& group : acked.groups) {
      Result<GroupInfo> info = client.GetGroup(group);
      ASSERT_TRUE(info.ok()) << group << ": " << info.status().ToString();
      EXPECT_EQ(info->status.state, GroupState::kComplete) << group;
    }
    EXPECT_EQ(lost, 0) << "of " << acked.keys.size() << " acknowledged";
    EXPECT_EQ(wrong, 0);
  }

  EtcdServer etcd_;
  TempDir dir_;
  int rpc_ports_[kMasters] = {};
  int admin_ports_[kMasters] = {};
  std::string all_masters_;
  std::string preferred_node_;  // where Load puts ("" lets the store choose)
  int starts_ = 0;
  std::unique_ptr<Subprocess> masters_[kMasters];
  std::map<std::string, std::unique_ptr<Subprocess>> nodes_;
};

TEST_F(FailoverTest, StandbysNameTheLeader) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const int leader = WaitForLeader(seconds(10));
  ASSERT_GE(leader, 0);
  const nlohmann::json led = Ha(leader);
  for (int i = 0; i < kMasters; ++i) {
    if (i == leader) continue;
    nlohmann::json ha;
    EXPECT_TRUE(Eventually(
        [&] {
          ha = Ha(i);
          return ha.is_object() && ha["in_sync"] == true;
        },
        seconds(5)))
        << ha.dump();
    ASSERT_TRUE(ha.is_object());
    EXPECT_EQ(ha["role"], "standby");
    EXPECT_EQ(ha["leader"], RpcAddress(leader));
    EXPECT_EQ(ha["term"], led["term"]);
    // Data routes of a standby: 421 naming the leader.
    httplib::Client http("127.0.0.1", admin_ports_[i]);
    auto res = http.Get("/api/v1/nodes");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 421);
    EXPECT_NE(res->body.find(RpcAddress(leader)), std::string::npos)
        << res->body;
  }
  // A client given only a standby's address is sent to the leader.
  RemoteClientOptions options;
  options.master = RpcAddress((leader + 1) % kMasters);
  options.rpc_timeout = seconds(5);
  Result<std::unique_ptr<Client>> client = ConnectRemote(options);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ASSERT_TRUE((*client)->Put("via-standby", Bytes("via-standby")).ok());
  Result<std::vector<std::byte>> got = (*client)->Get("via-standby");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, Bytes("via-standby"));
}

TEST_F(FailoverTest, LeaderKilledUnderLoadLosesNothingAcknowledged) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::unique_ptr<Client> writer = Connect();
  std::unique_ptr<Client> reader = Connect();
  ASSERT_NE(writer, nullptr);
  ASSERT_NE(reader, nullptr);
  Acknowledged acked;
  for (int round = 0; round < 3; ++round) {
    const int leader = WaitForLeader(seconds(20));
    ASSERT_GE(leader, 0) << "round " << round;
    std::atomic<bool> stop{false};
    std::thread load(
        [&] { Load(*writer, "r" + std::to_string(round), stop, &acked); });
    std::this_thread::sleep_for(milliseconds(800));
    ASSERT_TRUE(masters_[leader]->Kill());
    masters_[leader]->Wait(seconds(5));
    const auto killed = SteadyClock::now();
    const int next = WaitForLeader(seconds(20), leader);
    const auto unavailable = SteadyClock::now() - killed;
    std::this_thread::sleep_for(milliseconds(800));
    stop = true;
    load.join();
    ASSERT_GE(next, 0) << "no new leader after round " << round;
    WaitForNodesBack(next);
    std::printf(
        "round %d: master %d killed, master %d serves after %lld ms; "
        "%zu keys and %zu groups acknowledged so far, %d puts "
        "failed twice\n",
        round, leader, next,
        static_cast<long long>(
            std::chrono::duration_cast<milliseconds>(unavailable).count()),
        acked.keys.size(), acked.groups.size(), acked.failed.load());
    ExpectAllReadable(*reader, acked);
    // The killed master comes back as a standby.
    ASSERT_NO_FATAL_FAILURE(StartMaster(leader));
  }
  EXPECT_GT(acked.keys.size(), 50u);
}

// A leader paused (SIGSTOP) keeps its connections open: nodes and clients
// must find out by themselves (their probes go unanswered) and go to the
// new leader while it is still paused; woken, it serves nothing more.
TEST_F(FailoverTest, PausedLeaderIsLeftAndFencedWhenItWakes) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::unique_ptr<Client> client = Connect();
  ASSERT_NE(client, nullptr);
  Acknowledged acked;
  const int leader = WaitForLeader(seconds(20));
  ASSERT_GE(leader, 0);
  const uint64_t old_term = Ha(leader)["term"];
  std::atomic<bool> stop{false};
  std::thread load([&] { Load(*client, "p", stop, &acked); });
  std::this_thread::sleep_for(milliseconds(500));
  ASSERT_TRUE(masters_[leader]->Signal(SIGSTOP));
  const int next = WaitForLeader(seconds(20), leader);
  ASSERT_GE(next, 0);
  // Every node left the paused leader for the new one, and the client's
  // puts go there, all while the old leader sleeps.
  WaitForNodesBack(next);
  size_t acked_at_failover;
  {
    std::lock_guard<std::mutex> lock(acked.mu);
    acked_at_failover = acked.keys.size();
  }
  EXPECT_TRUE(Eventually(
      [&] {
        std::lock_guard<std::mutex> lock(acked.mu);
        return acked.keys.size() > acked_at_failover + 10;
      },
      seconds(10)))
      << "the client's puts did not reach the new leader";
  ASSERT_TRUE(masters_[leader]->Signal(SIGCONT));
  // It wakes past its lease: a standby, in the new term.
  EXPECT_TRUE(Eventually(
      [&] {
        nlohmann::json ha = Ha(leader);
        return ha.is_object() && ha["role"] == "standby" &&
               ha["term"].get<uint64_t>() > old_term;
      },
      seconds(10)));
  std::this_thread::sleep_for(milliseconds(500));
  stop = true;
  load.join();
  WaitForNodesBack(next);
  ExpectAllReadable(*client, acked);
  EXPECT_EQ(Ha(next)["role"], "leader");
}

TEST_F(FailoverTest, AClientPausedBeforeItsWriteCorruptsNothing) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const int leader = WaitForLeader(seconds(20));
  ASSERT_GE(leader, 0);
  // Everything on n1, so that the new leader hands out the paused put's
  // range again (the lowest free one there).
  preferred_node_ = "n1";
  std::unique_ptr<Client> writer = Connect();
  ASSERT_NE(writer, nullptr);
  Acknowledged before;
  {
    std::atomic<bool> stop{false};
    std::thread load([&] { Load(*writer, "b", stop, &before); });
    std::this_thread::sleep_for(milliseconds(300));
    stop = true;
    load.join();
  }

  rpc::GrpcChannelOptions channel;
  channel.target = all_masters_;
  Result<std::unique_ptr<rpc::GrpcMasterApi>> api =
      rpc::GrpcMasterApi::Create(channel);
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  const RemoteClientOptions defaults;
  UcxTransportOptions transport_options;
  transport_options.transports = defaults.ucx_transports;
  transport_options.shared_memory = defaults.shared_memory;
  transport_options.timeout = seconds(3);
  Result<std::unique_ptr<UcxTransport>> transport =
      UcxTransport::Create(transport_options);
  ASSERT_TRUE(transport.ok()) << transport.status().ToString();
  auto* pausing = new PausingMasterApi(std::move(*api), "paused");
  StoreClient paused(std::unique_ptr<MasterApi>(pausing),
                     std::move(*transport));
  // It has put before, so it knows n1's segment and goes straight from
  // its grant to its write.
  PutOptions on_n1;
  on_n1.preferred_node = "n1";
  ASSERT_TRUE(paused.Put("warm", Bytes("warm"), on_n1).ok());
  const std::vector<std::byte> stale(kValueBytes, std::byte{0xEE});
  Status paused_put;
  std::thread slow([&] {
    PutOptions options;
    options.preferred_node = "n1";
    paused_put = paused.Put("paused", stale, options);
  });
  ASSERT_TRUE(Eventually([&] { return pausing->Granted(); }, seconds(10)));

  // The leader that granted it dies; the next one serves, and puts into n1
  // take its free space, the paused put's range among it.
  ASSERT_TRUE(masters_[leader]->Kill());
  masters_[leader]->Wait(seconds(5));
  const int next = WaitForLeader(seconds(20), leader);
  ASSERT_GE(next, 0);
  WaitForNodesBack(next);
  Acknowledged after;
  {
    std::atomic<bool> stop{false};
    std::thread load([&] { Load(*writer, "a", stop, &after); });
    std::this_thread::sleep_for(milliseconds(500));
    stop = true;
    load.join();
  }
  ASSERT_GT(after.keys.size(), 10u);

  // The paused client wakes: its grant ran out with the old leader's
  // lease, so it writes nothing.
  pausing->Release();
  slow.join();
  EXPECT_EQ(paused_put.reason(), ErrorReason::kTimeout)
      << paused_put.ToString();
  ExpectAllReadable(*writer, before);
  ExpectAllReadable(*writer, after);
  EXPECT_FALSE(writer->Get("paused").ok());
}

TEST_F(FailoverTest, EtcdRestartedWhileALeaderServes) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::unique_ptr<Client> client = Connect();
  ASSERT_NE(client, nullptr);
  Acknowledged acked;
  std::atomic<bool> stop{false};
  std::thread load([&] { Load(*client, "e", stop, &acked); });
  std::this_thread::sleep_for(milliseconds(500));
  // etcd gone: the leader serves until its lease's window ends, then no
  // master leads (none can prove it would be alone).
  etcd_.Kill();
  EXPECT_TRUE(Eventually(
      [&] {
        for (int i = 0; i < kMasters; ++i) {
          nlohmann::json ha = Ha(i);
          if (ha.is_object() && ha["role"] == "leader") return false;
        }
        return true;
      },
      seconds(10)));
  std::this_thread::sleep_for(milliseconds(500));
  // Back: a leader again (maybe another), which serves once the nodes
  // registered with it.
  ASSERT_TRUE(etcd_.Start().ok()) << etcd_.LogTail();
  const int leader = WaitForLeader(seconds(20));
  ASSERT_GE(leader, 0);
  std::this_thread::sleep_for(milliseconds(500));
  stop = true;
  load.join();
  ExpectAllReadable(*client, acked);
  EXPECT_GT(acked.keys.size(), 10u);
}

TEST_F(FailoverTest, NodeRestartedDuringAFailover) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::unique_ptr<Client> client = Connect();
  ASSERT_NE(client, nullptr);
  // Everything on n1; n2 dies and comes back while the leader changes
  // (its DRAM goes with it, which is the DRAM tier's contract).
  preferred_node_ = "n1";
  Acknowledged acked;
  std::atomic<bool> stop{false};
  std::thread load([&] { Load(*client, "n", stop, &acked); });
  std::this_thread::sleep_for(milliseconds(800));
  const int leader = WaitForLeader(seconds(10));
  ASSERT_GE(leader, 0);
  ASSERT_TRUE(masters_[leader]->Kill());
  ASSERT_TRUE(nodes_["n2"]->Kill());
  masters_[leader]->Wait(seconds(5));
  nodes_["n2"]->Wait(seconds(5));
  ASSERT_NO_FATAL_FAILURE(StartNode("n2"));
  const int next = WaitForLeader(seconds(20), leader);
  ASSERT_GE(next, 0);
  std::this_thread::sleep_for(milliseconds(800));
  stop = true;
  load.join();
  ExpectAllReadable(*client, acked);
  WaitForNodesBack(next);
}

}  // namespace
}  // namespace failover_test
}  // namespace mooncake_tier::testing
