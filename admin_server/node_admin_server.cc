#include "admin_server/node_admin_server.h"


#include <chrono>
#include <utility>

#include "admin_server/admin_routes.h"
#include "admin_server/http_listener.h"
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
  MT_RETURN_IF_ERROR(CheckListenerOptions(options, "the node's admin port"));
  std::unique_ptr<NodeAdminServer> server(new NodeAdminServer(
      std::move(options), std::move(node_name), std::move(metrics)));
  MT_RETURN_IF_ERROR(server->Listen());
  return server;
}

Status NodeAdminServer::Listen() {
  server_ = std::make_unique<httplib::Server>();
  ConfigureListener(*server_, options_);
  auto dispatch = [this](const httplib::Request& req, httplib::Response& res) {
    Dispatch(req, res);
  };
  const std::string any = ".*";
  server_->Get(any, dispatch);
  server_->Post(any, dispatch);
  server_->Patch(any, dispatch);
  server_->Delete(any, dispatch);
  server_->Put(any, dispatch);
  MT_ASSIGN_OR_RETURN(port_, BindAndServe(*server_, options_,
                                          "the node's admin port", &thread_));
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
