// The distributed store as deployed, on loopback: a `mooncake-tierd master`
// and `mooncake-tierd node` processes on free ports with temp dirs, clients
// in this process (ConnectRemote: gRPC + UCX). Processes are killed with
// SIGKILL at awkward moments and the store must carry on:
// - a node killed during puts, offloads and promotions: the master reaps
//   it, objects on the surviving node stay readable, the killed node's SSD
//   objects come back when it restarts;
// - a client killed between PutStart and PutEnd: the put is revoked by
//   the put timeout and the key can be put again;
// - the master killed and restarted: nodes register again and their SSD
//   objects are readable again.

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mooncake_tier/remote_client.h"
#include "rpc/grpc_master_api.h"
#include "tests/support/eventually.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tierd_process.h"

namespace mooncake_tier::testing {
namespace multiprocess_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

constexpr uint64_t kValueBytes = 256 << 10;

std::vector<std::byte> Bytes(uint32_t seed) {
  std::vector<std::byte> out(kValueBytes);
  std::mt19937 rng(seed);
  for (std::byte& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// Reads `key` until it succeeds (or `timeout` passes) and checks its bytes.
void ExpectReadableSoon(Client& client, const std::string& key,
                        const std::vector<std::byte>& value,
                        milliseconds timeout) {
  Result<std::vector<std::byte>> got =
      Status(ErrorReason::kObjectNotFound, "not read yet");
  ASSERT_TRUE(Eventually(
      [&] {
        got = client.Get(key);
        return got.ok();
      },
      timeout))
      << key << ": " << got.status().ToString();
  EXPECT_EQ(*got, value) << key;
}

class MultiProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = PickFreePort();
    ASSERT_NE(port_, 0);
    master_address_ = "127.0.0.1:" + std::to_string(port_);
  }

  std::string Path(const std::string& name) const {
    return dir_.path() + "/" + name;
  }

  // Starts the master and waits until it serves.
  void StartMaster(bool promotion = true) {
    const std::string ready = Path("master.ready");
    std::remove(ready.c_str());
    std::vector<std::string> args = {
        "master", "--listen", master_address_,
        // Free admin ports: parallel runs never collide on the default 9003.
        "--admin-listen", "127.0.0.1:0", "--node-ttl", "2s", "--put-timeout",
        "2s",
        // Reads here check many keys; short leases keep them from pinning a
        // full DRAM.
        "--lease-ttl", "500ms", "--offload-mode", "on_evict",
        "--promotion-admission-threshold", "2", "--ready-file", ready};
    if (!promotion) args.push_back("--no-promotion-on-hit");
    master_ = Start("master", std::move(args));
    ASSERT_TRUE(WaitForFile(ready, seconds(30))) << master_->OutputTail();
  }

  // Starts (or restarts) node `name` on its own SSD directory.
  void StartNode(const std::string& name) {
    const std::string ready = Path(name + ".ready");
    std::remove(ready.c_str());
    nodes_[name] = Start(
        name, {"node", "--master", master_address_, "--name", name,
               "--admin-listen", "127.0.0.1:0", "--dram", "16MiB", "--ssd-dir",
               Path(name + "-ssd"), "--ssd-capacity", "256MiB",
               "--heartbeat-interval", "100ms", "--ready-file", ready});
    ASSERT_TRUE(WaitForFile(ready, seconds(30))) << nodes_[name]->OutputTail();
  }

  // Each start has output files of its own, so a restarted process keeps
  // the output of the one before it.
  std::unique_ptr<Subprocess> Start(const std::string& name,
                                    std::vector<std::string> args) {
    return StartTierd(MOONCAKE_TIERD_PATH, dir_.path(),
                      name + "-" + std::to_string(++starts_), std::move(args));
  }

  std::unique_ptr<Client> Connect() {
    RemoteClientOptions options;
    options.master = master_address_;
    options.rpc_timeout = seconds(3);
    options.transfer_timeout = seconds(3);
    Result<std::unique_ptr<Client>> client = ConnectRemote(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }

  std::unique_ptr<rpc::GrpcMasterApi> Api() {
    rpc::GrpcChannelOptions channel;
    channel.target = master_address_;
    channel.deadline = seconds(3);
    return std::move(*rpc::GrpcMasterApi::Create(channel));
  }

  // Whether the master declared `node` dead (and dropped its replicas).
  bool Dead(rpc::GrpcMasterApi& api, NodeId node) {
    Result<NodeView> view = api.GetNode(node);
    return view.ok() ? view->state == NodeState::kDead
                     : view.status().reason() == ErrorReason::kNodeNotFound;
  }

  // The id node `name` was registered under, from its ready file.
  NodeId ReadyNodeId(const std::string& name) {
    const std::string ready = ReadFileOrEmpty(Path(name + ".ready"));
    const size_t at = ready.find("node_id=");
    return at == std::string::npos
               ? kNoNode
               : std::strtoull(ready.c_str() + at + 8, nullptr, 10);
  }

  // Puts `count` values under "<prefix>-i" on node `node`; returns them.
  std::map<std::string, std::vector<std::byte>> PutMany(
      Client& client, const std::string& prefix, int count,
      const std::string& node) {
    std::map<std::string, std::vector<std::byte>> values;
    for (int i = 0; i < count; ++i) {
      const std::string key = prefix + "-" + std::to_string(i);
      std::vector<std::byte> value = Bytes(std::hash<std::string>()(key));
      PutOptions options;
      options.preferred_node = node;
      Status put = client.Put(key, value, options);
      // DRAM may be full until offloads free it.
      for (int retry = 0; put.reason() == ErrorReason::kNoSpace && retry < 200;
           ++retry) {
        std::this_thread::sleep_for(milliseconds(20));
        put = client.Put(key, value, options);
      }
      EXPECT_TRUE(put.ok()) << key << ": " << put.ToString();
      values[key] = std::move(value);
    }
    return values;
  }

  // Keys whose only complete replicas are on SSD. Asking grants a lease
  // and counts as a read, like a Get.
  std::vector<std::string> SsdOnly(
      rpc::GrpcMasterApi& api,
      const std::map<std::string, std::vector<std::byte>>& values) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : values) keys.push_back(key);
    std::vector<std::string> out;
    std::vector<Result<ObjectReplicas>> lists = api.GetReplicaList(keys);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (lists[i].ok() && !lists[i]->replicas.empty() &&
          lists[i]->replicas.front().tier == Tier::kLocalDisk) {
        out.push_back(keys[i]);
      }
    }
    return out;
  }

  TempDir dir_;
  int port_ = 0;
  int starts_ = 0;
  std::string master_address_;
  std::unique_ptr<Subprocess> master_;
  std::map<std::string, std::unique_ptr<Subprocess>> nodes_;
};

TEST_F(MultiProcessTest, NodeKilledDuringPutsOffloadsAndPromotions) {
  StartMaster();
  StartNode("n1");
  StartNode("n2");
  std::unique_ptr<Client> client = Connect();
  std::unique_ptr<rpc::GrpcMasterApi> api = Api();
  ASSERT_NE(client, nullptr);

  // Survivors: a few values in n2's DRAM. Victims: 4x n1's DRAM, so most
  // are offloaded to n1's SSD and dropped from its DRAM.
  auto survivors = PutMany(*client, "keep", 16, "n2");
  auto victims = PutMany(*client, "lost", 256, "n1");
  const NodeId n1 = ReadyNodeId("n1");
  ASSERT_NE(n1, kNoNode);
  std::vector<std::string> on_ssd;
  ASSERT_TRUE(Eventually(
      [&] {
        on_ssd = SsdOnly(*api, victims);
        return on_ssd.size() >= 64;
      },
      seconds(20)))
      << on_ssd.size() << " of the victims are on SSD only";
  // Reading them again passes the admission threshold: promotions queue.
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_TRUE(client->Get(on_ssd[i]).ok());
  }

  // Puts to n1 keep going while it dies. They are small and paced: once n1
  // is gone they land on n2, and unpaced full-size values would fill n2's
  // SSD within seconds and evict the survivors from it.
  std::atomic<bool> stop{false};
  std::atomic<int> writer_calls{0};
  std::thread writer([&] {
    std::unique_ptr<Client> c = Connect();
    std::vector<std::byte> small = Bytes(7);
    small.resize(16 << 10);
    for (int i = 0; !stop; ++i) {
      PutOptions options;
      options.preferred_node = "n1";
      c->Put("during-" + std::to_string(i), small, options).IgnoreError();
      ++writer_calls;
      std::this_thread::sleep_for(milliseconds(2));
    }
  });
  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_TRUE(nodes_["n1"]->Kill());
  nodes_["n1"]->Wait(seconds(5));

  // The master reaps n1 after node_ttl (2 s).
  ASSERT_TRUE(Eventually([&] { return Dead(*api, n1); }, seconds(15)));
  const int calls_at_reap = writer_calls.load();
  // The writer is not stuck: its calls keep returning.
  EXPECT_TRUE(Eventually([&] { return writer_calls > calls_at_reap + 3; },
                         seconds(15)));
  stop = true;
  writer.join();

  // Everything on n2 is intact. n1's objects are gone with a clear error,
  // except copies promoted into n2's DRAM, which read back intact.
  for (const auto& [key, value] : survivors) {
    Result<std::vector<std::byte>> got = client->Get(key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString()
                          << " (the writer made " << writer_calls << " puts)";
    EXPECT_EQ(*got, value) << key;
  }
  int gone = 0;
  for (const auto& [key, value] : victims) {
    Result<std::vector<std::byte>> got = client->Get(key);
    if (got.ok()) {
      EXPECT_EQ(*got, value) << key;
    } else {
      EXPECT_EQ(got.status().reason(), ErrorReason::kObjectNotFound)
          << key << ": " << got.status().ToString();
      ++gone;
    }
  }
  EXPECT_GT(gone, 0);
  // New puts land on the survivor (once it made room: the writer and
  // promotions may have filled its DRAM).
  auto after = PutMany(*client, "after-loss", 4, "");
  for (const auto& [key, value] : after) {
    Result<std::vector<std::byte>> got = client->Get(key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString();
    EXPECT_EQ(*got, value) << key;
  }

  // n1 comes back on the same SSD: what was on its SSD is readable again.
  StartNode("n1");
  for (const std::string& key : on_ssd) {
    ExpectReadableSoon(*client, key, victims[key], seconds(10));
  }
}

TEST_F(MultiProcessTest, ClientKilledMidPutIsRevokedByTimeout) {
  StartMaster();
  StartNode("n1");
  std::unique_ptr<Client> client = Connect();
  ASSERT_NE(client, nullptr);

  SubprocessOptions options;
  options.binary = STALLED_PUT_CLIENT_PATH;
  const std::string started = Path("stalled.started");
  options.args = {master_address_, "half-written", "65536", started};
  options.output_dir = dir_.path();
  Result<std::unique_ptr<Subprocess>> stalled = Subprocess::Start(options);
  ASSERT_TRUE(stalled.ok()) << stalled.status().ToString();
  ASSERT_TRUE(WaitForFile(started, seconds(15))) << (*stalled)->OutputTail();
  ASSERT_TRUE((*stalled)->Kill());

  // Nobody can read the half-written object, and while the dead client's
  // put is in flight the key is taken.
  EXPECT_FALSE(client->Exists("half-written")->exists);
  EXPECT_EQ(client->Get("half-written").status().reason(),
            ErrorReason::kObjectNotReady);
  const std::vector<std::byte> value = Bytes(3);
  EXPECT_EQ(client->Put("half-written", value).reason(),
            ErrorReason::kObjectExists);
  // The put timeout (2 s) revokes it; then the key can be put again.
  Status put;
  ASSERT_TRUE(Eventually(
      [&] {
        put = client->Put("half-written", value);
        return put.ok();
      },
      seconds(15)))
      << put.ToString();
  Result<std::vector<std::byte>> got = client->Get("half-written");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, value);
}

TEST_F(MultiProcessTest, MasterRestartNodesRegisterAgainWithTheirSsdObjects) {
  StartMaster();
  StartNode("n1");
  std::unique_ptr<Client> client = Connect();
  std::unique_ptr<rpc::GrpcMasterApi> api = Api();
  ASSERT_NE(client, nullptr);
  auto values = PutMany(*client, "durable", 192, "n1");
  std::vector<std::string> on_ssd;
  ASSERT_TRUE(Eventually(
      [&] {
        on_ssd = SsdOnly(*api, values);
        return on_ssd.size() >= 64;
      },
      seconds(20)));

  ASSERT_TRUE(master_->Kill());
  master_->Wait(seconds(5));
  // While the master is down calls fail fast with a clear error.
  Result<ExistsInfo> down = client->Exists(on_ssd[0]);
  ASSERT_FALSE(down.ok());
  EXPECT_TRUE(down.status().reason() == ErrorReason::kUnavailable ||
              down.status().reason() == ErrorReason::kTimeout)
      << down.status().ToString();

  StartMaster();
  // The node notices, registers again and reports its SSD inventory.
  for (const std::string& key : on_ssd) {
    ExpectReadableSoon(*client, key, values[key], seconds(15));
  }
}

// With the DRAM tier full (objects in DRAM and, evicted, on SSD), a master
// killed and restarted rebuilds both tiers from the node: every object
// whose put was acknowledged reads back with its bytes, and those that
// were in DRAM are in DRAM again (docs/design/ha.md). Promotion is off: a
// promotion is never promised across a restart (its DRAM copy may not be
// recorded yet, and the copy it evicted was), and this test's own reads
// of SSD objects would trigger some just before the kill.
TEST_F(MultiProcessTest, MasterRestartKeepsTheDramTier) {
  StartMaster(/*promotion=*/false);
  StartNode("n1");
  std::unique_ptr<Client> client = Connect();
  std::unique_ptr<rpc::GrpcMasterApi> api = Api();
  ASSERT_NE(client, nullptr);
  // 24 MiB into 16 MiB of DRAM: the tier fills and eviction offloads.
  auto values = PutMany(*client, "warm", 96, "n1");
  std::vector<std::string> keys;
  for (const auto& [key, value] : values) keys.push_back(key);
  auto in_dram = [&] {
    size_t n = 0;
    for (const Result<ObjectReplicas>& r : api->GetReplicaList(keys)) {
      n += r.ok() && !r->replicas.empty() &&
           r->replicas.front().tier == Tier::kMemory;
    }
    return n;
  };
  const size_t dram_before = in_dram();
  ASSERT_GE(dram_before, 32u);

  ASSERT_TRUE(master_->Kill());
  master_->Wait(seconds(5));
  StartMaster(/*promotion=*/false);
  // The DRAM copies come back as DRAM copies once the node registered.
  size_t dram_after = 0;
  EXPECT_TRUE(Eventually(
      [&] {
        dram_after = in_dram();
        return dram_after >= dram_before;
      },
      seconds(15)))
      << dram_after << " of " << dram_before << " DRAM objects back";
  for (const std::string& key : keys) {
    ExpectReadableSoon(*client, key, values[key], seconds(15));
  }
}

}  // namespace
}  // namespace multiprocess_test
}  // namespace mooncake_tier::testing
