#include "admin_server/node_admin_server.h"

#include <sys/socket.h>

#include <chrono>
#include <utility>

#include "admin_server/admin_routes.h"
#include "httplib.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::admin {
namespace {

void Write(const AdminResponse& response, httplib::Response& res) {
  res.status = response.status;
  res.set_content(response.body, response.content_type.c_str());
}

bool UnderApi(const std::string& path) { return path.rfind("/api/", 0) == 0; }

}  // namespace

NodeAdminServer::NodeAdminServer(AdminServerOptions options,
                                 std::string node_name, MetricsSource metrics)
    : options_(std::move(options)),
      node_name_(std::move(node_name)),
      metrics_(std::move(metrics)) {
  AddHealthRoutes(routes_);
  AddMetricsRoutes(routes_);
}

NodeAdminServer::~NodeAdminServer() { Shutdown(); }

Result<std::unique_ptr<NodeAdminServer>> NodeAdminServer::Start(
    AdminServerOptions options, std::string node_name, MetricsSource metrics) {
  if (options.token.empty() && !IsLoopbackAddress(options.bind_address)) {
    return Status(ErrorReason::kInvalidArgument,
                  "refusing to serve the node's admin port on '" +
                      options.bind_address +
                      "' without an admin token: set --admin-token or bind "
                      "a loopback address");
  }
  if (options.max_body_bytes == 0 || options.threads == 0 ||
      options.keep_alive_seconds <= 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "admin server limits and threads must be positive");
  }
  std::unique_ptr<NodeAdminServer> server(new NodeAdminServer(
      std::move(options), std::move(node_name), std::move(metrics)));
  MT_RETURN_IF_ERROR(server->Listen());
  return server;
}

Status NodeAdminServer::Listen() {
  server_ = std::make_unique<httplib::Server>();
  const size_t threads = options_.threads;
  server_->new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  // httplib's default also sets SO_REUSEPORT, which would let a second
  // process bind a port already served and share its requests.
  server_->set_socket_options([](int sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server_->set_payload_max_length(options_.max_body_bytes);
  server_->set_keep_alive_timeout(options_.keep_alive_seconds);
  auto dispatch = [this](const httplib::Request& req, httplib::Response& res) {
    Dispatch(req, res);
  };
  const std::string any = ".*";
  server_->Get(any, dispatch);
  server_->Post(any, dispatch);
  server_->Patch(any, dispatch);
  server_->Delete(any, dispatch);
  server_->Put(any, dispatch);
  const int port =
      options_.port == 0
          ? server_->bind_to_any_port(options_.bind_address)
          : (server_->bind_to_port(options_.bind_address, options_.port)
                 ? options_.port
                 : -1);
  if (port <= 0) {
    return Status(ErrorReason::kUnavailable,
                  "cannot bind the node's admin port to " +
                      options_.bind_address + ":" +
                      std::to_string(options_.port));
  }
  port_ = static_cast<uint16_t>(port);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!server_->is_running() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  spdlog::info(
      "node admin: serving /healthz, /readyz and /metrics on "
      "http://{}:{}",
      options_.bind_address, port_);
  return Status::Ok();
}

void NodeAdminServer::Dispatch(const httplib::Request& req,
                               httplib::Response& res) const {
  const std::string path = req.path;
  const AdminRoute* route = nullptr;
  std::map<std::string, std::string> params;
  switch (routes_.Match(req.method, path, &route, &params)) {
    case RouteTable::MatchResult::kMatched:
      break;
    case RouteTable::MatchResult::kWrongMethod:
      return Write(
          AdminResponse::Error(405, "INVALID_ARGUMENT", "METHOD_NOT_ALLOWED",
                               req.method + " is not allowed on " + path),
          res);
    case RouteTable::MatchResult::kNoPath:
    case RouteTable::MatchResult::kBadEncoding:
      if (UnderApi(path)) {
        return Write(
            AdminResponse::Error(
                404, "NOT_FOUND", "SERVED_BY_MASTER",
                "this is the admin port of storage node '" + node_name_ +
                    "', which serves only /healthz, /readyz and /metrics; "
                    "the admin API is served by the master's admin server "
                    "(mooncake-tierd master --admin-listen, default "
                    "127.0.0.1:9003)"),
            res);
      }
      return Write(AdminResponse::Error(404, "NOT_FOUND", "ROUTE_NOT_FOUND",
                                        "no such route"),
                   res);
  }
  AdminRequest request;
  request.method = req.method;
  request.path = path;
  request.params = std::move(params);
  AdminContext context{nullptr, metrics_, [this] { return ready_.load(); },
                       &routes_};
  Write(route->handler(request, context), res);
}

void NodeAdminServer::Shutdown() {
  if (server_ == nullptr) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace mooncake_tier::admin
