// The client conformance suite against a store whose control plane is
// gRPC: a Master behind MasterService on 127.0.0.1:0 and two storage nodes
// that reach it through GrpcMasterLink, with two data planes:
// - Grpc: clients reach the master through GrpcMasterApi and move bytes
//   over the in-process transport (only the metadata path differs from the
//   embedded cluster's);
// - Remote: the distributed store as deployed, nodes exporting their
//   segments over UCX and clients made by ConnectRemote (gRPC + UCX).

#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "client/store_client.h"
#include "core/master.h"
#include "core/mutex.h"
#include "node/memory_ssd_device.h"
#include "node/ssd_store.h"
#include "node/storage_node.h"
#include "rpc/grpc_master_api.h"
#include "rpc/grpc_master_link.h"
#include "rpc/master_service.h"
#include "rpc/rpc_server.h"
#include "mooncake_tier/remote_client.h"
#include "tests/support/client_conformance.h"
#include "transport/in_process_transport.h"
#include "transport/ucx_segment_exporter.h"
#include "transport/ucx_transport.h"

namespace mooncake_tier::testing {
namespace {

constexpr uint64_t kNodeDram = 4 << 20;
constexpr uint64_t kNodeSsd = 64 << 20;

enum class DataPlane { kInProcess, kUcx };

class GrpcClusterEnv : public ClientEnv {
 public:
  explicit GrpcClusterEnv(DataPlane plane) : plane_(plane) {
    MasterConfig config;
    config.offload_mode = OffloadMode::kOnEvict;
    master_ = std::make_unique<Master>(config, SystemClock::Default());
    service_ = std::make_unique<rpc::MasterService>(master_.get());
    Result<std::unique_ptr<rpc::RpcServer>> server = rpc::RpcServer::Start(
        rpc::RpcServerOptions(), {service_->grpc_service()});
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    if (!server.ok()) return;
    server_ = std::move(*server);

    rpc::GrpcChannelOptions channel;
    channel.target = server_->address();
    api_ = std::move(*rpc::GrpcMasterApi::Create(channel));
    link_ = std::move(*rpc::GrpcMasterLink::Create(channel));
    if (plane_ == DataPlane::kUcx) StartUcx();
    for (const char* name : {"n1", "n2"}) StartNode(name);
    ticker_ = std::thread([this] { TickLoop(); });
    client_ = NewClient();
  }

  ~GrpcClusterEnv() override {
    {
      MutexLock lock(&mu_);
      stopping_ = true;
      stop_cv_.SignalAll();
    }
    if (ticker_.joinable()) ticker_.join();
    client_.reset();
    nodes_.clear();  // stops their threads before the link goes
    if (server_) server_->Shutdown();
  }

  Client& client() override { return *client_; }
  std::unique_ptr<Client> NewClient() override {
    if (plane_ == DataPlane::kInProcess) {
      return std::make_unique<StoreClient>(api_.get(), &transport_);
    }
    RemoteClientOptions options;
    options.master = server_->address();
    Result<std::unique_ptr<Client>> client = ConnectRemote(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }
  uint64_t dram_bytes() const override { return kNodeDram; }

 private:
  void StartUcx() {
    Result<std::unique_ptr<UcxSegmentExporter>> exporter =
        UcxSegmentExporter::Create();
    ASSERT_TRUE(exporter.ok()) << exporter.status().ToString();
    exporter_ = std::move(*exporter);
    Result<std::unique_ptr<UcxTransport>> peers = UcxTransport::Create();
    ASSERT_TRUE(peers.ok()) << peers.status().ToString();
    peer_transport_ = std::move(*peers);
  }

  void StartNode(const char* name) {
    SsdStoreOptions ssd_options;
    ssd_options.capacity_bytes = kNodeSsd;
    Result<std::unique_ptr<SsdStore>> ssd = SsdStore::Open(
        std::make_unique<MemorySsdDevice>(), ssd_options);
    ASSERT_TRUE(ssd.ok()) << ssd.status().ToString();
    StorageNodeOptions options;
    options.name = name;
    options.dram_bytes = kNodeDram;
    options.heartbeat_interval = std::chrono::milliseconds(50);
    SegmentExporter* exporter = &transport_;
    if (plane_ == DataPlane::kUcx) {
      exporter = exporter_.get();
      options.peer_transport = peer_transport_.get();
    }
    Result<std::unique_ptr<StorageNode>> node = StorageNode::Create(
        options, std::move(*ssd), link_.get(), exporter);
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    ASSERT_TRUE((*node)->Register().ok());
    (*node)->Start();
    nodes_.push_back(std::move(*node));
  }

  void TickLoop() {
    MutexLock lock(&mu_);
    while (!stop_cv_.WaitFor(std::chrono::milliseconds(50),
                             [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                               return stopping_;
                             })) {
      master_->Tick();
    }
  }

  const DataPlane plane_;
  std::unique_ptr<Master> master_;
  std::unique_ptr<rpc::MasterService> service_;
  std::unique_ptr<rpc::RpcServer> server_;
  InProcessTransport transport_;
  std::unique_ptr<UcxSegmentExporter> exporter_;  // kUcx
  std::unique_ptr<UcxTransport> peer_transport_;  // kUcx
  std::unique_ptr<rpc::GrpcMasterApi> api_;
  std::unique_ptr<rpc::GrpcMasterLink> link_;
  std::vector<std::unique_ptr<StorageNode>> nodes_;
  std::unique_ptr<Client> client_;
  Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  CondVar stop_cv_{&mu_};
  std::thread ticker_;
};

std::unique_ptr<ClientEnv> MakeGrpcClusterEnv() {
  return std::make_unique<GrpcClusterEnv>(DataPlane::kInProcess);
}

std::unique_ptr<ClientEnv> MakeRemoteClusterEnv() {
  return std::make_unique<GrpcClusterEnv>(DataPlane::kUcx);
}

INSTANTIATE_TEST_SUITE_P(Grpc, ClientConformanceTest,
                         ::testing::Values(&MakeGrpcClusterEnv));
INSTANTIATE_TEST_SUITE_P(Remote, ClientConformanceTest,
                         ::testing::Values(&MakeRemoteClusterEnv));

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
