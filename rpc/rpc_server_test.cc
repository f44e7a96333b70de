// RpcServer: shutdown stops serving (and may be repeated), bad or taken
// addresses are refused, a request that is not the method's message is the
// caller's mistake.

#include "rpc/rpc_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "rpc/grpc_master_api.h"
#include "rpc/master_service.h"
#include "rpc/master_service_test_util.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier::rpc {
namespace rpc_server_test {
namespace {

using service_test::CallWithBody;
using std::chrono::milliseconds;
using testing::MasterHarness;

TEST(RpcServerTest, ShutdownStopsServingAndIsIdempotent) {
  MasterHarness harness;
  MasterService service(&harness.api(), &harness.link(),
                        {.clock = &harness.clock()});
  std::unique_ptr<RpcServer> server = std::move(
      *RpcServer::Start(RpcServerOptions(), {service.grpc_service()}));
  GrpcChannelOptions options;
  options.target = server->address();
  options.deadline = milliseconds(500);
  std::unique_ptr<GrpcMasterApi> api =
      std::move(*GrpcMasterApi::Create(options));
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
  MasterService service(&harness.api(), &harness.link());
  std::unique_ptr<RpcServer> first = std::move(
      *RpcServer::Start(RpcServerOptions(), {service.grpc_service()}));
  MasterService other(&harness.api(), &harness.link());
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

// The thread ids of this process now.
std::set<std::string> ThreadIds() {
  std::set<std::string> ids;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ids.insert(entry.path().filename().string());
  }
  return ids;
}

TEST(RpcServerTest, CallsAreServedByLastingThreadsNotOneThreadEach) {
  // Once more than two calls were in flight, gRPC's own poller limits (1
  // and 2) started and ended a thread for nearly every call.
  MasterHarness harness;
  MasterService service(&harness.api(), &harness.link(),
                        {.clock = &harness.clock()});
  RpcServerOptions server_options;
  std::unique_ptr<RpcServer> server =
      std::move(*RpcServer::Start(server_options, {service.grpc_service()}));
  GrpcChannelOptions options;
  options.target = server->address();
  options.deadline = milliseconds(5000);
  const std::set<std::string> before = ThreadIds();
  std::atomic<bool> done{false};
  std::set<std::string> seen;
  std::thread sampler([&] {
    while (!done.load()) {
      for (const std::string& id : ThreadIds()) seen.insert(id);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t) {
    callers.emplace_back([&] {
      std::unique_ptr<GrpcMasterApi> api =
          std::move(*GrpcMasterApi::Create(options));
      const std::string k = "k";
      for (int i = 0; i < 300; ++i) EXPECT_TRUE(api->Exists({&k, 1})[0].ok());
    });
  }
  for (std::thread& c : callers) c.join();
  done = true;
  sampler.join();
  size_t started = 0;
  for (const std::string& id : seen) started += before.count(id) == 0;
  // The callers, the sampler, the channels' own threads and at most
  // max_pollers server threads; 1,800 calls on a thread each would show
  // hundreds.
  EXPECT_LE(started, static_cast<size_t>(server_options.max_pollers) + 40)
      << started << " threads started during 1800 calls";
}

TEST(RpcServerTest, GarbageRequestsAreInvalidArgumentAndChangeNothing) {
  // gRPC itself answers INTERNAL ("the server is broken") when the body does
  // not parse; the caller is at fault and must hear so.
  MasterHarness harness;
  MasterService service(&harness.api(), &harness.link(),
                        {.clock = &harness.clock()});
  std::unique_ptr<RpcServer> server = std::move(
      *RpcServer::Start(RpcServerOptions(), {service.grpc_service()}));
  // A field tag with no value, an unterminated varint, a length past the
  // end.
  for (const std::string& garbage :
       {std::string("\x0a", 1), std::string("\xff\xff\xff\xff", 4),
        std::string("\x0a\x7f"
                    "abc",
                    5)}) {
    for (const char* method : {"/mooncake_tier.proto.MasterService/Exists",
                               "/mooncake_tier.proto.MasterService/Remove",
                               "/mooncake_tier.proto.MasterService/"
                               "RegisterNode"}) {
      const grpc::Status s = CallWithBody(server->address(), method, garbage);
      EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
          << method << ": " << s.error_message();
      EXPECT_NE(s.error_message().find(method), std::string::npos)
          << s.error_message();
    }
  }
  EXPECT_TRUE(harness.master().ListNodes().empty());
  // An empty body is a valid (all-default) message and reaches the handler;
  // the answer is then the service's own.
  EXPECT_TRUE(CallWithBody(server->address(),
                           "/mooncake_tier.proto.MasterService/Exists", "")
                  .ok());
  // Well-formed calls are untouched.
  GrpcChannelOptions options;
  options.target = server->address();
  std::unique_ptr<GrpcMasterApi> api =
      std::move(*GrpcMasterApi::Create(options));
  const std::string k = "k";
  EXPECT_TRUE(api->Exists({&k, 1})[0].ok());
}

TEST(RpcServerTest, PollerLimitsAreChecked) {
  MasterHarness harness;
  MasterService service(&harness.api(), &harness.link());
  RpcServerOptions options;
  options.min_pollers = 0;
  EXPECT_EQ(
      RpcServer::Start(options, {service.grpc_service()}).status().reason(),
      ErrorReason::kInvalidArgument);
  options.min_pollers = 4;
  options.max_pollers = 3;
  EXPECT_EQ(
      RpcServer::Start(options, {service.grpc_service()}).status().reason(),
      ErrorReason::kInvalidArgument);
}

}  // namespace
}  // namespace rpc_server_test
}  // namespace mooncake_tier::rpc
