// Node lifecycle over gRPC: the DeregisterNode call of a node stopping
// cleanly, served by MasterService over a real Master (on a manual clock)
// on 127.0.0.1:0 and reached through GrpcMasterLink.

#include <gtest/gtest.h>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "rpc/grpc_master_api.h"
#include "rpc/grpc_master_link.h"
#include "rpc/master_methods.h"
#include "rpc/master_service.h"
#include "rpc/proto/master.grpc.pb.h"
#include "rpc/rpc_server.h"
#include "rpc/status_convert.h"
#include "tests/support/master_harness.h"
#include "tests/support/silent_master.h"

namespace mooncake_tier::rpc {
namespace master_service_nodes_test {
namespace {

using testing::MasterHarness;

class MasterServiceNodesTest : public ::testing::Test {
 protected:
  MasterServiceNodesTest()
      : service_(&harness_.api(), &harness_.link(),
                 {.clock = &harness_.clock()}) {}

  void SetUp() override {
    Result<std::unique_ptr<RpcServer>> server =
        RpcServer::Start(RpcServerOptions(), {service_.grpc_service()});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    GrpcChannelOptions options;
    options.target = server_->address();
    api_ = std::move(*GrpcMasterApi::Create(options));
    link_ = std::move(*GrpcMasterLink::Create(options));
  }

  NodeId Register(const std::string& name,
                  std::vector<SsdInventoryEntry> inventory = {}) {
    Result<NodeId> id =
        link_->RegisterNode(MasterHarness::SmallNodeSpec(name), inventory, {});
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : kNoNode;
  }

  Status Put(const std::string& key, const std::string& node) {
    PutStartRequest request{key, 1024, {}, "client"};
    request.options.preferred_node = node;
    Result<ReplicaDescriptor> started =
        std::move(api_->PutStart({&request, 1})[0]);
    if (!started.ok()) return started.status();
    return api_->PutEnd("client", {&key, 1})[0];
  }

  bool Exists(const std::string& key) {
    Result<ExistsInfo> info = std::move(api_->Exists({&key, 1})[0]);
    return info.ok() && info->exists;
  }

  CallStats Served(MasterMethod m) {
    return service_.recorder().Get(static_cast<size_t>(m));
  }

  MasterHarness harness_;
  MasterService service_;
  std::unique_ptr<RpcServer> server_;
  std::unique_ptr<GrpcMasterApi> api_;
  std::unique_ptr<GrpcMasterLink> link_;
};

TEST_F(MasterServiceNodesTest, DeregisteredNodeIsGoneAtOnce) {
  const NodeId a = Register("a", {{"on-ssd", 512, std::nullopt}});
  Register("b");
  ASSERT_TRUE(Put("on-a", "a").ok());
  ASSERT_TRUE(Put("on-b", "b").ok());

  ASSERT_TRUE(link_->DeregisterNode(a).ok());

  // No time passed on the master's clock: this is not node_ttl.
  EXPECT_EQ(api_->GetNode(a).status().reason(), ErrorReason::kNodeNotFound);
  EXPECT_FALSE(Exists("on-a"));
  EXPECT_FALSE(Exists("on-ssd"));
  EXPECT_TRUE(Exists("on-b"));
  const MasterStats s = harness_.master().GetStats();
  EXPECT_EQ(s.nodes_deregistered, 1u);
  EXPECT_EQ(s.nodes_expired, 0u);
  EXPECT_EQ(s.nodes_dead, 1u);
  // The node learns it is gone if it heartbeats anyway.
  EXPECT_EQ(link_->Heartbeat(a, std::nullopt).reason(),
            ErrorReason::kNodeNotFound);
}

TEST_F(MasterServiceNodesTest, UnknownOrRepeatedDeregisterIsNodeNotFound) {
  const NodeId a = Register("a");
  ASSERT_TRUE(Put("k", "a").ok());

  const Status unknown = link_->DeregisterNode(a + 100);
  EXPECT_EQ(unknown.reason(), ErrorReason::kNodeNotFound) << unknown.ToString();
  EXPECT_TRUE(Exists("k"));
  EXPECT_EQ(harness_.master().GetStats().nodes_deregistered, 0u);

  ASSERT_TRUE(link_->DeregisterNode(a).ok());
  EXPECT_EQ(link_->DeregisterNode(a).reason(), ErrorReason::kNodeNotFound);
  EXPECT_EQ(harness_.master().GetStats().nodes_deregistered, 1u);
  EXPECT_EQ(harness_.master().GetStats().nodes_dead, 1u);
}

TEST_F(MasterServiceNodesTest, CallsAreRecordedOnBothSides) {
  const NodeId a = Register("a");
  ASSERT_TRUE(link_->DeregisterNode(a).ok());
  link_->DeregisterNode(a).IgnoreError();  // in-band NODE_NOT_FOUND

  // Both answered the call itself with OK; the refusal travels in band.
  EXPECT_EQ(Served(MasterMethod::kDeregisterNode).calls, 2u);
  EXPECT_EQ(Served(MasterMethod::kDeregisterNode).by_code[0], 2u);
  EXPECT_GT(Served(MasterMethod::kDeregisterNode).latency_sum_ns, 0u);
  EXPECT_EQ(link_->recorder()
                .Get(static_cast<size_t>(MasterMethod::kDeregisterNode))
                .calls,
            2u);
  EXPECT_EQ(MasterMethodName(MasterMethod::kDeregisterNode), "DeregisterNode");
}

TEST_F(MasterServiceNodesTest, MissingNodeIdIsRefusedAndChangesNothing) {
  Register("a");
  auto raw = proto::MasterService::NewStub(grpc::CreateChannel(
      server_->address(), grpc::InsecureChannelCredentials()));
  proto::DeregisterNodeRequest req;  // node_id unset
  proto::DeregisterNodeResponse resp;
  grpc::ClientContext ctx;
  const grpc::Status s = raw->DeregisterNode(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(FromGrpcStatus(s, "DeregisterNode", "x").reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ(harness_.master().GetStats().nodes_alive, 1u);
  EXPECT_EQ(harness_.master().GetStats().nodes_deregistered, 0u);
}

// A node stopping while its master is silent: the call gives up at the
// deadline, so a shutdown never hangs on it.
TEST(GrpcMasterLinkDeregisterTest, SilentMasterTimesOutWithinTheDeadline) {
  testing::ExpectSilentMasterCallGivesUp(
      [](GrpcMasterLink& link) { return link.DeregisterNode(1); });
}

}  // namespace
}  // namespace master_service_nodes_test
}  // namespace mooncake_tier::rpc
