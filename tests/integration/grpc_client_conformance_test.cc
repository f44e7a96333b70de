// The client conformance suite against a store whose control plane is
// gRPC (tests/support/grpc_cluster.h: a Master behind MasterService on
// 127.0.0.1:0 and two storage nodes that reach it through GrpcMasterLink),
// with two data planes:
// - Grpc: clients reach the master through GrpcMasterApi and move bytes
//   over the in-process transport (only the metadata path differs from the
//   embedded cluster's);
// - Remote: the distributed store as deployed, nodes exporting their
//   segments over UCX and clients made by ConnectRemote (gRPC + UCX); client
//   and nodes share a host, so DRAM-tier bytes move through the nodes'
//   shared-memory segments;
// - RemoteUcx: the same with shared memory off on both sides, so every
//   transfer goes over UCX as between hosts.

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "mooncake_tier/remote_client.h"
#include "tests/support/client_conformance.h"
#include "tests/support/grpc_cluster.h"

namespace mooncake_tier::testing {
namespace grpc_client_conformance_test {
namespace {

// A GrpcCluster (master + nodes "n1", "n2") with one client.
class GrpcClusterEnv : public ClientEnv {
 public:
  explicit GrpcClusterEnv(GrpcClusterOptions::DataPlane plane,
                          bool shared_memory = true) {
    GrpcClusterOptions options;
    options.plane = plane;
    options.shared_memory = shared_memory;
    Result<std::unique_ptr<GrpcCluster>> cluster = GrpcCluster::Start(options);
    EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
    if (!cluster.ok()) return;
    cluster_ = std::move(*cluster);
    client_ = NewClient();
  }

  Client& client() override { return *client_; }
  std::unique_ptr<Client> NewClient() override {
    Result<std::unique_ptr<Client>> client = cluster_->NewClient();
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }
  uint64_t dram_bytes() const override {
    return GrpcClusterOptions().node_dram_bytes;
  }

 private:
  std::unique_ptr<GrpcCluster> cluster_;
  std::unique_ptr<Client> client_;  // goes before the cluster
};

std::unique_ptr<ClientEnv> MakeGrpcClusterEnv() {
  return std::make_unique<GrpcClusterEnv>(
      GrpcClusterOptions::DataPlane::kInProcess);
}

std::unique_ptr<ClientEnv> MakeRemoteClusterEnv() {
  return std::make_unique<GrpcClusterEnv>(GrpcClusterOptions::DataPlane::kUcx);
}

std::unique_ptr<ClientEnv> MakeRemoteUcxOnlyEnv() {
  return std::make_unique<GrpcClusterEnv>(GrpcClusterOptions::DataPlane::kUcx,
                                          /*shared_memory=*/false);
}

INSTANTIATE_TEST_SUITE_P(Grpc, ClientConformanceTest,
                         ::testing::Values(&MakeGrpcClusterEnv));
INSTANTIATE_TEST_SUITE_P(Remote, ClientConformanceTest,
                         ::testing::Values(&MakeRemoteClusterEnv));
INSTANTIATE_TEST_SUITE_P(RemoteUcx, ClientConformanceTest,
                         ::testing::Values(&MakeRemoteUcxOnlyEnv));

// What a reader's calls cost the master: a fresh client's first read of a
// node asks no GetNode, and a prefix probe brings the locations of what it
// found, so that reading the prefix next asks nothing more.
TEST(RemoteClientTest, AProbeAndFirstContactCostNoExtraCalls) {
  Result<std::unique_ptr<GrpcCluster>> cluster = GrpcCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  GrpcCluster& c = **cluster;
  Result<std::unique_ptr<Client>> writer = c.NewClient();
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> values;
  std::vector<PutItem> items;
  for (int i = 0; i < 6; ++i) {
    keys.push_back("prefix/" + std::to_string(i));
    values.emplace_back(4096, std::byte(i + 1));
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    PutItem item;
    item.key = keys[i];
    item.value = values[i];
    items.push_back(std::move(item));
  }
  for (const Status& s : (*writer)->PutBatch(items)) {
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  using rpc::MasterMethod;
  struct Counts {
    uint64_t get_node, get_replica_list, probe;
  };
  auto counts = [&] {
    return Counts{c.master_calls(MasterMethod::kGetNode),
                  c.master_calls(MasterMethod::kGetReplicaList),
                  c.master_calls(MasterMethod::kProbePrefix)};
  };

  // A reader that has met no node: one lookup, no GetNode.
  Result<std::unique_ptr<Client>> reader = c.NewClient();
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  Counts before = counts();
  const std::vector<std::string> first = {keys[0]};
  auto got = (*reader)->GetBatch(first);
  ASSERT_TRUE(got[0].ok()) << got[0].status().ToString();
  EXPECT_EQ(*got[0], values[0]);
  Counts after = counts();
  EXPECT_EQ(after.get_node, before.get_node);
  EXPECT_EQ(after.get_replica_list, before.get_replica_list + 1);

  // Another fresh reader probes the first four keys and one absent key,
  // then reads the prefix found: one probe, nothing else.
  Result<std::unique_ptr<Client>> engine = c.NewClient();
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  const std::vector<std::string> probed = {keys[0], keys[1],  keys[2],
                                           keys[3], "absent", keys[4]};
  before = counts();
  Result<PrefixInfo> prefix = (*engine)->ProbePrefix(probed);
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  EXPECT_EQ(prefix->length, 4u);
  EXPECT_EQ(prefix->bytes, 4u * 4096);
  const std::vector<std::string> found(probed.begin(), probed.begin() + 4);
  auto read = (*engine)->GetBatch(found);
  for (size_t i = 0; i < found.size(); ++i) {
    ASSERT_TRUE(read[i].ok()) << read[i].status().ToString();
    EXPECT_EQ(*read[i], values[i]);
  }
  after = counts();
  EXPECT_EQ(after.probe, before.probe + 1);
  EXPECT_EQ(after.get_replica_list, before.get_replica_list);
  EXPECT_EQ(after.get_node, before.get_node);
  // A key past the prefix was not looked up: reading it asks the master.
  const std::vector<std::string> past = {keys[4]};
  ASSERT_TRUE((*engine)->GetBatch(past)[0].ok());
  EXPECT_EQ(counts().get_replica_list, after.get_replica_list + 1);
}

TEST(RemoteClientTest, UnreachableMasterIsAClearErrorNotAHang) {
  RemoteClientOptions options;
  // A port nobody listens on: bind one, close it.
  options.master = "127.0.0.1:1";
  options.rpc_timeout = std::chrono::milliseconds(500);
  const auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Client>> client = ConnectRemote(options);
  ASSERT_FALSE(client.ok());
  EXPECT_TRUE(client.status().reason() == ErrorReason::kUnavailable ||
              client.status().reason() == ErrorReason::kTimeout)
      << client.status().ToString();
  EXPECT_NE(client.status().message().find("127.0.0.1:1"), std::string::npos)
      << client.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(RemoteClientTest, BadOptionsAreRefused) {
  RemoteClientOptions options;
  options.master = "";
  EXPECT_EQ(ConnectRemote(options).status().reason(),
            ErrorReason::kInvalidArgument);
  options.master = "127.0.0.1:1";
  options.rpc_timeout = std::chrono::milliseconds(0);
  EXPECT_EQ(ConnectRemote(options).status().reason(),
            ErrorReason::kInvalidArgument);
}

}  // namespace
}  // namespace grpc_client_conformance_test
}  // namespace mooncake_tier::testing
