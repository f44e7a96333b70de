// RpcServer: shutdown stops serving (and may be repeated), bad or taken
// addresses are refused.

#include "rpc/rpc_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "rpc/grpc_master_api.h"
#include "rpc/master_service.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier::rpc {
namespace {

using std::chrono::milliseconds;
using testing::MasterHarness;

TEST(RpcServerTest, ShutdownStopsServingAndIsIdempotent) {
  MasterHarness harness;
  MasterService service(&harness.master(), {.clock = &harness.clock()});
  std::unique_ptr<RpcServer> server =
      std::move(*RpcServer::Start(RpcServerOptions(), {service.grpc_service()}));
  GrpcChannelOptions options;
  options.target = server->address();
  options.deadline = milliseconds(500);
  std::unique_ptr<GrpcMasterApi> api = std::move(*GrpcMasterApi::Create(options));
  const std::string k = "k";
  EXPECT_TRUE(api->Exists({&k, 1})[0].ok());
  server->Shutdown(milliseconds(100));
  server->Shutdown();
  const Status after = api->Exists({&k, 1})[0].status();
  EXPECT_TRUE(after.reason() == ErrorReason::kUnavailable ||
              after.reason() == ErrorReason::kTimeout)
      << after.ToString();
}

TEST(RpcServerTest, BadAddressesAreRefused) {
  MasterHarness harness;
  MasterService service(&harness.master());
  std::unique_ptr<RpcServer> first =
      std::move(*RpcServer::Start(RpcServerOptions(), {service.grpc_service()}));
  MasterService other(&harness.master());
  RpcServerOptions same;
  same.address = first->address();
  EXPECT_EQ(RpcServer::Start(same, {other.grpc_service()}).status().reason(),
            ErrorReason::kUnavailable);
  RpcServerOptions empty;
  empty.address = "";
  EXPECT_EQ(RpcServer::Start(empty, {other.grpc_service()}).status().reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ(RpcServer::Start(RpcServerOptions(), {}).status().reason(),
            ErrorReason::kInvalidArgument);
}


}  // namespace
}  // namespace mooncake_tier::rpc
