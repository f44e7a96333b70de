// A storage node's admin port: its routes, the /api/ answers pointing at
// the master, and the master's edge rules (431, JSON bodies for errors
// httplib raises itself, the token rule), over a real server on
// 127.0.0.1:0.

#include "admin_server/node_admin_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "httplib.h"
#include "nlohmann/json.hpp"

namespace mooncake_tier::admin {
namespace node_admin_server_test {
namespace {

using nlohmann::json;

// The error object of a contract body, or null when the body is not one.
json ErrorOf(const std::string& body) {
  const json document = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object() || !document.contains("error") ||
      !document["error"].is_object()) {
    return nullptr;
  }
  return document["error"];
}

// Sends `request` as raw bytes and returns the answer: its head and as
// much body as Content-Length says (or what came before a close or 5 s).
std::string RawExchange(uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) ==
          0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) {
      answer.append(buffer, static_cast<size_t>(n));
      const size_t head_end = answer.find("\r\n\r\n");
      if (head_end == std::string::npos) continue;
      const size_t length = answer.find("Content-Length: ");
      if (length == std::string::npos || length > head_end) break;
      const size_t body_bytes = std::stoul(answer.substr(length + 16));
      if (answer.size() >= head_end + 4 + body_bytes) break;
    }
  }
  ::close(fd);
  return answer;
}

class NodeAdminServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AdminServerOptions options;
    options.port = 0;
    auto server = NodeAdminServer::Start(options, "node-7",
                                         [] { return "node_metric 1\n"; });
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }

  std::unique_ptr<NodeAdminServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(NodeAdminServerTest, ServesHealthReadinessAndMetrics) {
  auto res = client_->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = client_->Get("/readyz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(ErrorOf(res->body).value("reason", ""), "NOT_READY") << res->body;
  server_->SetReady(true);
  res = client_->Get("/readyz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "node_metric 1\n");
}

TEST_F(NodeAdminServerTest, ApiPathsPointAtTheMastersAdminServer) {
  auto res = client_->Get("/api/v1/status");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  const json error = ErrorOf(res->body);
  EXPECT_EQ(error.value("reason", ""), "SERVED_BY_MASTER") << res->body;
  EXPECT_EQ(error.value("code", ""), "NOT_FOUND") << res->body;
  EXPECT_NE(error.value("message", "").find("node-7"), std::string::npos);
  EXPECT_NE(error.value("message", "").find("--admin-listen"),
            std::string::npos);
  res = client_->Post("/api/v1/objects/k/promote", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(ErrorOf(res->body).value("reason", ""), "SERVED_BY_MASTER");

  res = client_->Get("/nope");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(ErrorOf(res->body).value("reason", ""), "ROUTE_NOT_FOUND");
  res = client_->Post("/metrics", "", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(ErrorOf(res->body).value("reason", ""), "METHOD_NOT_ALLOWED");
}

TEST_F(NodeAdminServerTest, AppliesTheMastersEdgeRules) {
  // Each line under httplib's own cap, together over the 16 KiB default.
  const httplib::Headers many = {{"X-A", std::string(6000, 'a')},
                                 {"X-B", std::string(6000, 'b')},
                                 {"X-C", std::string(6000, 'c')}};
  auto res = client_->Get("/healthz", many);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 431);
  EXPECT_EQ(ErrorOf(res->body).value("reason", ""), "HEADERS_TOO_LARGE")
      << res->body;

  // A request httplib cannot parse never reaches a route: its 400 still
  // has the contract's body.
  const std::string answer =
      RawExchange(server_->port(), "NOT AN HTTP REQUEST\r\n\r\n");
  ASSERT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  const size_t body = answer.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos) << answer;
  const json error = ErrorOf(answer.substr(body + 4));
  EXPECT_EQ(error.value("reason", ""), "BAD_REQUEST") << answer;
  EXPECT_EQ(error.value("code", ""), "INVALID_ARGUMENT") << answer;

  // Still serving.
  res = client_->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(NodeAdminServerStartTest, RefusesNonLoopbackWithoutATokenAndStopsTwice) {
  AdminServerOptions options;
  options.port = 0;
  options.bind_address = "0.0.0.0";
  auto refused = NodeAdminServer::Start(options, "n", nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("node's admin port"),
            std::string::npos)
      << refused.status().ToString();

  options.bind_address = "127.0.0.1";
  auto started = NodeAdminServer::Start(options, "n", nullptr);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  httplib::Client client("127.0.0.1", (*started)->port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);  // no metrics source
  (*started)->Shutdown();
  (*started)->Shutdown();  // idempotent
}

}  // namespace
}  // namespace node_admin_server_test
}  // namespace mooncake_tier::admin
