#pragma once

// A real AdminServer on 127.0.0.1:0 over a real Master on a ManualClock,
// with an httplib client, for the admin API tests. Test-only.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "admin_server/admin_server.h"
#include "admin_server/master_admin_facade.h"
#include "admin_server/route_table.h"
#include "httplib.h"
#include "metrics/master_metrics.h"
#include "metrics/text_exposition.h"
#include "nlohmann/json.hpp"
#include "tests/support/master_harness.h"

namespace mooncake_tier::admin {

class AdminServerTest : public ::testing::Test {
 protected:
  static constexpr const char* kToken = "s3cret";
  static constexpr uint64_t kMiB = 1 << 20;
  static constexpr uint64_t kObj = 4096;

  explicit AdminServerTest(MasterConfig config = Config())
      : h_(config),
        facade_(&h_.master(), &h_.clock()),
        requests_(AdminServer::RouteNames()),
        metrics_(&h_.master(), &h_.clock(), nullptr, &requests_) {}

  static MasterConfig Config() {
    MasterConfig c = testing::MasterHarness::DefaultConfig();
    c.promotion.proactive_low_watermark = 0;
    return c;
  }

  void SetUp() override {
    AdminServerOptions options;
    options.port = 0;
    options.token = kToken;
    options.max_body_bytes = 8 << 10;
    auto server = AdminServer::Start(
        options, &facade_, [this] { return metrics::RenderText({&metrics_}); },
        &requests_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_url_encode(false);  // paths are encoded by the tests
  }

  // Every test ends with the server still answering.
  void TearDown() override {
    if (client_ == nullptr) return;
    auto res = client_->Get("/healthz");
    ASSERT_TRUE(res) << "server stopped serving";
    EXPECT_EQ(res->status, 200);
  }

  struct Reply {
    int status = 0;
    nlohmann::json body;
    std::string text;
    std::string content_type;
  };

  // One request; `auth` sends the bearer token.
  Reply Call(const std::string& method, const std::string& path,
             const std::string& body = "", bool auth = true) {
    httplib::Headers headers;
    if (auth) headers.emplace("Authorization", std::string("Bearer ") + kToken);
    httplib::Result res = [&] {
      if (method == "POST") {
        return client_->Post(path, headers, body, "application/json");
      }
      if (method == "PATCH") {
        return client_->Patch(path, headers, body, "application/json");
      }
      if (method == "DELETE") return client_->Delete(path, headers);
      return client_->Get(path, headers);
    }();
    Reply reply;
    if (!res) {
      ADD_FAILURE() << method << " " << path << ": no response";
      return reply;
    }
    reply.status = res->status;
    reply.text = res->body;
    reply.content_type = res->get_header_value("Content-Type");
    reply.body = nlohmann::json::parse(res->body, nullptr, false);
    return reply;
  }
  Reply Get(const std::string& path) { return Call("GET", path); }

  // Checks the contract's error body.
  static void ExpectError(const Reply& reply, int status,
                          const std::string& reason) {
    EXPECT_EQ(reply.status, status) << reply.text;
    ASSERT_TRUE(reply.body.is_object()) << reply.text;
    ASSERT_TRUE(reply.body.contains("error")) << reply.text;
    const nlohmann::json& error = reply.body["error"];
    EXPECT_EQ(error.value("reason", ""), reason) << reply.text;
    EXPECT_TRUE(error.contains("code")) << reply.text;
    EXPECT_FALSE(error.value("message", "").empty()) << reply.text;
  }

  static std::string ObjectPath(const std::string& key,
                                const std::string& suffix = "") {
    return "/api/v1/objects/" + PercentEncode(key) + suffix;
  }

  testing::MasterHarness h_;
  MasterAdminFacade facade_;
  rpc::CallRecorder requests_;
  metrics::MasterMetrics metrics_;
  std::unique_ptr<AdminServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace mooncake_tier::admin
