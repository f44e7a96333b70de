// mooncake-tierd's admin HTTP servers end to end: the binary as
// subprocesses on free loopback ports, probed over HTTP. The master's (and
// standalone's) admin API and /metrics, a node's own admin port, readiness,
// tokens and the refusals at start.

#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/tierd_test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "metrics/metric_catalog.h"
#include "nlohmann/json.hpp"
#include "tests/support/prometheus_text.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace mooncake_tier {
namespace tierd_admin_test {
namespace {

using std::chrono::milliseconds;
using testing::ExitStatus;
using ::testing::HasSubstr;
using testing::PromText;
using testing::Subprocess;
using testing::TempDir;
using namespace daemon_test;  // NOLINT(build/namespaces): test helpers

struct Reply {
  int status = 0;  // 0: no answer
  std::string body;
  nlohmann::json Json() const {
    return nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  }
};

// One request to "host:port" with `body` (JSON); headers as name -> value.
Reply Send(const std::string& address, const std::string& method,
           const std::string& path, const std::string& body,
           const httplib::Headers& headers = httplib::Headers()) {
  const size_t colon = address.rfind(':');
  httplib::Client client(address.substr(0, colon),
                         std::stoi(address.substr(colon + 1)));
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::seconds(10));
  const char* type = "application/json";
  httplib::Result result = method == "GET"      ? client.Get(path, headers)
                           : method == "DELETE" ? client.Delete(path, headers)
                           : method == "PATCH"
                               ? client.Patch(path, headers, body, type)
                               : client.Post(path, headers, body, type);
  if (!result) return {};
  return {result->status, result->body};
}

Reply Http(const std::string& address, const std::string& method,
           const std::string& path,
           const httplib::Headers& headers = httplib::Headers()) {
  return Send(address, method, path, "", headers);
}

PromText Scrape(const std::string& address) {
  const Reply reply = Http(address, "GET", "/metrics");
  EXPECT_EQ(reply.status, 200) << reply.body;
  std::vector<std::string> errors;
  PromText text = testing::ParsePromText(reply.body, &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  return text;
}

// Polls until `path` answers `status` (the answer can trail the ready file
// by a heartbeat); the last reply either way.
Reply WaitForStatus(const std::string& address, const std::string& path,
                    int status) {
  const auto give_up = std::chrono::steady_clock::now() + kReady;
  Reply reply;
  while (std::chrono::steady_clock::now() < give_up) {
    reply = Http(address, "GET", path);
    if (reply.status == status) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return reply;
}

// A daemon started and waited for; the admin address from its ready file.
struct Started {
  std::unique_ptr<Subprocess> process;
  std::map<std::string, std::string> ready;
};

Started StartReady(const std::string& name, const std::string& dir,
                   std::vector<std::string> args) {
  const std::string ready = dir + "/" + name + ".ready";
  args.push_back("--ready-file");
  args.push_back(ready);
  Started started{StartTierd(name, dir, std::move(args)), {}};
  if (!started.process) return started;
  EXPECT_TRUE(testing::WaitForFile(ready, kReady))
      << started.process->OutputTail();
  started.ready = ReadyFields(ready);
  return started;
}

// Waits for a refused start: the exit code and stderr.
std::pair<int, std::string> ExitOf(const std::string& name,
                                   const std::string& dir,
                                   std::vector<std::string> args) {
  auto tierd = StartTierd(name, dir, std::move(args));
  if (!tierd) return {-1, ""};
  const std::optional<ExitStatus> status = tierd->Wait(kExit);
  if (!status) return {-1, tierd->OutputTail()};
  return {status->code, tierd->ReadStderr()};
}

TEST(TierdAdminTest, StandaloneServesTheAdminApiAndEveryMetric) {
  TempDir dir;
  Started tierd = StartReady("standalone", dir.path(),
                             Concat({"standalone", "--listen", "127.0.0.1:0"},
                                    SmallNode(dir.path() + "/ssd")));
  ASSERT_TRUE(tierd.process);
  ASSERT_EQ(tierd.ready.count("admin_address"), 1u);
  const std::string admin = tierd.ready.at("admin_address");
  EXPECT_THAT(admin, HasSubstr("127.0.0.1:"));
  EXPECT_NE(admin, "127.0.0.1:0");
  EXPECT_TRUE(tierd.process->WaitForStdout("admin http://" + admin, kReady))
      << tierd.process->OutputTail();

  EXPECT_EQ(Http(admin, "GET", "/healthz").status, 200);
  EXPECT_EQ(Http(admin, "GET", "/readyz").status, 200);
  const Reply status = Http(admin, "GET", "/api/v1/status");
  ASSERT_EQ(status.status, 200) << status.body;
  const nlohmann::json body = status.Json();
  EXPECT_EQ(body["tiers"]["memory"]["capacity_bytes"], 64u << 20) << body;
  // The SSD tier's capacity is what its store can take: the configured
  // 256 MiB short of the store's headroom for compaction and tombstones (a
  // few percent here) and of room for records awaiting compaction (10%).
  const uint64_t ssd_capacity = body["tiers"]["local_disk"]["capacity_bytes"];
  EXPECT_LE(ssd_capacity, 256u << 20) << body;
  EXPECT_GE(ssd_capacity, 210u << 20) << body;

  const PromText text = Scrape(admin);
  // Every declared metric, of both scopes: the master's and the node's.
  for (const metrics::MetricSpec& spec : metrics::AllMetrics()) {
    auto it = text.types.find(std::string(spec.name));
    ASSERT_NE(it, text.types.end()) << spec.name;
    EXPECT_EQ(it->second, metrics::KindName(spec.kind)) << spec.name;
  }
  // The contract's names (ARCHITECTURE.md section 8), with samples.
  for (const char* name :
       {"mooncake_promotion_attempts_total", "mooncake_promotion_queued_total",
        "mooncake_promotion_completed_total", "mooncake_promotion_failed_total",
        "mooncake_promotion_in_flight", "mooncake_groups",
        "mooncake_group_created_total", "mooncake_tier_capacity_bytes",
        "mooncake_tier_used_bytes", "mooncake_get_total",
        "mooncake_evictions_total", "mooncake_offload_queued_total",
        "mooncake_rpc_requests_total", "mooncake_rpc_duration_seconds_count",
        "mooncake_nodes"}) {
    EXPECT_GT(text.Count(name), 0u) << name;
  }
  EXPECT_EQ(text.Value("mooncake_nodes", {{"state", "alive"}}), 1);
  EXPECT_EQ(text.Value("mooncake_tier_capacity_bytes", {{"tier", "memory"}}),
            64u << 20);
  // The gRPC service's recorder: the node registered over it.
  EXPECT_GE(text.Value("mooncake_rpc_requests_total",
                       {{"method", "RegisterNode"}, {"code", "OK"}})
                .value_or(0),
            1);
  // The admin server's own recorder saw the requests above.
  EXPECT_GE(text.Value("mooncake_admin_requests_total",
                       {{"route", "GET /healthz"}, {"code", "OK"}})
                .value_or(0),
            1);
  // And the node's figures come along in standalone.
  EXPECT_EQ(text.Value("mooncake_node_dram_capacity_bytes"), 64u << 20);
  EXPECT_EQ(text.Value("mooncake_ssd_bytes", {{"kind", "capacity"}}),
            256u << 20);
  EXPECT_EQ(text.Value("mooncake_node_registrations_total"), 1);
  StopCleanly(*tierd.process);
}

TEST(TierdAdminTest, MasterAndNodeEachServeTheirOwnAdminPort) {
  TempDir dir;
  Started master =
      StartReady("master", dir.path(), {"master", "--listen", "127.0.0.1:0"});
  ASSERT_TRUE(master.process);
  const std::string master_admin = master.ready.at("admin_address");
  Started node =
      StartReady("node", dir.path(),
                 Concat({"node", "--master", master.ready.at("master_address"),
                         "--name", "n1"},
                        SmallNode(dir.path() + "/ssd")));
  ASSERT_TRUE(node.process);
  ASSERT_EQ(node.ready.count("admin_address"), 1u);
  const std::string node_admin = node.ready.at("admin_address");
  EXPECT_NE(node_admin, master_admin);

  for (const std::string& admin : {master_admin, node_admin}) {
    EXPECT_EQ(Http(admin, "GET", "/healthz").status, 200) << admin;
    EXPECT_EQ(WaitForStatus(admin, "/readyz", 200).status, 200) << admin;
  }
  // The master serves the API; the node points at the master's.
  EXPECT_EQ(Http(master_admin, "GET", "/api/v1/status").status, 200);
  const Reply on_node = Http(node_admin, "GET", "/api/v1/status");
  EXPECT_EQ(on_node.status, 404);
  EXPECT_EQ(on_node.Json()["error"]["reason"], "SERVED_BY_MASTER")
      << on_node.body;
  EXPECT_THAT(on_node.body, HasSubstr("9003"));
  EXPECT_EQ(Http(node_admin, "GET", "/nope").status, 404);
  EXPECT_EQ(Http(node_admin, "POST", "/metrics").status, 405);

  // Each /metrics holds its own scope.
  const PromText master_text = Scrape(master_admin);
  EXPECT_EQ(master_text.types.count("mooncake_node_dram_capacity_bytes"), 0u);
  EXPECT_EQ(master_text.types.count("mooncake_rpc_requests_total"), 1u);
  const PromText node_text = Scrape(node_admin);
  EXPECT_EQ(node_text.types.count("mooncake_tier_capacity_bytes"), 0u);
  for (const metrics::MetricSpec& spec : metrics::AllMetrics()) {
    if (spec.scope != metrics::MetricScope::kNode) continue;
    EXPECT_EQ(node_text.types.count(std::string(spec.name)), 1u) << spec.name;
  }
  EXPECT_EQ(node_text.Value("mooncake_node_dram_capacity_bytes"), 64u << 20);
  EXPECT_GE(node_text.Count("mooncake_ssd_batch_duration_seconds_bucket"), 1u);
  EXPECT_EQ(
      node_text.Value("mooncake_node_pending_tasks", {{"kind", "offload"}}), 0);
  // The master sees the node alive.
  EXPECT_EQ(master_text.Value("mooncake_nodes", {{"state", "alive"}}), 1);
  StopCleanly(*node.process);
  StopCleanly(*master.process);
}

TEST(TierdAdminTest, ReadyzIs503UntilTheNodeRegisters) {
  TempDir dir;
  const int master_port = testing::PickFreePort();
  const int admin_port = testing::PickFreePort();
  const std::string admin = Loopback(admin_port);
  auto node = StartTierd("node", dir.path(),
                         Concat({"node", "--master", Loopback(master_port),
                                 "--admin-listen", admin},
                                SmallNode(dir.path() + "/ssd")));
  ASSERT_TRUE(node);
  // No master yet: alive, not ready.
  EXPECT_EQ(WaitForStatus(admin, "/healthz", 200).status, 200)
      << node->OutputTail();
  const Reply not_ready = Http(admin, "GET", "/readyz");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(not_ready.Json()["error"]["reason"], "NOT_READY");
  auto master = StartTierd("master", dir.path(),
                           {"master", "--listen", Loopback(master_port)});
  ASSERT_TRUE(master);
  EXPECT_EQ(WaitForStatus(admin, "/readyz", 200).status, 200)
      << node->OutputTail();
  StopCleanly(*node);
  // The admin server stopped with the process.
  EXPECT_EQ(Http(admin, "GET", "/healthz").status, 0);
  StopCleanly(*master);
}

TEST(TierdAdminTest, TokenGuardsMutatingRoutes) {
  TempDir dir;
  const std::string token_file = dir.path() + "/token";
  std::ofstream(token_file) << "  s3cret\n";
  Started master = StartReady(
      "master", dir.path(),
      {"master", "--listen", "127.0.0.1:0", "--admin-token-file", token_file});
  ASSERT_TRUE(master.process);
  const std::string admin = master.ready.at("admin_address");
  const std::string path = "/api/v1/objects/missing";
  // Reads need no token.
  EXPECT_EQ(Http(admin, "GET", "/api/v1/status").status, 200);
  // Mutations do: none, a wrong one, then the file's (trimmed) content.
  EXPECT_EQ(Http(admin, "DELETE", path).status, 401);
  EXPECT_EQ(
      Http(admin, "DELETE", path, {{"Authorization", "Bearer wrong"}}).status,
      401);
  const Reply allowed =
      Http(admin, "DELETE", path, {{"Authorization", "Bearer s3cret"}});
  EXPECT_EQ(allowed.status, 404) << allowed.body;  // past the token check
  StopCleanly(*master.process);

  Started inline_token =
      StartReady("inline", dir.path(),
                 {"master", "--listen", "127.0.0.1:0", "--admin-token", "t0k"});
  ASSERT_TRUE(inline_token.process);
  const std::string admin2 = inline_token.ready.at("admin_address");
  EXPECT_EQ(Http(admin2, "DELETE", path).status, 401);
  EXPECT_EQ(
      Http(admin2, "DELETE", path, {{"Authorization", "Bearer t0k"}}).status,
      404);
  StopCleanly(*inline_token.process);
}

TEST(TierdAdminTest, AnEmptyAdminListenDisablesTheServer) {
  TempDir dir;
  Started master =
      StartReady("master", dir.path(),
                 {"master", "--listen", "127.0.0.1:0", "--admin-listen", ""});
  ASSERT_TRUE(master.process);
  EXPECT_EQ(master.ready.count("admin_address"), 0u);
  EXPECT_EQ(master.ready.count("master_address"), 1u);
  StopCleanly(*master.process);
}

TEST(TierdAdminTest, NonLoopbackWithoutATokenIsRefused) {
  TempDir dir;
  for (const char* mode : {"master", "standalone", "node"}) {
    const auto [code, err] =
        ExitOf(mode, dir.path(), {mode, "--admin-listen", "0.0.0.0:0"});
    EXPECT_EQ(code, 2) << mode << ": " << err;
    EXPECT_THAT(err, HasSubstr("not a loopback address")) << mode;
    EXPECT_THAT(err, HasSubstr("--admin-token")) << mode;
  }
}

TEST(TierdAdminTest, BadAdminFlagsAreUsageErrors) {
  TempDir dir;
  const std::string token_file = dir.path() + "/token";
  std::ofstream(token_file) << "x";
  const std::string empty_file = dir.path() + "/empty";
  std::ofstream(empty_file) << " \n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"master", "--admin-listen", "nohost"}, "--admin-listen"},
      {{"master", "--admin-listen", "127.0.0.1:70000"}, "0 to 65535"},
      {{"node", "--admin-listen", ":9300"}, "no host"},
      {{"master", "--admin-token", "a", "--admin-token-file", token_file},
       "excludes"},
      {{"standalone", "--admin-token-file", dir.path() + "/absent"},
       "cannot read"},
      {{"master", "--admin-token-file", empty_file}, "holds no token"}};
  for (const auto& [args, message] : cases) {
    const auto [code, err] = ExitOf("bad", dir.path(), args);
    EXPECT_EQ(code, 2) << args[1] << " " << args[2] << ": " << err;
    EXPECT_THAT(err, HasSubstr(message));
  }
}

TEST(TierdAdminTest, AdminPortInUseIsAStartFailure) {
  TempDir dir;
  Started first =
      StartReady("first", dir.path(), {"master", "--listen", "127.0.0.1:0"});
  ASSERT_TRUE(first.process);
  const std::string taken = first.ready.at("admin_address");
  const auto [code, err] =
      ExitOf("second", dir.path(),
             {"master", "--listen", "127.0.0.1:0", "--admin-listen", taken});
  EXPECT_EQ(code, 1) << err;
  EXPECT_THAT(err, HasSubstr("cannot bind the admin API to " + taken));
  // A node's admin port likewise (its master need not be up).
  const auto [node_code, node_err] = ExitOf(
      "node", dir.path(),
      Concat({"node", "--master", "127.0.0.1:1", "--admin-listen", taken},
             SmallNode(dir.path() + "/ssd")));
  EXPECT_EQ(node_code, 1) << node_err;
  EXPECT_THAT(node_err, HasSubstr("address in use"));
  StopCleanly(*first.process);
}

// Every route the daemon lists in /api/v1/help, against a running
// standalone daemon with a token: mutating routes refuse a missing token
// (401), unknown keys and groups are 404, malformed input is 400, and after
// each refusal the daemon still serves and nothing changed.
TEST(TierdAdminTest, EveryRouteRefusesBadInputAndTheDaemonKeepsServing) {
  TempDir dir;
  Started tierd = StartReady(
      "standalone", dir.path(),
      Concat({"standalone", "--listen", "127.0.0.1:0", "--admin-token", "t0k"},
             SmallNode(dir.path() + "/ssd")));
  ASSERT_TRUE(tierd.process);
  const std::string admin = tierd.ready.at("admin_address");
  const httplib::Headers auth = {{"Authorization", "Bearer t0k"}};
  const std::string config_before = Http(admin, "GET", "/api/v1/config").body;
  auto still_serving = [&](const std::string& after) {
    EXPECT_EQ(Http(admin, "GET", "/healthz").status, 200) << after;
    EXPECT_EQ(Http(admin, "GET", "/api/v1/status").status, 200) << after;
  };

  const nlohmann::json help = Http(admin, "GET", "/api/v1/help").Json();
  ASSERT_TRUE(help.contains("routes")) << help.dump();
  size_t checked = 0;
  for (const nlohmann::json& route : help["routes"]) {
    const std::string method = route["method"];
    std::string path = route["path"];
    const bool has_param = path.find('{') != std::string::npos;
    for (const char* param : {"{key}", "{id}"}) {
      const size_t at = path.find(param);
      if (at != std::string::npos) {
        path.replace(at, std::string(param).size(), "no%2Fsuch%20thing");
      }
    }
    const std::string what = method + " " + path;
    if (route["mutating"].get<bool>()) {
      EXPECT_EQ(Send(admin, method, path, "{}").status, 401) << what;
      if (has_param) {
        EXPECT_EQ(Send(admin, method, path, "{}", auth).status, 404) << what;
      }
    } else if (has_param) {
      EXPECT_EQ(Http(admin, method, path).status, 404) << what;
    } else if (path != "/readyz") {
      EXPECT_EQ(Http(admin, method, path).status, 200) << what;
    }
    still_serving(what);
    ++checked;
  }
  EXPECT_GE(checked, 19u);

  // Malformed input: bad numbers, unknown states and fields, broken JSON,
  // out-of-range values, a broken percent-encoding.
  for (const std::string path :
       {"/api/v1/groups?limit=lots", "/api/v1/groups?limit=-1",
        "/api/v1/groups?state=sleepy", "/api/v1/objects/%ZZ"}) {
    const Reply reply = Http(admin, "GET", path);
    EXPECT_EQ(reply.status, 400) << path << " " << reply.body;
    EXPECT_TRUE(reply.Json().contains("error")) << reply.body;
    still_serving(path);
  }
  for (const std::string& body :
       {std::string("{"), std::string("[1,2]"), std::string(R"({"nope":1})"),
        std::string(R"({"eviction_high_watermark":"high"})"),
        std::string(R"({"eviction_high_watermark":7})"),
        std::string(R"({"promotion":{"admission_threshold":-3}})")}) {
    const Reply reply = Send(admin, "PATCH", "/api/v1/config", body, auth);
    EXPECT_EQ(reply.status, 400) << body << " " << reply.body;
    EXPECT_TRUE(reply.Json().contains("error")) << reply.body;
    still_serving(body);
  }
  EXPECT_EQ(Http(admin, "GET", "/api/v1/config").body, config_before);
  StopCleanly(*tierd.process);
}

}  // namespace
}  // namespace tierd_admin_test
}  // namespace mooncake_tier
