// Every admin route against a real AdminServer over a real Master: success,
// malformed input, missing token, unknown keys and groups; the fixture
// checks the server still answers after each test.

#include "admin_server/admin_server.h"

#include <set>

#include "admin_server/admin_test_fixture.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/raw_http_client.h"

namespace mooncake_tier::admin {
namespace admin_server_test {
namespace {

using nlohmann::json;

TEST_F(AdminServerTest, HealthAndReadiness) {
  EXPECT_EQ(Get("/healthz").status, 200);
  ExpectError(Get("/readyz"), 503, "NOT_READY");
  server_->SetReady(true);
  EXPECT_EQ(Get("/readyz").status, 200);
}

TEST_F(AdminServerTest, HelpListsEveryRouteOfTheTable) {
  const Reply reply = Get("/api/v1/help");
  ASSERT_EQ(reply.status, 200);
  std::set<std::pair<std::string, std::string>> listed;
  for (const json& route : reply.body.at("routes")) {
    listed.emplace(route.at("method"), route.at("path"));
    EXPECT_FALSE(route.at("help").get<std::string>().empty());
    EXPECT_EQ(route.at("mutating").get<bool>(), route.at("method") != "GET");
  }
  EXPECT_EQ(listed.size(), server_->routes().routes().size());
  for (const AdminRoute& route : server_->routes().routes()) {
    EXPECT_TRUE(listed.contains({route.method, route.pattern}))
        << route.method << " " << route.pattern;
  }
}

TEST_F(AdminServerTest, MetricsServesThePrometheusText) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());
  ASSERT_TRUE(h_.Get("k").ok());
  const Reply reply = Get("/metrics");
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(reply.content_type.rfind("text/plain", 0), 0u);
  const testing::PromText text = testing::ParsePromText(reply.text);
  EXPECT_EQ(text.types.at("mooncake_get_total"), "counter");
  EXPECT_EQ(text.Value("mooncake_get_total", {{"result", "memory_hit"}}), 1);
}

TEST_F(AdminServerTest, RequestsAreCountedByRouteAndCode) {
  EXPECT_EQ(Get("/api/v1/status").status, 200);
  EXPECT_EQ(Get("/api/v1/status").status, 200);
  EXPECT_EQ(Get(ObjectPath("missing")).status, 404);
  EXPECT_EQ(Call("DELETE", ObjectPath("k"), "", false).status, 401);
  EXPECT_EQ(Get("/api/v1/nothing").status, 404);  // unrouted: not recorded
  const testing::PromText text = testing::ParsePromText(Get("/metrics").text);
  EXPECT_EQ(text.Value("mooncake_admin_requests_total",
                       {{"route", "GET /api/v1/status"}, {"code", "OK"}}),
            2);
  EXPECT_EQ(text.Value("mooncake_admin_requests_total",
                       {{"route", "GET /api/v1/objects/{key}"},
                        {"code", "NOT_FOUND"}}),
            1);
  EXPECT_EQ(text.Value("mooncake_admin_requests_total",
                       {{"route", "DELETE /api/v1/objects/{key}"},
                        {"code", "UNAUTHENTICATED"}}),
            1);
  EXPECT_EQ(text.Value("mooncake_admin_request_duration_seconds_count",
                       {{"route", "GET /api/v1/status"}}),
            2);
}

TEST_F(AdminServerTest, StatusReportsTiersObjectsAndQueues) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());
  const Reply reply = Get("/api/v1/status");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["tiers"]["memory"]["capacity_bytes"], kMiB);
  EXPECT_GE(reply.body["tiers"]["memory"]["used_bytes"].get<uint64_t>(), kObj);
  EXPECT_EQ(reply.body["tiers"]["local_disk"]["capacity_bytes"], 64 * kMiB);
  EXPECT_EQ(reply.body["objects"], 1);
  EXPECT_EQ(reply.body["nodes"]["alive"], 1);
  EXPECT_EQ(reply.body["promotions"]["in_flight"], 0);
  EXPECT_EQ(reply.body["groups"]["complete"], 0);
}

TEST_F(AdminServerTest, NodesPageByCursor) {
  for (const char* name : {"a", "b", "c"}) h_.AddNode(name, kMiB, kMiB);
  h_.clock().Advance(std::chrono::seconds(2));
  Reply first = Get("/api/v1/nodes?limit=2");
  ASSERT_EQ(first.status, 200) << first.text;
  ASSERT_EQ(first.body["nodes"].size(), 2u);
  EXPECT_EQ(first.body["nodes"][0]["name"], "a");
  EXPECT_EQ(first.body["nodes"][0]["state"], "alive");
  EXPECT_EQ(first.body["nodes"][0]["heartbeat_age_ms"], 2000);
  EXPECT_EQ(first.body["nodes"][0]["dram"]["capacity_bytes"], kMiB);
  EXPECT_EQ(first.body["nodes"][0]["pending_tasks"], 0);
  const std::string cursor = first.body["next_cursor"];
  ASSERT_FALSE(cursor.empty());
  Reply second = Get("/api/v1/nodes?limit=2&cursor=" + cursor);
  ASSERT_EQ(second.status, 200);
  ASSERT_EQ(second.body["nodes"].size(), 1u);
  EXPECT_EQ(second.body["nodes"][0]["name"], "c");
  EXPECT_EQ(second.body["next_cursor"], "");
  EXPECT_EQ(Get("/api/v1/nodes").body["nodes"].size(), 3u);

  ExpectError(Get("/api/v1/nodes?limit=0"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/nodes?limit=abc"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/nodes?limit=99999"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/nodes?cursor=-1"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/nodes?bogus=1"), 400, "INVALID_ARGUMENT");
}

TEST_F(AdminServerTest, ObjectKeysArePercentEncoded) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  const std::string key = "layer 0/block%42/\xD0\xBA\xD0\xBB\xD1\x8E\xD1\x87";
  ASSERT_TRUE(h_.Put(key, kObj).ok());
  const Reply reply = Get(ObjectPath(key));
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["key"], key);
  EXPECT_EQ(reply.body["size"], kObj);
  ASSERT_EQ(reply.body["replicas"].size(), 1u);
  EXPECT_EQ(reply.body["replicas"][0]["tier"], "memory");
  EXPECT_EQ(reply.body["replicas"][0]["state"], "complete");
  EXPECT_EQ(reply.body["replicas"][0]["refcnt"], 0);
  EXPECT_EQ(reply.body["group"], nullptr);
  // Describing grants no lease: a non-forced remove still succeeds.
  EXPECT_EQ(reply.body["lease_remaining_ms"], 0);
  EXPECT_EQ(h_.master().GetStats().get_memory_hit, 0u);  // not an access
  EXPECT_EQ(Call("DELETE", ObjectPath(key)).status, 200);

  ExpectError(Get(ObjectPath("missing")), 404, "OBJECT_NOT_FOUND");
  EXPECT_EQ(Get(ObjectPath("missing")).body["error"]["code"], "NOT_FOUND");
  ExpectError(Get("/api/v1/objects/bad%zzkey"), 400, "BAD_ENCODING");
  ExpectError(Get("/api/v1/objects/nul%00key"), 400, "INVALID_KEY");
}

TEST_F(AdminServerTest, DeleteObjectNeedsTheTokenAndHonoursLeases) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());
  ExpectError(Call("DELETE", ObjectPath("k"), "", /*auth=*/false), 401,
              "TOKEN_REQUIRED");
  httplib::Headers wrong = {{"Authorization", "Bearer nope"}};
  auto res = client_->Delete(ObjectPath("k"), wrong);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(Get(ObjectPath("k")).status, 200);  // still there

  ASSERT_TRUE(h_.Get("k").ok());  // a reader's lease
  ExpectError(Call("DELETE", ObjectPath("k")), 409, "OBJECT_LEASED");
  ExpectError(Call("DELETE", ObjectPath("k", "?force=maybe")), 400,
              "INVALID_ARGUMENT");
  const Reply removed = Call("DELETE", ObjectPath("k", "?force=true"));
  EXPECT_EQ(removed.status, 200) << removed.text;
  EXPECT_EQ(removed.body["removed"], true);
  ExpectError(Get(ObjectPath("k")), 404, "OBJECT_NOT_FOUND");
  ExpectError(Call("DELETE", ObjectPath("k")), 404, "OBJECT_NOT_FOUND");
}

TEST_F(AdminServerTest, ForcedPromotionQueuesATaskOr409) {
  h_.AddNode("n1", kMiB, 64 * kMiB, {SsdInventoryEntry{"cold", kObj, {}}});
  ASSERT_TRUE(h_.Put("hot", kObj).ok());
  ExpectError(Call("POST", ObjectPath("cold", "/promote"), "", false), 401,
              "TOKEN_REQUIRED");
  const Reply queued = Call("POST", ObjectPath("cold", "/promote"));
  ASSERT_EQ(queued.status, 202) << queued.text;
  ASSERT_EQ(queued.body["tasks"].size(), 1u);
  const uint64_t task = queued.body["tasks"][0];

  const Reply list = Get("/api/v1/promotions");
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body["tasks"].size(), 1u);
  EXPECT_EQ(list.body["tasks"][0]["id"], task);
  EXPECT_EQ(list.body["tasks"][0]["key"], "cold");
  EXPECT_EQ(list.body["tasks"][0]["kind"], "promotion");
  EXPECT_EQ(list.body["tasks"][0]["state"], "queued");
  EXPECT_EQ(list.body["tasks"][0]["forced"], true);
  EXPECT_EQ(list.body["tasks"][0]["size"], kObj);
  EXPECT_EQ(list.body["next_cursor"], "");
  ExpectError(Get("/api/v1/promotions?cursor=x"), 400, "INVALID_ARGUMENT");

  ExpectError(Call("POST", ObjectPath("cold", "/promote")), 409, "OBJECT_BUSY");
  ExpectError(Call("POST", ObjectPath("hot", "/promote")), 409,
              "NOT_APPLICABLE");
  ExpectError(Call("POST", ObjectPath("missing", "/promote")), 404,
              "OBJECT_NOT_FOUND");
}

TEST_F(AdminServerTest, GroupRoutes) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  PutOptions k, v;
  k.group = GroupSpec{"blk/1", 2, 0};
  v.group = GroupSpec{"blk/1", 2, 1};
  ASSERT_TRUE(h_.Put("blk/1/k", kObj, k).ok());
  ASSERT_TRUE(h_.Put("blk/1/v", kObj, v).ok());
  const std::string path = "/api/v1/groups/" + PercentEncode("blk/1");

  const Reply group = Get(path);
  ASSERT_EQ(group.status, 200) << group.text;
  EXPECT_EQ(group.body["id"], "blk/1");
  EXPECT_EQ(group.body["state"], "complete");
  EXPECT_EQ(group.body["expected"], 2);
  EXPECT_EQ(group.body["present"], 2);
  ASSERT_EQ(group.body["members"].size(), 2u);
  EXPECT_EQ(group.body["members"][1]["key"], "blk/1/v");
  EXPECT_EQ(group.body["members"][1]["tiers"], json::array({"memory"}));
  ExpectError(Get("/api/v1/groups/nope"), 404, "GROUP_NOT_FOUND");

  PutOptions lone;
  lone.group = GroupSpec{"blk/2", 2, 0};
  ASSERT_TRUE(h_.Put("blk/2/k", kObj, lone).ok());
  const Reply all = Get("/api/v1/groups");
  ASSERT_EQ(all.status, 200) << all.text;
  ASSERT_EQ(all.body["groups"].size(), 2u);
  EXPECT_EQ(all.body["next_cursor"], "");
  const Reply filling = Get("/api/v1/groups?state=filling");
  ASSERT_EQ(filling.status, 200) << filling.text;
  ASSERT_EQ(filling.body["groups"].size(), 1u);
  EXPECT_EQ(filling.body["groups"][0]["id"], "blk/2");
  const Reply first = Get("/api/v1/groups?limit=1");
  ASSERT_EQ(first.status, 200) << first.text;
  ASSERT_EQ(first.body["groups"].size(), 1u);
  const std::string cursor = first.body["next_cursor"];
  ASSERT_FALSE(cursor.empty());
  const Reply second =
      Get("/api/v1/groups?limit=1&cursor=" + PercentEncode(cursor));
  ASSERT_EQ(second.status, 200) << second.text;
  ASSERT_EQ(second.body["groups"].size(), 1u);
  EXPECT_NE(second.body["groups"][0]["id"], first.body["groups"][0]["id"]);
  ExpectError(Get("/api/v1/groups?state=bogus"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/groups?limit=x"), 400, "INVALID_ARGUMENT");

  ExpectError(Call("POST", path + "/promote"), 409, "NOT_APPLICABLE");
  ExpectError(Call("POST", "/api/v1/groups/nope/promote"), 404,
              "GROUP_NOT_FOUND");
  ExpectError(Call("POST", path + "/promote", "", false), 401,
              "TOKEN_REQUIRED");
  ExpectError(Call("DELETE", path, "", false), 401, "TOKEN_REQUIRED");
  EXPECT_EQ(Call("DELETE", path).status, 200);
  ExpectError(Get(path), 404, "GROUP_NOT_FOUND");
  ExpectError(Get(ObjectPath("blk/1/k")), 404, "OBJECT_NOT_FOUND");
  ExpectError(Call("DELETE", path), 404, "GROUP_NOT_FOUND");
}

TEST_F(AdminServerTest, EdgeErrorsKeepTheContractBody) {
  ExpectError(Get("/api/v1/nothing"), 404, "ROUTE_NOT_FOUND");
  ExpectError(Call("PATCH", "/api/v1/status", "{}"), 405, "METHOD_NOT_ALLOWED");
  // Over the 8 KiB body limit of the fixture.
  ExpectError(Call("PATCH", "/api/v1/config", std::string(20000, ' ')), 413,
              "PAYLOAD_TOO_LARGE");
  httplib::Headers big = {{"X-Filler", std::string(20000, 'x')}};
  auto res = client_->Get("/api/v1/status", big);
  ASSERT_TRUE(res);
  EXPECT_GE(res->status, 400);
  // Each line well under the limit, together over 16 KiB.
  httplib::Headers many = {{"X-A", std::string(6000, 'a')},
                           {"X-B", std::string(6000, 'b')},
                           {"X-C", std::string(6000, 'c')}};
  res = client_->Get("/api/v1/status", many);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 431);
  EXPECT_NE(res->body.find("HEADERS_TOO_LARGE"), std::string::npos);
  EXPECT_EQ(Get("/api/v1/status").status, 200);
}

TEST_F(AdminServerTest, TheTokenIsCheckedBeforeTheBodyIsRead) {
  testing::RawHttpClient client(server_->port());
  // A body is announced and never sent: a 401 cannot wait for it.
  ASSERT_TRUE(
      client.Send("DELETE /api/v1/objects/k HTTP/1.1\r\nHost: t\r\n"
                  "Content-Length: 4000\r\n\r\n"));
  auto responses = testing::ParseHttpResponses(
      client.ReadResponses(1, std::chrono::milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 401);
  EXPECT_NE(responses[0].body.find("TOKEN_REQUIRED"), std::string::npos);
  EXPECT_NE(responses[0].head.find("WWW-Authenticate: Bearer"),
            std::string::npos);
  EXPECT_EQ(server_->stats()
                .refused[static_cast<size_t>(HttpRefusal::kUnauthenticated)],
            1u);
}

TEST_F(AdminServerTest, AnActionRouteTakesAnEmptyPostWithoutContentLength) {
  // curl -X POST .../evict sends neither a body nor a Content-Length.
  testing::RawHttpClient client(server_->port());
  ASSERT_TRUE(client.Send(std::string("POST /api/v1/groups/7/evict HTTP/1.1\r\n"
                                      "Host: t\r\nAuthorization: Bearer ") +
                          kToken + "\r\n\r\n"));
  auto responses = testing::ParseHttpResponses(
      client.ReadResponses(1, std::chrono::milliseconds(5000)));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 404) << responses[0].body;
  EXPECT_NE(responses[0].body.find("GROUP_NOT_FOUND"), std::string::npos)
      << responses[0].body;
}

TEST_F(AdminServerTest, AFormBodyIsNotReadAsQueryParameters) {
  const nlohmann::json before = Get("/api/v1/config").body;
  httplib::Headers headers{{"Authorization", std::string("Bearer ") + kToken}};
  auto res = client_->Patch("/api/v1/config", headers,
                            "promotion_admission_threshold=7",
                            "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
  // Refused as a body that is not JSON, not as an unknown query parameter.
  EXPECT_NE(res->body.find("not valid JSON"), std::string::npos) << res->body;
  EXPECT_EQ(Get("/api/v1/config").body, before);
}

TEST(AdminServerAddressTest, OnlyLoopbackAddressesAreLoopback) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackAddress("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackAddress("::1"));
  EXPECT_TRUE(IsLoopbackAddress("localhost"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackAddress("127.example.com"));
  EXPECT_FALSE(IsLoopbackAddress("::"));
}

class AdminOffloadTest : public AdminServerTest {
 protected:
  static MasterConfig WriteThrough() {
    MasterConfig c = Config();
    c.offload_mode = OffloadMode::kWriteThrough;
    return c;
  }
  AdminOffloadTest() : AdminServerTest(WriteThrough()) {}
};

TEST_F(AdminOffloadTest, OffloadsListTasksInFlightByPage) {
  const NodeId node = h_.AddNode("n1", kMiB, 64 * kMiB);
  for (const char* key : {"a", "b", "c"}) ASSERT_TRUE(h_.Put(key, kObj).ok());
  h_.clock().Advance(std::chrono::milliseconds(1500));
  Reply page = Get("/api/v1/offloads?limit=2");
  ASSERT_EQ(page.status, 200) << page.text;
  ASSERT_EQ(page.body["tasks"].size(), 2u);
  EXPECT_EQ(page.body["tasks"][0]["kind"], "offload");
  EXPECT_EQ(page.body["tasks"][0]["key"], "a");
  EXPECT_EQ(page.body["tasks"][0]["node"], node);
  EXPECT_EQ(page.body["tasks"][0]["age_ms"], 1500);
  const std::string cursor = page.body["next_cursor"];
  page = Get("/api/v1/offloads?limit=2&cursor=" + cursor);
  ASSERT_EQ(page.body["tasks"].size(), 1u);
  EXPECT_EQ(page.body["tasks"][0]["key"], "c");
  EXPECT_EQ(page.body["next_cursor"], "");
  EXPECT_EQ(Get("/api/v1/nodes").body["nodes"][0]["pending_tasks"], 3);
  EXPECT_EQ(Get("/api/v1/status").body["offloads"]["queued"], 3);
  EXPECT_EQ(h_.CompleteOffloads(node), 3u);
  EXPECT_EQ(Get("/api/v1/offloads").body["tasks"].size(), 0u);
}

TEST(AdminServerStartTest, RefusesNonLoopbackWithoutAToken) {
  testing::MasterHarness h;
  MasterAdminFacade facade(&h.master(), &h.clock());
  AdminServerOptions options;
  options.port = 0;
  options.bind_address = "0.0.0.0";
  auto refused = AdminServer::Start(options, &facade, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().reason(), ErrorReason::kInvalidArgument);
  options.token = "t";
  auto started = AdminServer::Start(options, &facade, nullptr);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  EXPECT_GT((*started)->port(), 0);
}

TEST(AdminServerStartTest, LoopbackWithoutATokenNeedsNoAuth) {
  testing::MasterHarness h;
  h.AddNode("n1", 1 << 20);
  ASSERT_TRUE(h.Put("k", 100).ok());
  MasterAdminFacade facade(&h.master(), &h.clock());
  AdminServerOptions options;
  options.port = 0;
  auto server = AdminServer::Start(options, &facade, nullptr);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto res = client.Delete("/api/v1/objects/k");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);  // no metrics source
  (*server)->Shutdown();
  (*server)->Shutdown();  // idempotent
}

}  // namespace
}  // namespace admin_server_test
}  // namespace mooncake_tier::admin
