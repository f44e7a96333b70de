// Authenticated calls (rpc/call_authorizer.h) against a real MasterService
// over a real Master on 127.0.0.1:0: anonymous and wrong-role callers are
// refused before any master sees the call, the right role is served, and
// the control lane is off. The attacks an unauthenticated plane allowed,
// turned into checks: an anonymous DeregisterNode, removes, fake
// registrations.

#include <gtest/gtest.h>

#include <string>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "rpc/call_authorizer.h"
#include "rpc/grpc_master_api.h"
#include "rpc/grpc_master_link.h"
#include "rpc/master_methods.h"
#include "rpc/master_service.h"
#include "rpc/proto/master.grpc.pb.h"
#include "rpc/rpc_server.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier::rpc {
namespace master_service_auth_test {
namespace {

using testing::MasterHarness;

const std::string kNodeToken(40, 'n');
const std::string kClientToken(40, 'c');

TEST(CallAuthorizerTest, ShortSharedOrMissingTokensAreRefused) {
  EXPECT_EQ(CallAuthorizer::Create({{"short"}, {}}).status().reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ(
      CallAuthorizer::Create({{kNodeToken}, {kNodeToken}}).status().reason(),
      ErrorReason::kInvalidArgument);
  EXPECT_EQ(CallAuthorizer::Create({}).status().reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_TRUE(CallAuthorizer::Create({{kNodeToken}, {}}).ok());
}

TEST(CallAuthorizerTest, EachRoleOnlyItsCalls) {
  auto authorizer = *CallAuthorizer::Create({{kNodeToken}, {kClientToken}});
  auto bearer = [](const std::string& token) { return "Bearer " + token; };
  EXPECT_TRUE(
      authorizer->AuthorizeBearer(bearer(kNodeToken), kNodeRole, "Heartbeat")
          .ok());
  EXPECT_TRUE(
      authorizer->AuthorizeBearer(bearer(kClientToken), kClientRole, "Exists")
          .ok());
  EXPECT_TRUE(authorizer
                  ->AuthorizeBearer(bearer(kClientToken),
                                    kNodeRole | kClientRole, "GetNode")
                  .ok());
  const Status wrong =
      authorizer->AuthorizeBearer(bearer(kClientToken), kNodeRole, "Heartbeat");
  EXPECT_EQ(wrong.reason(), ErrorReason::kUnauthenticated);
  EXPECT_NE(wrong.message().find("a client's token"), std::string::npos)
      << wrong.message();
  EXPECT_EQ(authorizer->AuthorizeBearer("", kNodeRole, "Heartbeat").reason(),
            ErrorReason::kUnauthenticated);
  EXPECT_EQ(
      authorizer->AuthorizeBearer(kNodeToken, kNodeRole, "Heartbeat").reason(),
      ErrorReason::kUnauthenticated);  // no "Bearer "
  EXPECT_EQ(authorizer
                ->AuthorizeBearer(bearer(std::string(40, 'x')), kNodeRole,
                                  "Heartbeat")
                .reason(),
            ErrorReason::kUnauthenticated);
  EXPECT_EQ(authorizer->refused(), 4u);
}

TEST(CallAuthorizerTest, NewTokensReplaceTheOldAtOnceAndBadOnesChangeNothing) {
  auto authorizer = *CallAuthorizer::Create({{kNodeToken}, {kClientToken}});
  const std::string fresh(48, 'f');
  ASSERT_TRUE(authorizer->SetTokens({{kNodeToken}, {fresh}}).ok());
  EXPECT_FALSE(
      authorizer->AuthorizeBearer("Bearer " + kClientToken, kClientRole, "x")
          .ok());
  EXPECT_TRUE(
      authorizer->AuthorizeBearer("Bearer " + fresh, kClientRole, "x").ok());
  EXPECT_FALSE(authorizer->SetTokens({{"short"}, {}}).ok());
  EXPECT_TRUE(
      authorizer->AuthorizeBearer("Bearer " + fresh, kClientRole, "x").ok());
}

class MasterServiceAuthTest : public ::testing::Test {
 protected:
  MasterServiceAuthTest()
      : authorizer_(*CallAuthorizer::Create({{kNodeToken}, {kClientToken}})),
        service_(
            &harness_.api(), &harness_.link(),
            {.clock = &harness_.clock(), .authorizer = authorizer_.get()}) {}

  void SetUp() override {
    Result<std::unique_ptr<RpcServer>> server =
        RpcServer::Start(RpcServerOptions(), {service_.grpc_service()});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    service_.SetControlLane("lane-address");
    raw_ = proto::MasterService::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  GrpcChannelOptions Channel(const std::string& token) const {
    GrpcChannelOptions options;
    options.target = server_->address();
    options.token = token;
    return options;
  }

  // A node registered with the node's token, holding one object put with
  // the client's.
  NodeId RegisterWithAnObject() {
    auto link = *GrpcMasterLink::Create(Channel(kNodeToken));
    Result<NodeId> node =
        link->RegisterNode(MasterHarness::SmallNodeSpec("a"), {}, {});
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    auto api = *GrpcMasterApi::Create(Channel(kClientToken));
    PutStartRequest request{"k", 1024, {}, "client"};
    EXPECT_TRUE(std::move(api->PutStart({&request, 1})[0]).ok());
    const std::string key = "k";
    EXPECT_TRUE(api->PutEnd("client", {&key, 1})[0].ok());
    return node.ok() ? *node : kNoNode;
  }

  // DeregisterNode over the raw stub with `authorization` ("" for none).
  grpc::Status RawDeregister(NodeId node, const std::string& authorization) {
    grpc::ClientContext context;
    if (!authorization.empty()) {
      context.AddMetadata("authorization", authorization);
    }
    proto::DeregisterNodeRequest request;
    request.set_node_id(node);
    proto::DeregisterNodeResponse response;
    return raw_->DeregisterNode(&context, request, &response);
  }

  MasterHarness harness_;
  std::unique_ptr<CallAuthorizer> authorizer_;
  MasterService service_;
  std::unique_ptr<RpcServer> server_;
  std::unique_ptr<proto::MasterService::Stub> raw_;
};

TEST_F(MasterServiceAuthTest,
       AnAnonymousOrClientDeregisterIsRefusedAndChangesNothing) {
  const NodeId node = RegisterWithAnObject();
  const grpc::Status anonymous = RawDeregister(node, "");
  EXPECT_EQ(anonymous.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  const grpc::Status as_client = RawDeregister(node, "Bearer " + kClientToken);
  EXPECT_EQ(as_client.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(as_client.error_message().find("a client's token"),
            std::string::npos)
      << as_client.error_message();
  // The node and its object are still there.
  EXPECT_EQ(harness_.master().GetStats().nodes_deregistered, 0u);
  auto api = *GrpcMasterApi::Create(Channel(kClientToken));
  const std::string key = "k";
  Result<ExistsInfo> info = std::move(api->Exists({&key, 1})[0]);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_TRUE(info->exists);
  // The node's own token may.
  EXPECT_TRUE(RawDeregister(node, "Bearer " + kNodeToken).ok());
  EXPECT_EQ(harness_.master().GetStats().nodes_deregistered, 1u);
  // Refusals are recorded under their method, as UNAUTHENTICATED (16).
  EXPECT_EQ(service_.recorder()
                .Get(static_cast<size_t>(MasterMethod::kDeregisterNode))
                .by_code[16],
            2u);
}

TEST_F(MasterServiceAuthTest,
       NodeCallsNeedANodeTokenAndClientCallsAClientToken) {
  // A client cannot register a fake node or heartbeat as one.
  auto client_link = *GrpcMasterLink::Create(Channel(kClientToken));
  EXPECT_EQ(
      client_link->RegisterNode(MasterHarness::SmallNodeSpec("fake"), {}, {})
          .status()
          .reason(),
      ErrorReason::kUnauthenticated);
  auto anonymous_link = *GrpcMasterLink::Create(Channel(""));
  EXPECT_EQ(
      anonymous_link->RegisterNode(MasterHarness::SmallNodeSpec("fake"), {}, {})
          .status()
          .reason(),
      ErrorReason::kUnauthenticated);
  EXPECT_EQ(harness_.master().GetStats().nodes_registered, 0u);

  const NodeId node = RegisterWithAnObject();
  EXPECT_EQ(client_link->Heartbeat(node, std::nullopt).reason(),
            ErrorReason::kUnauthenticated);

  // A node cannot read, remove or put objects; an anonymous caller neither.
  const std::string key = "k";
  for (const std::string& token : {kNodeToken, std::string()}) {
    auto api = *GrpcMasterApi::Create(Channel(token));
    EXPECT_EQ(std::move(api->Exists({&key, 1})[0]).status().reason(),
              ErrorReason::kUnauthenticated);
    EXPECT_EQ(api->Remove({&key, 1}, RemoveOptions{})[0].reason(),
              ErrorReason::kUnauthenticated);
  }
  auto api = *GrpcMasterApi::Create(Channel(kClientToken));
  Result<ExistsInfo> info = std::move(api->Exists({&key, 1})[0]);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_TRUE(info->exists);
  // GetNode is both roles'.
  auto node_api = *GrpcMasterApi::Create(Channel(kNodeToken));
  EXPECT_TRUE(node_api->GetNode(node).ok());
  EXPECT_TRUE(api->GetNode(node).ok());
}

TEST_F(MasterServiceAuthTest, TheControlLaneIsOffAndItsCallsAreRefused) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + kClientToken);
  proto::GetControlLaneRequest request;
  proto::GetControlLaneResponse response;
  const grpc::Status status =
      raw_->GetControlLane(&context, request, &response);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(response.worker_address().empty());
  // A call arriving on the lane carries no credentials at all.
  proto::ExistsRequest exists;
  exists.add_keys("k");
  std::string reply;
  EXPECT_EQ(service_
                .ServeLaneCall(MasterMethod::kExists,
                               exists.SerializeAsString(), &reply)
                .reason(),
            ErrorReason::kUnauthenticated);
}

}  // namespace
}  // namespace master_service_auth_test
}  // namespace mooncake_tier::rpc
