#pragma once

// TierctlAdminTest, the fixture of the tierctl admin tests
// (tierctl_admin_test.cc, tierctl_top_test.cc, tierctl_usage_test.cc): a
// real AdminServer (with a token and real /metrics) on 127.0.0.1, port 0,
// over a real Master in the test process (tests/support/master_harness.h,
// on a manual clock), and mooncake-tierctl run against it.
//
// In a named namespace, not an anonymous one: the test files share one
// fixture class, as gtest requires of one test suite.
//
// Thread safety: one test thread per fixture.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "admin_server/admin_server.h"
#include "admin_server/master_admin_facade.h"
#include "base/byte_units.h"
#include "metrics/master_metrics.h"
#include "metrics/text_exposition.h"
#include "rpc/call_recorder.h"
#include "tests/integration/tierctl_test_util.h"
#include "tests/support/master_harness.h"
#include "tests/support/run_command.h"

namespace mooncake_tier::testing::tierctl {

constexpr uint64_t kObj = 4096;

class TierctlAdminTest : public ::testing::Test {
 protected:
  static MasterConfig Config() {
    MasterConfig c = MasterHarness::DefaultConfig();
    c.promotion.proactive_low_watermark = 0;
    // Every put queues an offload, so `offloads list` has tasks.
    c.offload_mode = OffloadMode::kWriteThrough;
    return c;
  }

  explicit TierctlAdminTest(MasterConfig config = Config())
      : h_(std::move(config)),
        facade_(&h_.master(), &h_.clock()),
        requests_(admin::AdminServer::RouteNames()),
        metrics_(&h_.master(), &h_.clock(), nullptr, &requests_) {}

  void SetUp() override {
    admin::AdminServerOptions options;
    options.port = 0;
    options.token = kToken;
    auto server = admin::AdminServer::Start(
        options, &facade_, [this] { return metrics::RenderText({&metrics_}); },
        &requests_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    endpoint_ = "http://127.0.0.1:" + std::to_string(server_->port());
  }

  // tierctl --endpoint <this server> <args...>, no token.
  CommandResult Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), {"--endpoint", endpoint_});
    return Tierctl({}, args);
  }
  // The same with --token.
  CommandResult Admin(std::vector<std::string> args) {
    args.insert(args.begin(), {"--token", kToken});
    return Ctl(std::move(args));
  }

  // Two complete groups of two members and one filling group.
  void LoadGroups() {
    for (const char* group : {"blk/1", "blk/2"}) {
      for (uint32_t i = 0; i < 2; ++i) {
        PutOptions options;
        options.group = GroupSpec{group, 2, i};
        ASSERT_TRUE(
            h_.Put(std::string(group) + "/" + std::to_string(i), kObj, options)
                .ok());
      }
    }
    PutOptions lone;
    lone.group = GroupSpec{"blk/3", 2, 0};
    ASSERT_TRUE(h_.Put("blk/3/0", kObj, lone).ok());
  }

  MasterHarness h_;
  admin::MasterAdminFacade facade_;
  rpc::CallRecorder requests_;
  metrics::MasterMetrics metrics_;
  std::unique_ptr<admin::AdminServer> server_;
  std::string endpoint_;
};

}  // namespace mooncake_tier::testing::tierctl
