// mooncake-tierctl's global surface, end to end: bad usage exits 2, help
// lists the command groups, the endpoint and token come from flags or the
// environment (flags win), an unreachable endpoint exits 1 at once naming
// the address, and a wrong one (not the admin API, or a storage node's
// admin port) is an error with a hint, never "not found".

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admin_server/admin_server.h"
#include "admin_server/node_admin_server.h"
#include "tests/integration/tierctl_admin_fixture.h"
#include "tests/integration/tierctl_test_util.h"
#include "tests/support/run_command.h"
#include "tests/support/subprocess.h"

namespace mooncake_tier::testing {
namespace tierctl_usage_test {
namespace {

using namespace tierctl;  // NOLINT(build/namespaces): test helpers

TEST_F(TierctlAdminTest, BadUsageExitsTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"objects", "get"},                      // no key
      {"objects"},                             // no subcommand
      {"objects", "frob", "k"},                // no such subcommand
      {"groups", "list", "--state", "bogus"},  // bad state
      {"groups", "list", "--limit", "0"},      // out of range
      {"nodes", "list", "--limit", "1001"},    // out of range
      {"config", "set"},                       // nothing to set
      {"config", "set", "novalue"},            // not KEY=VALUE
      {"metrics", "--match", "(unclosed"},     // bad regex
      {"top", "--interval", "0"},              // out of range
      {"top", "--iterations", "-1"},           // negative
      {"--timeout", "soon", "status"},         // not a duration
      {"--endpoint", "ftp://x:1", "status"},   // not an endpoint
      {"status", "-o", "yaml"},                // bad format
  };
  for (const std::vector<std::string>& args : bad) {
    CommandResult result = Ctl(args);
    EXPECT_EQ(result.exit_code, kUsage) << args[0] << ": " << result.err;
    EXPECT_TRUE(Contains(result.err, "USAGE")) << result.err;
  }
  CommandResult json_result = Ctl({"config", "set", "x", "-o", "json"});
  EXPECT_EQ(json_result.exit_code, kUsage);
  EXPECT_EQ(Json(json_result)["error"]["reason"], "USAGE");
}

TEST_F(TierctlAdminTest, UnreachableEndpointFailsFastNamingTheAddress) {
  const std::string address =
      "http://127.0.0.1:" + std::to_string(PickFreePort());
  const auto start = std::chrono::steady_clock::now();
  CommandResult result =
      Tierctl({}, {"--endpoint", address, "status", "-o", "json"},
              std::chrono::seconds(10));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(result.exit_code, kError);
  EXPECT_TRUE(Contains(result.err, address)) << result.err;
  EXPECT_TRUE(Contains(result.err, "is mooncake-tierd running")) << result.err;
  EXPECT_EQ(Json(result)["error"]["reason"], "UNAVAILABLE");

  // Something that answers, but is not the admin API: 404 of no route is
  // an error (1), not "not found" (3).
  CommandResult wrong_api =
      Tierctl({}, {"--endpoint", endpoint_ + "/not-the-api", "status"});
  EXPECT_EQ(wrong_api.exit_code, kError);
  EXPECT_TRUE(Contains(wrong_api.err, "ROUTE_NOT_FOUND")) << wrong_api.err;
  EXPECT_TRUE(Contains(wrong_api.err, "admin API")) << wrong_api.err;
}

// A storage node's admin port answers /api/ with 404 SERVED_BY_MASTER: an
// error (1) with a hint naming the master's admin address, never "not
// found" (3).
TEST(TierctlNodePortTest, AStorageNodesAdminPortIsAnErrorWithAHint) {
  admin::AdminServerOptions options;
  options.port = 0;
  auto node = admin::NodeAdminServer::Start(options, "n1", nullptr);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  const std::string endpoint =
      "http://127.0.0.1:" + std::to_string((*node)->port());
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"status"},
                                             {"objects", "get", "k"}}) {
    std::vector<std::string> args = {"--endpoint", endpoint};
    args.insert(args.end(), command.begin(), command.end());
    CommandResult result = Tierctl({}, args);
    EXPECT_EQ(result.exit_code, kError) << command[0] << ": " << result.err;
    EXPECT_TRUE(Contains(result.err, "SERVED_BY_MASTER")) << result.err;
    EXPECT_TRUE(Contains(result.err, "storage node's admin port"))
        << result.err;
    EXPECT_TRUE(Contains(result.err, "127.0.0.1:9003")) << result.err;
  }
  CommandResult json_result =
      Tierctl({}, {"--endpoint", endpoint, "status", "-o", "json"});
  EXPECT_EQ(json_result.exit_code, kError);
  EXPECT_EQ(Json(json_result)["error"]["reason"], "SERVED_BY_MASTER");
}

TEST_F(TierctlAdminTest, EnvironmentGivesEndpointAndTokenAndFlagsWin) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());
  ASSERT_TRUE(h_.Put("k2", kObj).ok());
  const std::string env_endpoint = "MOONCAKE_TIER_ENDPOINT=" + endpoint_;
  const std::string env_token = std::string("MOONCAKE_TIER_TOKEN=") + kToken;

  CommandResult status = Tierctl({env_endpoint}, {"status", "-o", "json"});
  ASSERT_EQ(status.exit_code, kOk) << status.err;
  EXPECT_EQ(Json(status)["objects"], 2);

  CommandResult removed =
      Tierctl({env_endpoint, env_token}, {"objects", "rm", "k"});
  EXPECT_EQ(removed.exit_code, kOk) << removed.err;
  EXPECT_FALSE(h_.Exists("k")->exists);

  // Flags win over the environment.
  CommandResult wrong_token = Tierctl(
      {env_endpoint, env_token}, {"--token", "nope", "objects", "rm", "k2"});
  EXPECT_EQ(wrong_token.exit_code, kError);
  EXPECT_TRUE(Contains(wrong_token.err, "refused the token"))
      << wrong_token.err;
  const std::string dead = "http://127.0.0.1:" + std::to_string(PickFreePort());
  CommandResult wrong_endpoint =
      Tierctl({env_endpoint}, {"--endpoint", dead, "status"});
  EXPECT_EQ(wrong_endpoint.exit_code, kError);
  EXPECT_TRUE(Contains(wrong_endpoint.err, dead)) << wrong_endpoint.err;
  EXPECT_TRUE(h_.Exists("k2")->exists);
}

TEST_F(TierctlAdminTest, HelpListsTheCommandGroups) {
  CommandResult help = Ctl({"--help"});
  EXPECT_EQ(help.exit_code, kOk);
  for (const char* group :
       {"status", "nodes", "objects", "groups", "promotions", "offloads",
        "config", "metrics", "top", "kv"}) {
    EXPECT_TRUE(Contains(help.out, std::string("  ") + group + " "))
        << group << "\n"
        << help.out;
  }
  EXPECT_TRUE(Contains(help.out, "--timeout")) << help.out;
  CommandResult set_help = Ctl({"config", "set", "--help"});
  EXPECT_EQ(set_help.exit_code, kOk);
  EXPECT_TRUE(Contains(set_help.out, "30s")) << set_help.out;
}

}  // namespace
}  // namespace tierctl_usage_test
}  // namespace mooncake_tier::testing
