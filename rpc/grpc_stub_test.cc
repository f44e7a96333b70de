// The gRPC stubs (GrpcMasterApi, GrpcMasterLink) when the master cannot
// answer: an unreachable or silent master is a clear error within the
// deadline; bad options are refused.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "rpc/grpc_master_api.h"
#include "rpc/grpc_master_link.h"
#include "tests/support/silent_master.h"

namespace mooncake_tier::rpc {
namespace grpc_stub_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(GrpcStubTest, UnreachableMasterIsAClearErrorWithinTheDeadline) {
  GrpcChannelOptions options;
  options.target = "127.0.0.1:" + std::to_string(ClosedPort());
  options.deadline = milliseconds(500);
  std::unique_ptr<GrpcMasterApi> api =
      std::move(*GrpcMasterApi::Create(options));
  std::unique_ptr<GrpcMasterLink> link =
      std::move(*GrpcMasterLink::Create(options));

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> keys = {"a", "b"};
  std::vector<Result<ExistsInfo>> exists = api->Exists(keys);
  ASSERT_EQ(exists.size(), 2u);
  for (const Result<ExistsInfo>& e : exists) {
    EXPECT_TRUE(e.status().reason() == ErrorReason::kUnavailable ||
                e.status().reason() == ErrorReason::kTimeout)
        << e.status().ToString();
    EXPECT_NE(e.status().message().find(options.target), std::string::npos);
  }
  const Status hb = link->Heartbeat(1, std::nullopt);
  EXPECT_TRUE(hb.reason() == ErrorReason::kUnavailable ||
              hb.reason() == ErrorReason::kTimeout)
      << hb.ToString();
  // Bounded by the deadlines (two calls), with room for a slow machine.
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
}

TEST(GrpcStubTest, SilentMasterTimesOut) {
  testing::ExpectSilentMasterCallGivesUp(
      [](GrpcMasterLink& link) { return link.Heartbeat(1, std::nullopt); });
}

TEST(GrpcStubTest, BadOptionsAreRejected) {
  GrpcChannelOptions options;
  EXPECT_EQ(GrpcMasterApi::Create(options).status().reason(),
            ErrorReason::kInvalidArgument);
  options.target = "127.0.0.1:1";
  options.deadline = Duration::zero();
  EXPECT_EQ(GrpcMasterLink::Create(options).status().reason(),
            ErrorReason::kInvalidArgument);
}

}  // namespace
}  // namespace grpc_stub_test
}  // namespace mooncake_tier::rpc
