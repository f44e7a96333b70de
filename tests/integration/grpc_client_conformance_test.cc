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

#include <memory>
#include <utility>

#include <gtest/gtest.h>

#include "mooncake_tier/remote_client.h"
#include "tests/support/client_conformance.h"
#include "tests/support/grpc_cluster.h"

namespace mooncake_tier::testing {
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
}  // namespace mooncake_tier::testing
