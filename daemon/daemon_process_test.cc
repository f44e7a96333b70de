// MasterProcess and NodeProcess in one process, over real gRPC and UCX on
// loopback: registration, a master that starts late, a master restart, and
// start-up failures.

#include <chrono>
#include <memory>
#include <thread>

#include "core/master.h"
#include "daemon/master_process.h"
#include "daemon/node_process.h"
#include "gtest/gtest.h"
#include "rpc/grpc_master_api.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace mooncake_tier::daemon {
namespace daemon_process_test {
namespace {

using std::chrono::milliseconds;

MasterProcessOptions MasterOn(const std::string& address) {
  MasterProcessOptions o;
  o.listen = address;
  o.tick_interval = milliseconds(50);
  o.shutdown_grace = milliseconds(200);
  return o;
}

NodeProcessOptions NodeFor(const std::string& master, const std::string& dir) {
  NodeProcessOptions o;
  o.master_address = master;
  o.node.name = "test-node";
  o.node.dram_bytes = 32ull << 20;
  o.node.heartbeat_interval = milliseconds(100);
  o.ssd_dir = dir;
  o.ssd_capacity = 64ull << 20;
  o.rpc_deadline = milliseconds(1000);
  return o;
}

// Polls `done` for up to `timeout`.
template <typename Predicate>
bool Eventually(Predicate done, milliseconds timeout = milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

TEST(DaemonProcessTest, NodeRegistersAndClientsCanPut) {
  testing::TempDir dir;
  auto master = MasterProcess::Start(MasterOn("127.0.0.1:0"));
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  auto node = NodeProcess::Start(NodeFor((*master)->address(), dir.path()));
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  ASSERT_TRUE(Eventually([&] { return (*node)->registered(); }));
  EXPECT_EQ((*master)->master().ListNodes().size(), 1u);

  rpc::GrpcChannelOptions channel;
  channel.target = (*master)->address();
  auto api = rpc::GrpcMasterApi::Create(channel);
  ASSERT_TRUE(api.ok());
  PutStartRequest put;
  put.key = "k";
  put.size = 4096;
  put.client = "test-client";
  auto started = (*api)->PutStart({&put, 1});
  ASSERT_TRUE(started[0].ok()) << started[0].status().ToString();

  (*node)->Shutdown();
  (*master)->Shutdown();
  (*node)->Shutdown();  // idempotent
}

TEST(DaemonProcessTest, NodeWaitsForALateMasterAndSurvivesARestart) {
  testing::TempDir dir;
  const int port = testing::PickFreePort();
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  auto node = NodeProcess::Start(NodeFor(address, dir.path()));
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_FALSE((*node)->registered());

  auto master = MasterProcess::Start(MasterOn(address));
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  ASSERT_TRUE(Eventually([&] { return (*node)->registered(); }));

  // A restarted master knows no node until the node registers again.
  (*master)->Shutdown();
  master->reset();
  auto restarted = MasterProcess::Start(MasterOn(address));
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
  EXPECT_TRUE(Eventually(
      [&] {
        return (*restarted)->master().ListNodes().size() == 1 &&
               (*node)->node().stats().registrations >= 2;
      },
      milliseconds(5000)));
}

TEST(DaemonProcessTest, StartFailuresAreStatuses) {
  MasterProcessOptions bad = MasterOn("127.0.0.1:0");
  bad.config.eviction_ratio = 2;
  auto invalid = MasterProcess::Start(bad);
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.status().reason(), ErrorReason::kInvalidArgument);

  auto first = MasterProcess::Start(MasterOn("127.0.0.1:0"));
  ASSERT_TRUE(first.ok());
  auto second = MasterProcess::Start(MasterOn((*first)->address()));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().reason(), ErrorReason::kUnavailable);

  testing::TempDir dir;
  auto node = NodeProcess::Start(NodeFor((*first)->address(), dir.path()));
  ASSERT_TRUE(node.ok());
  NodeProcessOptions twin = NodeFor((*first)->address(), dir.path());
  twin.node.name = "twin";
  auto clash = NodeProcess::Start(twin);
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.status().reason(), ErrorReason::kUnavailable);
  EXPECT_NE(clash.status().message().find("in use"), std::string::npos);
}

}  // namespace
}  // namespace daemon_process_test
}  // namespace mooncake_tier::daemon
