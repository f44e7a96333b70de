// HaMaster against a real etcd, in process: who serves, what a standby
// answers, the recovery gate after a failover, and the node names kept in
// etcd. The whole daemon across kill -9 is tests/e2e/failover_test.cc.

#include "daemon/ha_master.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "core/master_host.h"
#include "ha/etcd_client.h"
#include "tests/support/etcd_server.h"
#include "tests/support/eventually.h"
#include "tests/support/ignore_sigpipe.h"

namespace mooncake_tier::daemon {
namespace ha_master_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::EtcdServer;
using testing::Eventually;

NodeSpec Spec(const std::string& name) {
  NodeSpec spec;
  spec.name = name;
  spec.dram_size = 64 << 20;
  spec.transport_address = std::string("\0addr", 5);
  return spec;
}

class HaMasterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EtcdServer::Available()) GTEST_SKIP() << EtcdServer::kMissing;
    ASSERT_TRUE(etcd_.Start().ok()) << etcd_.LogTail();
  }

  std::unique_ptr<HaMaster> StartMaster(const std::string& advertise,
                                        Duration recovery_timeout) {
    HaMasterOptions options;
    options.etcd = {etcd_.endpoint()};
    options.cluster = "unit";
    options.advertise = advertise;
    options.admin_advertise = advertise + "-admin";
    options.lease_ttl = seconds(1);
    options.recovery_timeout = recovery_timeout;
    options.tick_interval = milliseconds(20);
    Result<std::unique_ptr<HaMaster>> master =
        HaMaster::Start(options, SystemClock::Default());
    EXPECT_TRUE(master.ok()) << master.status().ToString();
    return master.ok() ? std::move(*master) : nullptr;
  }

  static bool Leads(HaMaster& master) {
    return master.View().role == MasterRole::kLeader;
  }

  // Registers `name` with whichever term `master` leads in.
  static Status Register(HaMaster& master, const std::string& name) {
    std::string leader;
    MT_ASSIGN_OR_RETURN(rpc::ServingMaster serving,
                        master.Acquire(rpc::Caller::kNode, &leader));
    return serving.link->RegisterNode(Spec(name), {}, {}).status();
  }

  // The node names the cluster's leader keeps in etcd; -1 when unreadable.
  int NodesInEtcd() {
    Result<std::unique_ptr<ha::EtcdClient>> etcd =
        ha::EtcdClient::Create({.endpoints = {etcd_.endpoint()}});
    if (!etcd.ok()) return -1;
    Result<ha::PrefixRange> nodes =
        (*etcd)->GetPrefix("/mooncake-tier/unit/nodes/");
    return nodes.ok() ? static_cast<int>(nodes->kvs.size()) : -1;
  }

  EtcdServer etcd_;
};

TEST_F(HaMasterTest, OneLeadsTheOtherNamesIt) {
  std::unique_ptr<HaMaster> a = StartMaster("a:1", seconds(5));
  ASSERT_TRUE(Eventually([&] { return Leads(*a); }, seconds(10)));
  std::unique_ptr<HaMaster> b = StartMaster("b:1", seconds(5));
  ASSERT_TRUE(
      Eventually([&] { return b->View().leader == "a:1"; }, seconds(10)));
  EXPECT_FALSE(Leads(*b));
  // In sync once it holds a lease and campaigns (it may see the leader
  // first).
  EXPECT_TRUE(Eventually([&] { return b->View().in_sync; }, seconds(5)));
  EXPECT_EQ(b->View().leader_admin, "a:1-admin");
  EXPECT_EQ(b->current(), nullptr);

  std::string leader;
  Result<rpc::ServingMaster> refused =
      b->Acquire(rpc::Caller::kClient, &leader);
  EXPECT_EQ(refused.status().reason(), ErrorReason::kNotLeader);
  EXPECT_EQ(leader, "a:1");
  // The first term waits for nobody: clients are served at once.
  Result<rpc::ServingMaster> served = a->Acquire(rpc::Caller::kClient, &leader);
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_EQ(served->term, a->View().term);
  EXPECT_TRUE(a->StillServing(*served));
}

TEST_F(HaMasterTest, ANewLeaderServesClientsOnceThePreviousNodesAreBack) {
  std::unique_ptr<HaMaster> a = StartMaster("a:1", seconds(30));
  ASSERT_TRUE(Eventually([&] { return Leads(*a); }, seconds(10)));
  ASSERT_TRUE(Register(*a, "n1").ok());
  ASSERT_TRUE(Register(*a, "n2").ok());
  // Both names reach etcd (written by the leader's ticker).
  ASSERT_TRUE(Eventually([&] { return NodesInEtcd() == 2; }, seconds(5)));

  std::unique_ptr<HaMaster> b = StartMaster("b:1", seconds(30));
  ASSERT_TRUE(
      Eventually([&] { return b->View().leader == "a:1"; }, seconds(10)));
  std::string leader;
  Result<rpc::ServingMaster> held = a->Acquire(rpc::Caller::kClient, &leader);
  ASSERT_TRUE(held.ok());
  a->Shutdown();  // steps down: b is elected
  EXPECT_FALSE(a->StillServing(*held));
  ASSERT_TRUE(Eventually([&] { return Leads(*b); }, seconds(10)));
  HaView view = b->View();
  EXPECT_TRUE(view.recovering);
  EXPECT_EQ(view.nodes_expected, 2u);
  EXPECT_EQ(view.failovers, 1u);
  // Clients wait (told to retry here); nodes are served.
  Result<rpc::ServingMaster> client = b->Acquire(rpc::Caller::kClient, &leader);
  EXPECT_EQ(client.status().reason(), ErrorReason::kUnavailable);
  EXPECT_EQ(leader, "b:1");
  ASSERT_TRUE(Register(*b, "n1").ok());
  ASSERT_TRUE(
      Eventually([&] { return b->View().nodes_registered == 1; }, seconds(5)));
  EXPECT_TRUE(b->View().recovering);
  ASSERT_TRUE(Register(*b, "n2").ok());
  ASSERT_TRUE(Eventually([&] { return !b->View().recovering; }, seconds(5)));
  EXPECT_TRUE(b->Acquire(rpc::Caller::kClient, &leader).ok());
}

TEST_F(HaMasterTest, ANodeThatNeverReturnsHoldsClientsOnlyUntilTheTimeout) {
  std::unique_ptr<HaMaster> a = StartMaster("a:1", milliseconds(300));
  ASSERT_TRUE(Eventually([&] { return Leads(*a); }, seconds(10)));
  ASSERT_TRUE(Register(*a, "gone").ok());
  ASSERT_TRUE(Eventually([&] { return NodesInEtcd() == 1; }, seconds(5)));
  a->Shutdown();
  std::unique_ptr<HaMaster> b = StartMaster("b:1", milliseconds(300));
  ASSERT_TRUE(Eventually([&] { return Leads(*b); }, seconds(10)));
  std::string leader;
  ASSERT_TRUE(
      Eventually([&] { return b->Acquire(rpc::Caller::kClient, &leader).ok(); },
                 seconds(5)));
  EXPECT_EQ(b->View().nodes_registered, 0u);
  // The node that did not come back is no longer listed for the next term.
  ASSERT_TRUE(Eventually([&] { return NodesInEtcd() == 0; }, seconds(5)));
}

TEST_F(HaMasterTest, BadOptionsAreRefused) {
  HaMasterOptions options;
  options.etcd = {etcd_.endpoint()};
  options.cluster = "unit";
  options.advertise = "127.0.0.1:0";
  EXPECT_EQ(HaMaster::Start(options, SystemClock::Default()).status().reason(),
            ErrorReason::kInvalidArgument);
  options.advertise = "a:1";
  options.etcd.clear();
  EXPECT_EQ(HaMaster::Start(options, SystemClock::Default()).status().reason(),
            ErrorReason::kInvalidArgument);
  options.etcd = {etcd_.endpoint()};
  options.cluster = "has/slash";
  EXPECT_EQ(HaMaster::Start(options, SystemClock::Default()).status().reason(),
            ErrorReason::kInvalidArgument);
}

}  // namespace
}  // namespace ha_master_test
}  // namespace mooncake_tier::daemon
