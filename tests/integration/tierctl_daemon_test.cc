// mooncake-tierctl against the real daemon of this tree: a standalone
// mooncake-tierd with its admin API on a free port, filled through
// `kv put`, driven by every admin command (table, JSON, exit code).

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/integration/tierctl_test_util.h"
#include "tests/support/eventually.h"
#include "tests/support/run_command.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_ca.h"
#include "tests/support/tierd_process.h"

namespace mooncake_tier::testing {
namespace tierctl_daemon_test {
namespace {

using namespace tierctl;  // NOLINT(build/namespaces): test helpers

#ifdef MT_TIERD_PATH
// Runs `mooncake-tierd standalone` with its admin API on a free port, puts
// data with `kv put`, and drives every admin command against it.
TEST(TierctlDaemonTest, EveryCommandAgainstARealDaemon) {
  Result<CommandResult> help =
      RunCommand({MT_TIERD_PATH, "standalone", "--help"});
  ASSERT_TRUE(help.ok()) << help.status().ToString();
  ASSERT_TRUE(Contains(help->out, "--admin-listen"))
      << "mooncake-tierd standalone lost --admin-listen:\n"
      << help->out;
  TempDir dir;
  const std::string ready = dir.path() + "/ready";
  SubprocessOptions options;
  options.binary = MT_TIERD_PATH;
  options.args = {"standalone",     "--listen",          "127.0.0.1:0",
                  "--admin-listen", "127.0.0.1:0",       "--admin-token",
                  kToken,           "--ready-file",      ready,
                  "--ssd-dir",      dir.path() + "/ssd", "--dram",
                  "16MiB"};
  options.output_dir = dir.path();
  Result<std::unique_ptr<Subprocess>> daemon = Subprocess::Start(options);
  ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
  ASSERT_TRUE(WaitForFile(ready, std::chrono::seconds(30)))
      << (*daemon)->OutputTail();
  std::map<std::string, std::string> fields = ReadyFields(ready);
  ASSERT_TRUE(fields.count("admin_address") && fields.count("master_address"))
      << ReadFileOrEmpty(ready);
  const std::string endpoint = "http://" + fields["admin_address"];
  const std::string master = fields["master_address"];

  // Data through the data path: one ungrouped object, a complete group of
  // two and a group still filling.
  auto kv_put = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"kv", "put"});
    args.insert(args.end(), {"--master", master});
    const CommandResult put = Tierctl({}, args);
    EXPECT_EQ(put.exit_code, kOk) << put.err;
  };
  kv_put({"plain/one", "--value", "hello"});
  kv_put({"plain/two", "--value", "bye"});
  kv_put({"blk/a/0", "--size", "4096", "--group", "blk/a", "--group-size", "2",
          "--group-index", "0"});
  kv_put({"blk/a/1", "--size", "4096", "--group", "blk/a", "--group-size", "2",
          "--group-index", "1"});
  kv_put({"blk/b/0", "--size", "4096", "--group", "blk/b", "--group-size", "2",
          "--group-index", "0"});

  // Every command, in table form and as JSON, with its exit code.
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    const char* table_text;  // expected in the table output
  };
  const std::vector<Case> cases = {
      {{"status"}, kOk, "memory"},
      {{"nodes", "list"}, kOk, "alive"},
      {{"objects", "get", "plain/one"}, kOk, "plain/one"},
      {{"objects", "get", "nope"}, kNotFound, ""},
      {{"groups", "list"}, kOk, "blk/a"},
      {{"groups", "list", "--state", "filling"}, kOk, "blk/b"},
      {{"groups", "get", "blk/a"}, kOk, "complete"},
      {{"groups", "get", "nope"}, kNotFound, ""},
      {{"promotions", "list"}, kOk, ""},
      {{"offloads", "list"}, kOk, ""},
      {{"config", "get"}, kOk, "eviction_high_watermark"},
      {{"metrics", "--match", "mooncake_groups"}, kOk, "mooncake_groups"},
      // In DRAM already: nothing to promote (409).
      {{"objects", "promote", "plain/one"}, kError, ""},
      {{"groups", "promote", "blk/a"}, kError, ""},
      // A filling group cannot leave DRAM (409).
      {{"groups", "evict", "blk/b"}, kError, ""},
      {{"objects", "evict", "plain/one"}, kOk, "plain/one"},
      {{"groups", "evict", "blk/a"}, kOk, "blk/a"},
      {{"config", "set", "promotion.admission_threshold=5"}, kOk, "5"},
      {{"groups", "rm", "blk/b"}, kOk, ""},
      {{"objects", "rm", "plain/two"}, kOk, ""},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--endpoint", endpoint, "--token", kToken};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const std::string what = ::testing::PrintToString(c.args);
    // Mutating commands run once (in table form); reads run in both forms.
    const bool mutating = c.args[0] == "config"
                              ? c.args[1] == "set"
                              : (c.args.size() > 1 &&
                                 (c.args[1] == "promote" ||
                                  c.args[1] == "evict" || c.args[1] == "rm"));
    const CommandResult table = Tierctl({}, args);
    EXPECT_EQ(table.exit_code, c.exit_code) << what << table.out << table.err;
    EXPECT_TRUE(Contains(table.out, c.table_text)) << what << table.out;
    if (mutating) continue;
    args.push_back("-o");
    args.push_back("json");
    const CommandResult as_json = Tierctl({}, args);
    EXPECT_EQ(as_json.exit_code, c.exit_code) << what << as_json.err;
    if (c.args[0] != "metrics" && c.exit_code == kOk) Json(as_json);
  }
  EXPECT_EQ(
      Tierctl({}, {"--endpoint", endpoint, "groups", "get", "blk/b"}).exit_code,
      kNotFound);
  CommandResult no_token =
      Tierctl({}, {"--endpoint", endpoint, "objects", "rm", "blk/a/0"});
  EXPECT_EQ(no_token.exit_code, kError);
  EXPECT_TRUE(Contains(no_token.err, "MOONCAKE_TIER_TOKEN")) << no_token.err;
  EXPECT_EQ(Tierctl({}, {"--endpoint", endpoint, "nodes", "bogus"}).exit_code,
            kUsage);
  CommandResult top = Tierctl({}, {"--endpoint", endpoint, "top",
                                   "--iterations", "2", "--interval", "50ms"});
  EXPECT_EQ(top.exit_code, kOk) << top.err;
  (*daemon)->Signal(SIGTERM);
  EXPECT_TRUE((*daemon)->Wait(std::chrono::seconds(20)).has_value());
}
// The same daemon with every plane over TLS: gRPC with client certificates
// required, the admin port over HTTPS; tierctl's kv commands dial with a
// client certificate and its admin commands trust the CA.
TEST(TierctlDaemonTest, EveryPlaneOverTls) {
  TempDir dir;
  Result<TestCa> ca = TestCa::Make(dir.path() + "/pki");
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  const std::string ready = dir.path() + "/ready";
  SubprocessOptions options;
  options.binary = MT_TIERD_PATH;
  options.args = {"standalone",
                  "--listen",
                  "127.0.0.1:0",
                  "--admin-listen",
                  "127.0.0.1:0",
                  "--admin-token",
                  kToken,
                  "--ready-file",
                  ready,
                  "--ssd-dir",
                  dir.path() + "/ssd",
                  "--dram",
                  "16MiB",
                  "--tls-cert",
                  ca->cert("master"),
                  "--tls-key",
                  ca->key("master"),
                  "--tls-ca",
                  ca->ca(),
                  "--admin-tls-cert",
                  ca->cert("master"),
                  "--admin-tls-key",
                  ca->key("master")};
  options.output_dir = dir.path();
  Result<std::unique_ptr<Subprocess>> daemon = Subprocess::Start(options);
  ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
  ASSERT_TRUE(WaitForFile(ready, std::chrono::seconds(30)))
      << (*daemon)->OutputTail();
  std::map<std::string, std::string> fields = ReadyFields(ready);
  const std::string master = fields["master_address"];
  const std::string endpoint = "https://" + fields["admin_address"];

  const std::vector<std::string> client = {
      "--master",         master,      "--tls-ca",       ca->ca(), "--tls-cert",
      ca->cert("client"), "--tls-key", ca->key("client")};
  auto kv = [&](std::vector<std::string> args,
                const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), "kv");
    return Tierctl(env, args);
  };
  std::vector<std::string> put = {"put", "tls/one", "--value", "hello"};
  put.insert(put.end(), client.begin(), client.end());
  EXPECT_EQ(kv(put).exit_code, kOk) << kv(put).err;
  // The files from the environment.
  const CommandResult get = kv({"get", "tls/one", "--master", master},
                               {"MOONCAKE_TIER_TLS_CA=" + ca->ca(),
                                "MOONCAKE_TIER_TLS_CERT=" + ca->cert("client"),
                                "MOONCAKE_TIER_TLS_KEY=" + ca->key("client")});
  EXPECT_EQ(get.exit_code, kOk) << get.err;
  EXPECT_EQ(get.out, "hello");
  // No certificate: refused; plaintext: no connection.
  EXPECT_NE(kv({"get", "tls/one", "--master", master, "--timeout", "2000",
                "--tls-ca", ca->ca()})
                .exit_code,
            kOk);
  EXPECT_NE(
      kv({"get", "tls/one", "--master", master, "--timeout", "2000"}).exit_code,
      kOk);

  // The admin port: HTTPS with the CA; without it, a hint names --tls-ca.
  const CommandResult status =
      Tierctl({}, {"--endpoint", endpoint, "--tls-ca", ca->ca(), "status"});
  EXPECT_EQ(status.exit_code, kOk) << status.err;
  const CommandResult untrusted =
      Tierctl({}, {"--endpoint", endpoint, "status"});
  EXPECT_NE(untrusted.exit_code, kOk);
  EXPECT_TRUE(Contains(untrusted.err, "--tls-ca")) << untrusted.err;
  const CommandResult plain = Tierctl(
      {}, {"--endpoint", "http://" + fields["admin_address"], "status"});
  EXPECT_NE(plain.exit_code, kOk);

  // Certificates in use are exported with their expiry.
  const CommandResult metrics = Tierctl(
      {"MOONCAKE_TIER_TLS_CA=" + ca->ca()},
      {"--endpoint", endpoint, "metrics", "--match", "tls_", "-o", "json"});
  EXPECT_EQ(metrics.exit_code, kOk) << metrics.err;
  EXPECT_TRUE(Contains(metrics.out,
                       "mooncake_tls_certificate_expiry_timestamp_seconds"))
      << metrics.out;
  EXPECT_TRUE(Contains(metrics.out, "grpc_client")) << metrics.out;

  // SIGHUP with a spoiled admin certificate keeps HTTPS serving.
  Result<TestCa> other = TestCa::Make(dir.path() + "/other");
  ASSERT_TRUE(other.ok());
  std::filesystem::copy_file(other->key("master"), ca->key("master"),
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_TRUE((*daemon)->Signal(SIGHUP));
  ASSERT_TRUE(Eventually(
      [&] { return Contains((*daemon)->OutputTail(), "not reloaded"); },
      std::chrono::seconds(10)))
      << (*daemon)->OutputTail();
  EXPECT_EQ(
      Tierctl({}, {"--endpoint", endpoint, "--tls-ca", ca->ca(), "status"})
          .exit_code,
      kOk);
  EXPECT_EQ(
      kv({"get", "tls/one", "--master", master, "--tls-ca", ca->ca(),
          "--tls-cert", ca->cert("client"), "--tls-key", ca->key("client")})
          .exit_code,
      kOk);
}
#endif  // MT_TIERD_PATH

}  // namespace
}  // namespace tierctl_daemon_test
}  // namespace mooncake_tier::testing
