#include "daemon/daemon_options.h"

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace mooncake_tier::daemon {
namespace daemon_options_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

CommandLine Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "mooncake-tierd");
  return ParseCommandLine(args);
}

// Runs the registration on a fresh app, as the binary does, and returns
// the options (parse errors fail the test).
DaemonOptions Registered(std::vector<std::string> args) {
  CLI::App app("test", "mooncake-tierd");
  DaemonOptions options;
  RegisterDaemonOptions(&app, &options);
  std::vector<const char*> argv = {"mooncake-tierd"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    ADD_FAILURE() << e.what();
  }
  return options;
}

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

TEST(DaemonOptionsTest, StandaloneDefaults) {
  const DaemonOptions o = Registered({"standalone"});
  EXPECT_EQ(o.mode, DaemonMode::kStandalone);
  EXPECT_EQ(o.master.listen, "127.0.0.1:50051");
  EXPECT_EQ(o.master.config.offload_mode, OffloadMode::kOnEvict);
  EXPECT_TRUE(o.master.config.promotion.on_hit);
  EXPECT_EQ(o.node.node.dram_bytes, uint64_t{1} << 30);
  EXPECT_EQ(o.node.ssd_capacity, uint64_t{8} << 30);
  EXPECT_EQ(o.node.ssd_dir, "/var/tmp/mooncake-tier");
  EXPECT_EQ(o.node.node.name, HostName());
  EXPECT_EQ(o.log_level, "info");
  EXPECT_TRUE(o.ready_file.empty());
  // The node shares the master's fate: no DRAM directory unless asked for.
  EXPECT_FALSE(o.node.node.dram_directory);
  EXPECT_TRUE(
      Registered({"standalone", "--dram-directory"}).node.node.dram_directory);
  EXPECT_TRUE(Registered({"node"}).node.node.dram_directory);
  EXPECT_TRUE(o.node.node.populate_dram);
  EXPECT_FALSE(
      Registered({"node", "--no-dram-populate"}).node.node.populate_dram);
  EXPECT_FALSE(
      Registered({"node", "--no-dram-directory"}).node.node.dram_directory);
  // Everything else keeps the engine's defaults.
  MasterConfig engine;
  EXPECT_EQ(o.master.config.node_ttl, engine.node_ttl);
  EXPECT_EQ(o.master.config.eviction_high_watermark,
            engine.eviction_high_watermark);
}

TEST(DaemonOptionsTest, FlagsNamedForHeartbeatsStillWork) {
  // Heartbeats no longer carry tasks (nodes pull them); command lines and
  // config files written for the old names keep working.
  const DaemonOptions o =
      Registered({"master", "--offload-max-per-heartbeat", "7",
                  "--promotion-max-per-heartbeat", "9"});
  EXPECT_EQ(o.master.config.offload_max_per_pull, 7u);
  EXPECT_EQ(o.master.config.promotion.max_per_pull, 9u);
}

TEST(DaemonOptionsTest, MasterFlagsMapToTheConfig) {
  const DaemonOptions o = Registered({"master",
                                      "--listen",
                                      "0.0.0.0:6000",
                                      "--offload-mode",
                                      "write_through",
                                      "--eviction-high-watermark",
                                      "0.8",
                                      "--eviction-ratio",
                                      "0.1",
                                      "--ssd-high-watermark",
                                      "0.7",
                                      "--ssd-eviction-ratio",
                                      "0.2",
                                      "--ssd-eviction-policy",
                                      "lru",
                                      "--lease-ttl",
                                      "5s",
                                      "--put-timeout",
                                      "1m",
                                      "--node-ttl",
                                      "3s",
                                      "--grant-window",
                                      "1s",
                                      "--late-write-margin",
                                      "100ms",
                                      "--writeback-watermark",
                                      "0.6",
                                      "--put-wait-timeout",
                                      "2s",
                                      "--offload-max-per-pull",
                                      "4",
                                      "--offload-queue-limit",
                                      "10",
                                      "--offload-task-timeout",
                                      "20s",
                                      "--group-visibility",
                                      "best_effort",
                                      "--group-remove-policy",
                                      "member",
                                      "--group-fill-timeout",
                                      "2m",
                                      "--group-broken-ttl",
                                      "90s",
                                      "--group-filling-max-ratio",
                                      "0.25",
                                      "--max-group-size",
                                      "16",
                                      "--no-promotion-on-hit",
                                      "--promotion-policy",
                                      "tinylfu",
                                      "--promotion-admission-threshold",
                                      "3",
                                      "--promotion-queue-limit",
                                      "100",
                                      "--promotion-max-per-pull",
                                      "8",
                                      "--promotion-task-timeout",
                                      "45s",
                                      "--promotion-drop-source",
                                      "--promotion-proactive-low-watermark",
                                      "0",
                                      "--tick-interval",
                                      "50ms",
                                      "--shutdown-grace",
                                      "250ms",
                                      "--log-level",
                                      "debug",
                                      "--ready-file",
                                      "/tmp/r"});
  EXPECT_EQ(o.mode, DaemonMode::kMaster);
  const MasterConfig& c = o.master.config;
  EXPECT_EQ(o.master.listen, "0.0.0.0:6000");
  EXPECT_EQ(c.offload_mode, OffloadMode::kWriteThrough);
  EXPECT_DOUBLE_EQ(c.eviction_high_watermark, 0.8);
  EXPECT_DOUBLE_EQ(c.eviction_ratio, 0.1);
  EXPECT_DOUBLE_EQ(c.ssd_high_watermark, 0.7);
  EXPECT_DOUBLE_EQ(c.ssd_eviction_ratio, 0.2);
  EXPECT_EQ(c.ssd_eviction_policy, EvictionPolicyKind::kLru);
  EXPECT_EQ(c.lease_ttl, seconds(5));
  EXPECT_EQ(c.put_timeout, seconds(60));
  EXPECT_EQ(c.node_ttl, seconds(3));
  EXPECT_EQ(c.grant_window, seconds(1));
  EXPECT_EQ(c.late_write_margin, milliseconds(100));
  EXPECT_DOUBLE_EQ(c.writeback_watermark, 0.6);
  EXPECT_EQ(c.put_wait_timeout, seconds(2));
  EXPECT_EQ(c.offload_max_per_pull, 4u);
  EXPECT_EQ(c.offload_queue_limit, 10u);
  EXPECT_EQ(c.offload_task_timeout, seconds(20));
  EXPECT_EQ(c.group_visibility, GroupVisibility::kBestEffort);
  EXPECT_EQ(c.group_remove_policy, GroupRemovePolicy::kMember);
  EXPECT_EQ(c.group_fill_timeout, seconds(120));
  EXPECT_EQ(c.group_broken_ttl, seconds(90));
  EXPECT_DOUBLE_EQ(c.group_filling_max_ratio, 0.25);
  EXPECT_EQ(c.max_group_size, 16u);
  EXPECT_FALSE(c.promotion.on_hit);
  EXPECT_EQ(c.promotion.policy, PromotionPolicy::kTinyLfu);
  EXPECT_EQ(c.promotion.admission_threshold, 3u);
  EXPECT_EQ(c.promotion.queue_limit, 100u);
  EXPECT_EQ(c.promotion.max_per_pull, 8u);
  EXPECT_EQ(c.promotion.task_timeout, seconds(45));
  EXPECT_TRUE(c.promotion.drop_source);
  EXPECT_DOUBLE_EQ(c.promotion.proactive_low_watermark, 0.0);
  EXPECT_EQ(o.master.tick_interval, milliseconds(50));
  EXPECT_EQ(o.master.shutdown_grace, milliseconds(250));
  EXPECT_EQ(o.log_level, "debug");
  EXPECT_EQ(o.ready_file, "/tmp/r");
}

TEST(DaemonOptionsTest, NodeFlagsMapToTheNodeOptions) {
  const DaemonOptions o = Registered({"node",
                                      "--master",
                                      "10.0.0.1:7000",
                                      "--name",
                                      "n1",
                                      "--dram",
                                      "4GiB",
                                      "--huge-pages",
                                      "--ssd-dir",
                                      "/data/ssd",
                                      "--ssd-capacity",
                                      "512MiB",
                                      "--no-direct-io",
                                      "--heartbeat-interval",
                                      "200ms",
                                      "--io-batch",
                                      "4",
                                      "--max-pending-tasks",
                                      "10",
                                      "--ucx-transports",
                                      "tcp",
                                      "--ucx-timeout",
                                      "2s",
                                      "--ssd-read-threads",
                                      "3",
                                      "--ssd-read-staging",
                                      "16MiB",
                                      "--rpc-deadline",
                                      "1s",
                                      "--no-shared-memory"});
  EXPECT_EQ(o.mode, DaemonMode::kNode);
  EXPECT_FALSE(o.node.shared_memory);
  EXPECT_TRUE(Registered({"node"}).node.shared_memory);
  const NodeProcessOptions& n = o.node;
  EXPECT_EQ(n.master_address, "10.0.0.1:7000");
  EXPECT_EQ(n.node.name, "n1");
  EXPECT_EQ(n.node.dram_bytes, uint64_t{4} << 30);
  EXPECT_TRUE(n.node.huge_pages);
  EXPECT_EQ(n.ssd_dir, "/data/ssd");
  EXPECT_EQ(n.ssd_capacity, uint64_t{512} << 20);
  EXPECT_FALSE(n.direct_io);  // on by default
  EXPECT_TRUE(Registered({"node"}).node.direct_io);
  EXPECT_EQ(n.node.heartbeat_interval, milliseconds(200));
  EXPECT_EQ(n.node.io_batch, 4u);
  EXPECT_EQ(n.node.max_pending_tasks, 10u);
  EXPECT_EQ(n.ucx_transports, "tcp");
  EXPECT_EQ(n.ucx_timeout, milliseconds(2000));
  EXPECT_EQ(n.ssd_read_threads, 3);
  EXPECT_EQ(n.node.ssd_read_staging_bytes, uint64_t{16} << 20);
  EXPECT_EQ(Registered({"node"}).node.node.ssd_read_staging_bytes,
            uint64_t{64} << 20);
  EXPECT_EQ(Registered({"node", "--ssd-read-staging", "0"})
                .node.node.ssd_read_staging_bytes,
            0u);
  EXPECT_EQ(n.rpc_deadline, seconds(1));
}

TEST(DaemonOptionsTest, FlagsBelongToTheirSubcommands) {
  EXPECT_EQ(Parse({"node", "--listen", "127.0.0.1:1"}).exit_code, 2);
  EXPECT_EQ(Parse({"standalone", "--master", "127.0.0.1:1"}).exit_code, 2);
  EXPECT_EQ(Parse({"master", "--dram", "1GiB"}).exit_code, 2);
  EXPECT_EQ(Parse({}).exit_code, 2);
  EXPECT_EQ(Parse({"master", "node"}).exit_code, 2);
}

TEST(DaemonOptionsTest, ConfigFileFillsWhatFlagsDoNotSet) {
  testing::TempDir dir;
  const std::string file = dir.path() + "/tierd.toml";
  std::ofstream(file) << "# common to every subcommand\n"
                         "log-level = \"warn\"\n"
                         "dram = \"2GiB\"\n"
                         "ssd-capacity = 1GiB\n"
                         "[node]\n"
                         "master = \"10.1.1.1:50051\"\n"
                         "direct-io = false\n"
                         "heartbeat-interval = \"500ms\"\n"
                         "[master]\n"
                         "node-ttl = \"99s\"\n";
  const CommandLine parsed =
      Parse({"node", "--config", file, "--ssd-capacity", "3GiB"});
  ASSERT_TRUE(parsed.options) << parsed.output;
  const DaemonOptions& o = *parsed.options;
  EXPECT_EQ(o.log_level, "warn");
  EXPECT_EQ(o.node.node.dram_bytes, uint64_t{2} << 30);
  EXPECT_EQ(o.node.ssd_capacity, uint64_t{3} << 30);  // the flag wins
  EXPECT_EQ(o.node.master_address, "10.1.1.1:50051");
  EXPECT_FALSE(o.node.direct_io);
  EXPECT_EQ(o.node.node.heartbeat_interval, milliseconds(500));
  EXPECT_EQ(o.master.config.node_ttl, seconds(10));  // [master] skipped

  // For the master, top-level lines apply and the [node] section is skipped.
  std::ofstream(file) << "node-ttl = \"99s\"\n[node]\ndram = 1GiB\n";
  const CommandLine master = Parse({"--config", file, "master"});
  ASSERT_TRUE(master.options) << master.output;
  EXPECT_EQ(master.options->master.config.node_ttl, seconds(99));

  // A standalone's directory is off by default, on from a config file.
  std::ofstream(file) << "dram-directory = true\n";
  const CommandLine standalone = Parse({"--config", file, "standalone"});
  ASSERT_TRUE(standalone.options) << standalone.output;
  EXPECT_TRUE(standalone.options->node.node.dram_directory);
}

TEST(DaemonOptionsTest, ConfigFileErrorsAreUsageErrors) {
  testing::TempDir dir;
  const std::string file = dir.path() + "/bad.ini";
  std::ofstream(file) << "; INI comment\nno-such-option = 1\n";
  CommandLine parsed = Parse({"master", "--config", file});
  EXPECT_EQ(parsed.exit_code, 2);
  EXPECT_THAT(parsed.output, HasSubstr("no-such-option"));

  std::ofstream(file) << "dram = \"lots\"\n";
  parsed = Parse({"node", "--config", file});
  EXPECT_EQ(parsed.exit_code, 2);
  EXPECT_THAT(parsed.output, HasSubstr("--dram"));

  parsed = Parse({"node", "--config", dir.path() + "/missing.toml"});
  EXPECT_EQ(parsed.exit_code, 2);
  EXPECT_THAT(parsed.output, HasSubstr("missing.toml"));
}

TEST(DaemonOptionsTest, BadValuesAreOneLineUsageErrorsNamingTheFlag) {
  const std::vector<std::vector<std::string>> cases = {
      {"node", "--dram", "lots"},
      {"node", "--dram", "0"},
      {"node", "--ssd-capacity", "-1"},
      {"node", "--io-batch", "0"},
      {"node", "--heartbeat-interval", "1"},
      {"node", "--name", ""},
      {"master", "--node-ttl", "0s"},
      {"master", "--offload-mode", "x"},
      {"master", "--eviction-ratio", "x"},
      {"master", "--log-level", "loud"},
      {"standalone", "--promotion-policy", "lru"}};
  for (const std::vector<std::string>& args : cases) {
    const CommandLine parsed = Parse(args);
    EXPECT_EQ(parsed.exit_code, 2) << args[1];
    EXPECT_FALSE(parsed.options) << args[1];
    EXPECT_THAT(parsed.output, HasSubstr(args[1]));
    EXPECT_EQ(parsed.output.find('\n'), std::string::npos) << parsed.output;
  }
}

TEST(DaemonOptionsTest, InvalidMasterConfigIsRefusedByItsOwnValidation) {
  CommandLine parsed = Parse({"master", "--eviction-ratio", "0.95",
                              "--eviction-high-watermark", "0.9"});
  EXPECT_EQ(parsed.exit_code, 2);
  EXPECT_THAT(parsed.output, HasSubstr("--eviction-ratio"));
  EXPECT_THAT(parsed.output, HasSubstr("eviction_ratio"));  // core's words
  parsed = Parse({"standalone", "--promotion-admission-threshold", "0"});
  EXPECT_EQ(parsed.exit_code, 2);
  EXPECT_THAT(parsed.output, HasSubstr("--promotion-admission-threshold"));
  // A node has no master configuration to check.
  EXPECT_TRUE(Parse({"node"}).options);
}

TEST(DaemonOptionsTest, AdminDefaultsDependOnTheRole) {
  EXPECT_EQ(Registered({"master"}).admin().listen, "127.0.0.1:9003");
  EXPECT_EQ(Registered({"standalone"}).admin().listen, "127.0.0.1:9003");
  EXPECT_EQ(Registered({"node"}).admin().listen, "127.0.0.1:9300");
  EXPECT_TRUE(Registered({"master"}).admin().token.empty());
}

TEST(DaemonOptionsTest, AdminFlagsMapToTheRoleRunning) {
  DaemonOptions o = Registered(
      {"master", "--admin-listen", "127.0.0.1:0", "--admin-token", "t"});
  EXPECT_EQ(o.master_admin.listen, "127.0.0.1:0");
  EXPECT_EQ(o.master_admin.token, "t");
  o = Registered({"node", "--admin-listen", "[::1]:9400"});
  EXPECT_EQ(o.node_admin.listen, "[::1]:9400");
  EXPECT_EQ(o.master_admin.listen, "127.0.0.1:9003");  // untouched
  // An empty address disables the server.
  const CommandLine off = Parse({"standalone", "--admin-listen", ""});
  ASSERT_TRUE(off.options) << off.output;
  EXPECT_TRUE(off.options->admin().listen.empty());
}

TEST(DaemonOptionsTest, AdminTokenFileIsReadAndTrimmed) {
  testing::TempDir dir;
  const std::string file = dir.path() + "/token";
  std::ofstream(file) << "# the admin token\n\n  abc def \t\n";
  const CommandLine parsed = Parse({"master", "--admin-token-file", file});
  ASSERT_TRUE(parsed.options) << parsed.output;
  EXPECT_EQ(parsed.options->admin().token, "abc def");
  // With a token, a non-loopback address is allowed.
  const CommandLine wide = Parse(
      {"node", "--admin-listen", "0.0.0.0:9300", "--admin-token-file", file});
  ASSERT_TRUE(wide.options) << wide.output;
  EXPECT_EQ(wide.options->admin().token, "abc def");
  EXPECT_TRUE(Parse({"master", "--admin-listen", "localhost:0"}).options);
}

TEST(DaemonOptionsTest, AnUnauthenticatedPlaneStaysOnLoopbackUnlessInsecure) {
  testing::TempDir dir;
  const std::string tokens = dir.path() + "/tokens";
  std::ofstream(tokens) << "# nodes\n" << std::string(40, 'n') << "\n";
  const CommandLine open = Parse({"master", "--listen", "0.0.0.0:6000"});
  EXPECT_FALSE(open.options);
  EXPECT_EQ(open.exit_code, 2);
  EXPECT_NE(open.output.find("--insecure"), std::string::npos) << open.output;
  EXPECT_FALSE(Parse({"standalone", "--listen", "10.1.2.3:0"}).options);
  EXPECT_TRUE(
      Parse({"master", "--listen", "0.0.0.0:6000", "--insecure"}).options);
  EXPECT_TRUE(
      Parse({"master", "--listen", "0.0.0.0:6000", "--node-token-file", tokens})
          .options);
  EXPECT_TRUE(Parse({"master", "--listen", "127.0.0.1:6000"}).options);
  // A node presents the first token of its file; a standalone's node the
  // first of the master's node tokens.
  const CommandLine node = Parse({"node", "--node-token-file", tokens});
  ASSERT_TRUE(node.options) << node.output;
  EXPECT_EQ(node.options->node.token, std::string(40, 'n'));
  const CommandLine standalone =
      Parse({"standalone", "--node-token-file", tokens});
  ASSERT_TRUE(standalone.options) << standalone.output;
  EXPECT_EQ(standalone.options->node.token, std::string(40, 'n'));
  const CommandLine missing =
      Parse({"node", "--node-token-file", dir.path() + "/none"});
  EXPECT_FALSE(missing.options);
  EXPECT_NE(missing.output.find("cannot read the token file"),
            std::string::npos)
      << missing.output;
}

TEST(DaemonOptionsTest, RequiredClientCertificatesAuthenticateThePlane) {
  // Files are checked when the master starts, not here: names suffice.
  const std::vector<std::string> tls = {"--tls-cert", "m.pem",    "--tls-key",
                                        "m.key",      "--tls-ca", "ca.pem"};
  auto master = [&tls](std::vector<std::string> more) {
    std::vector<std::string> args = {"master", "--listen", "0.0.0.0:6000"};
    args.insert(args.end(), tls.begin(), tls.end());
    args.insert(args.end(), more.begin(), more.end());
    return Parse(args);
  };
  const CommandLine required = master({});
  ASSERT_TRUE(required.options) << required.output;
  EXPECT_EQ(required.options->master.tls.cert, "m.pem");
  EXPECT_EQ(required.options->master.tls_client_auth,
            rpc::TlsClientAuth::kRequire);
  // Encrypted but open to anyone: still needs tokens or --insecure.
  const CommandLine open = master({"--tls-client-auth", "none"});
  EXPECT_FALSE(open.options);
  EXPECT_NE(open.output.find("--insecure"), std::string::npos) << open.output;
  EXPECT_FALSE(master({"--tls-client-auth", "optional"}).options);
  EXPECT_TRUE(master({"--tls-client-auth", "none", "--insecure"}).options);
  const CommandLine bad = master({"--tls-client-auth", "maybe"});
  EXPECT_FALSE(bad.options);
  EXPECT_NE(bad.output.find("--tls-client-auth"), std::string::npos)
      << bad.output;
  // A standalone's node dials with the master's certificate; a node with
  // its own flags.
  std::vector<std::string> args = {"standalone", "--tls-server-name", "h"};
  args.insert(args.end(), tls.begin(), tls.end());
  const CommandLine standalone = Parse(args);
  ASSERT_TRUE(standalone.options) << standalone.output;
  EXPECT_EQ(standalone.options->node.tls.cert, "m.pem");
  EXPECT_EQ(standalone.options->node.tls.ca, "ca.pem");
  EXPECT_EQ(standalone.options->node.tls_server_name, "h");
  const CommandLine node =
      Parse({"node", "--tls-ca", "ca.pem", "--tls-cert", "n.pem", "--tls-key",
             "n.key", "--tls-server-name", "master.example"});
  ASSERT_TRUE(node.options) << node.output;
  EXPECT_EQ(node.options->node.tls.key, "n.key");
  EXPECT_EQ(node.options->node.tls_server_name, "master.example");
}

TEST(DaemonOptionsTest, BadAdminValuesAreUsageErrors) {
  testing::TempDir dir;
  const std::string empty = dir.path() + "/empty";
  std::ofstream(empty) << "  \n";
  const std::string two = dir.path() + "/two";
  std::ofstream(two) << "first-token\nsecond-token\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"master", "--admin-listen", "9003"}, "--admin-listen"},
      {{"master", "--admin-listen", "host:port"}, "0 to 65535"},
      {{"master", "--admin-listen", "::1:9003"}, "brackets"},
      {{"node", "--admin-listen", "127.0.0.1:"}, "0 to 65535"},
      {{"master", "--admin-listen", "10.1.2.3:9003"}, "not a loopback"},
      {{"standalone", "--admin-listen", "0.0.0.0:9003"}, "--admin-token"},
      {{"master", "--admin-token", "a", "--admin-token-file", empty},
       "excludes"},
      {{"master", "--admin-token-file", empty}, "holds no token"},
      {{"master", "--admin-token-file", two}, "holds 2 tokens"},
      {{"node", "--admin-token-file", dir.path() + "/none"}, "cannot read"}};
  for (const auto& [args, message] : cases) {
    const CommandLine parsed = Parse(args);
    EXPECT_EQ(parsed.exit_code, 2) << args[2];
    EXPECT_FALSE(parsed.options) << args[2];
    EXPECT_THAT(parsed.output, HasSubstr(message)) << args[2];
    EXPECT_EQ(parsed.output.find('\n'), std::string::npos) << parsed.output;
  }
}

TEST(DaemonOptionsTest, SplitHostPortReadsV4V6AndNames) {
  Result<HostPort> v4 = SplitHostPort("127.0.0.1:9003");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9003);
  Result<HostPort> v6 = SplitHostPort("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  EXPECT_EQ(JoinHostPort("::1", 80), "[::1]:80");
  EXPECT_EQ(JoinHostPort("localhost", 80), "localhost:80");
  EXPECT_FALSE(SplitHostPort("[::1]").ok());
  EXPECT_FALSE(SplitHostPort("h:-1").ok());
  EXPECT_FALSE(SplitHostPort("h:1x").ok());
}

TEST(DaemonOptionsTest, HelpDocumentsEveryOptionWithItsDefault) {
  CLI::App app("test", "mooncake-tierd");
  DaemonOptions options;
  RegisterDaemonOptions(&app, &options);
  for (const char* mode : {"master", "node", "standalone"}) {
    const CLI::App* sub = app.get_subcommand(mode);
    const CommandLine help = Parse({mode, "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_FALSE(help.options);
    size_t documented = 0;
    for (const CLI::Option* option : sub->get_options()) {
      const std::string name = option->get_name();
      if (name == "--help") continue;
      ++documented;
      EXPECT_THAT(help.output, HasSubstr(name)) << mode;
      const std::string& default_text = option->get_default_str();
      if (default_text.empty()) {
        EXPECT_THAT(option->get_description(), HasSubstr("Default:"))
            << mode << " " << name;
      } else {
        EXPECT_THAT(help.output, HasSubstr("=" + default_text))
            << mode << " " << name;
      }
    }
    EXPECT_GT(documented, 10u) << mode;
  }
  const CommandLine top = Parse({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  for (const char* mode : {"master", "node", "standalone"}) {
    EXPECT_THAT(top.output, HasSubstr(mode));
  }
}

}  // namespace
}  // namespace daemon_options_test
}  // namespace mooncake_tier::daemon
