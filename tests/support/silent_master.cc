#include "tests/support/silent_master.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <utility>

#include "tests/support/silent_listener.h"

namespace mooncake_tier::testing {

void ExpectSilentMasterCallGivesUp(
    const std::function<Status(rpc::GrpcMasterLink&)>& call) {
  const SilentListener master;
  rpc::GrpcChannelOptions options;
  options.target = master.address();
  options.deadline = std::chrono::milliseconds(300);
  std::unique_ptr<rpc::GrpcMasterLink> link =
      std::move(*rpc::GrpcMasterLink::Create(options));
  const auto start = std::chrono::steady_clock::now();
  const Status s = call(*link);
  EXPECT_TRUE(s.reason() == ErrorReason::kTimeout ||
              s.reason() == ErrorReason::kUnavailable)
      << s.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace mooncake_tier::testing
