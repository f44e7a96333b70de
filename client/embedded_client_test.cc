// The client conformance suite against the in-process store: a two-node
// cluster with SSD stores in memory, and the public EmbeddedStore on real
// files.

#include <gtest/gtest.h>

#include <filesystem>

#include "client/embedded_cluster.h"
#include "mooncake_tier/embedded_store.h"
#include "tests/support/client_conformance.h"
#include "tests/support/temp_dir.h"

namespace mooncake_tier::testing {
namespace embedded_client_test {
namespace {

constexpr uint64_t kDram = 8 << 20;

class ClusterEnv : public ClientEnv {
 public:
  ClusterEnv() {
    EmbeddedClusterOptions options;
    options.master.offload_mode = OffloadMode::kOnEvict;
    for (const char* name : {"n1", "n2"}) {
      EmbeddedNodeOptions node;
      node.node.name = name;
      node.node.dram_bytes = kDram / 2;
      node.ssd_bytes = 64 << 20;
      options.nodes.push_back(node);
    }
    cluster_ = std::move(*EmbeddedCluster::Start(std::move(options)));
    client_ = cluster_->NewClient();
  }
  Client& client() override { return *client_; }
  std::unique_ptr<Client> NewClient() override { return cluster_->NewClient(); }
  uint64_t dram_bytes() const override { return kDram / 2; }

 private:
  std::unique_ptr<EmbeddedCluster> cluster_;
  std::unique_ptr<Client> client_;
};

class EmbeddedStoreEnv : public ClientEnv {
 public:
  EmbeddedStoreEnv() {
    EmbeddedStoreOptions options;
    options.dram_bytes = kDram;
    options.ssd_dir = dir_.path() + "/ssd";
    options.ssd_bytes = 64 << 20;
    Result<std::unique_ptr<EmbeddedStore>> store = EmbeddedStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }
  Client& client() override { return store_->client(); }
  std::unique_ptr<Client> NewClient() override { return store_->NewClient(); }
  uint64_t dram_bytes() const override { return kDram; }

 private:
  TempDir dir_;
  std::unique_ptr<EmbeddedStore> store_;
};

std::unique_ptr<ClientEnv> MakeClusterEnv() {
  return std::make_unique<ClusterEnv>();
}
std::unique_ptr<ClientEnv> MakeEmbeddedStoreEnv() {
  return std::make_unique<EmbeddedStoreEnv>();
}

INSTANTIATE_TEST_SUITE_P(InProcess, ClientConformanceTest,
                         ::testing::Values(&MakeClusterEnv,
                                           &MakeEmbeddedStoreEnv));

TEST(EmbeddedStoreTest, BadOptionsAreRejected) {
  EmbeddedStoreOptions options;
  options.offload_mode = "sometimes";
  EXPECT_EQ(EmbeddedStore::Open(options).status().reason(),
            ErrorReason::kInvalidArgument);
  options = EmbeddedStoreOptions();
  options.eviction_ratio = 0.99;
  EXPECT_EQ(EmbeddedStore::Open(options).status().reason(),
            ErrorReason::kInvalidArgument);
  options = EmbeddedStoreOptions();
  options.dram_bytes = 0;
  EXPECT_FALSE(EmbeddedStore::Open(options).ok());
}

}  // namespace
}  // namespace embedded_client_test
}  // namespace mooncake_tier::testing
