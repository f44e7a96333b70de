#include "admin_server/admin_server.h"

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>

#include "admin_server/admin_routes.h"
#include "admin_server/http_listener.h"
#include "httplib.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::admin {
namespace {

// Compares without an early exit, so the time taken does not reveal how
// much of a guessed token was right.
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? a[i] : 0;
    const unsigned char y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

void Write(const AdminResponse& response, httplib::Response& res) {
  res.status = response.status;
  res.set_content(response.body, response.content_type.c_str());
}

// The body of an error httplib raised itself (before any route ran).
AdminResponse EdgeError(int status) {
  switch (status) {
    case 400:
      return AdminResponse::BadRequest("malformed request", "BAD_REQUEST");
    case 404:
      return AdminResponse::Error(404, "NOT_FOUND", "ROUTE_NOT_FOUND",
                                  "no such route");
    case 413:
      return AdminResponse::Error(413, "RESOURCE_EXHAUSTED",
                                  "PAYLOAD_TOO_LARGE",
                                  "the request body is too large");
    case 414:
      return AdminResponse::Error(414, "RESOURCE_EXHAUSTED", "URI_TOO_LONG",
                                  "the request URI is too long");
    default:
      return AdminResponse::Error(status, "UNKNOWN", "HTTP_ERROR",
                                  "HTTP status " + std::to_string(status));
  }
}

// The path as sent, before httplib decoded it (so %2F stays inside a key).
std::string RawPath(const httplib::Request& req) {
  const std::string& target = req.target.empty() ? req.path : req.target;
  return target.substr(0, target.find('?'));
}

}  // namespace

bool IsLoopbackAddress(const std::string& address) {
  if (address == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  return inet_pton(AF_INET6, address.c_str(), &v6) == 1 &&
         IN6_IS_ADDR_LOOPBACK(&v6);
}

AdminServer::AdminServer(AdminServerOptions options, Site site,
                         AdminFacade* facade, MetricsSource metrics,
                         rpc::CallRecorder* requests)
    : options_(std::move(options)),
      facade_(facade),
      metrics_(std::move(metrics)),
      requests_(requests),
      routes_(std::move(site.routes)),
      unrouted_(std::move(site.unrouted)),
      what_(std::move(site.what)) {}

std::vector<std::string> AdminServer::RouteNames() {
  return RouteNames(BuildAdminRoutes());
}

std::vector<std::string> AdminServer::RouteNames(const RouteTable& routes) {
  std::vector<std::string> names;
  for (const AdminRoute& route : routes.routes()) {
    names.push_back(route.method + " " + route.pattern);
  }
  return names;
}

AdminServer::~AdminServer() { Shutdown(); }

Result<std::unique_ptr<AdminServer>> AdminServer::Start(
    AdminServerOptions options, AdminFacade* facade, MetricsSource metrics,
    rpc::CallRecorder* requests) {
  if (facade == nullptr) {
    return Status(ErrorReason::kInvalidArgument,
                  "admin server without a facade");
  }
  return StartSite(std::move(options), Site{BuildAdminRoutes(), {}}, facade,
                   std::move(metrics), requests);
}

Result<std::unique_ptr<AdminServer>> AdminServer::StartSite(
    AdminServerOptions options, Site site, AdminFacade* facade,
    MetricsSource metrics, rpc::CallRecorder* requests) {
  MT_RETURN_IF_ERROR(CheckListenerOptions(options, site.what));
  if (requests != nullptr &&
      requests->method_count() != site.routes.routes().size()) {
    return Status(ErrorReason::kInvalidArgument,
                  "the request recorder must be built with RouteNames()");
  }
  std::unique_ptr<AdminServer> server(
      new AdminServer(std::move(options), std::move(site), facade,
                      std::move(metrics), requests));
  MT_RETURN_IF_ERROR(server->Listen());
  return server;
}

void AdminServer::InstallHandlers() {
  ConfigureListener(*server_, options_);
  const size_t max_header = options_.max_header_bytes;
  server_->set_pre_routing_handler([max_header](const httplib::Request& req,
                                                httplib::Response& res) {
    size_t bytes = 0;
    for (const auto& [name, value] : req.headers) {
      bytes += name.size() + value.size();
    }
    if (bytes <= max_header) return httplib::Server::HandlerResponse::Unhandled;
    Write(AdminResponse::Error(431, "RESOURCE_EXHAUSTED", "HEADERS_TOO_LARGE",
                               "request headers are too large"),
          res);
    return httplib::Server::HandlerResponse::Handled;
  });
  server_->set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        Write(EdgeError(res.status), res);
        return httplib::Server::HandlerResponse::Handled;
      }));
  server_->set_exception_handler([](const httplib::Request& req,
                                    httplib::Response& res,
                                    std::exception_ptr) {
    spdlog::error("admin: {} {} failed with an exception", req.method,
                  req.path);
    Write(
        AdminResponse::Error(500, "INTERNAL", "INTERNAL", "the handler failed"),
        res);
  });
  auto dispatch = [this](const httplib::Request& req, httplib::Response& res) {
    Dispatch(req, res);
  };
  const std::string any = ".*";
  server_->Get(any, dispatch);
  server_->Post(any, dispatch);
  server_->Patch(any, dispatch);
  server_->Delete(any, dispatch);
  server_->Put(any, dispatch);
}

Status AdminServer::Listen() {
  server_ = std::make_unique<httplib::Server>();
  InstallHandlers();
  MT_ASSIGN_OR_RETURN(port_, BindAndServe(*server_, options_, what_, &thread_));
  spdlog::info("admin: serving {} on http://{}:{}{}", what_,
               options_.bind_address, port_,
               options_.token.empty() ? "" : " (token required)");
  return Status::Ok();
}

namespace {

// Routes a standby answers itself: its health, role, metrics and help.
bool ServedByStandby(const AdminRoute& route) {
  return !route.mutating &&
         (route.pattern == "/api/v1/status" || route.pattern == "/healthz" ||
          route.pattern == "/readyz" || route.pattern == "/metrics" ||
          route.pattern == "/api/v1/help");
}

}  // namespace

void AdminServer::Dispatch(const httplib::Request& req,
                           httplib::Response& res) const {
  AdminRequest request;
  request.method = req.method;
  request.path = RawPath(req);
  const AdminRoute* route = nullptr;
  switch (routes_.Match(req.method, request.path, &route, &request.params)) {
    case RouteTable::MatchResult::kMatched:
      break;
    case RouteTable::MatchResult::kNoPath:
      return Write(unrouted_ ? unrouted_(request.path) : EdgeError(404), res);
    case RouteTable::MatchResult::kWrongMethod:
      return Write(AdminResponse::Error(
                       405, "INVALID_ARGUMENT", "METHOD_NOT_ALLOWED",
                       req.method + " is not allowed on " + request.path),
                   res);
    case RouteTable::MatchResult::kBadEncoding:
      return Write(
          AdminResponse::BadRequest("malformed percent-encoding in the path",
                                    "BAD_ENCODING"),
          res);
  }
  const auto start = std::chrono::steady_clock::now();
  const AdminResponse response = Serve(*route, request, req, res);
  Write(response, res);
  if (requests_ != nullptr) {
    requests_->Record(static_cast<size_t>(route - routes_.routes().data()),
                      CanonicalCodeOfHttp(response.status),
                      std::chrono::steady_clock::now() - start);
  }
}

AdminResponse AdminServer::Serve(const AdminRoute& route, AdminRequest& request,
                                 const httplib::Request& req,
                                 httplib::Response& res) const {
  if (route.mutating && !options_.token.empty() &&
      !SameSecret(req.get_header_value("Authorization"),
                  "Bearer " + options_.token)) {
    spdlog::warn("admin: {} {} refused: no valid admin token", req.method,
                 request.path);
    res.set_header("WWW-Authenticate", "Bearer");
    return AdminResponse::Error(
        401, "UNAUTHENTICATED", "TOKEN_REQUIRED",
        "this route needs 'Authorization: Bearer <admin token>'");
  }
  if (std::optional<ClusterRole> role =
          facade_ ? facade_->Role() : std::nullopt;
      role && !role->leader && !ServedByStandby(route)) {
    // 421 Misdirected Request: this master holds no data; ask the leader.
    if (!role->leader_admin.empty()) {
      res.set_header("X-Mooncake-Leader", role->leader_admin);
    }
    return AdminResponse::Error(
        421, "UNAVAILABLE", "NOT_LEADER",
        "this master is a standby of cluster '" + role->cluster + "'; " +
            (role->leader_rpc.empty()
                 ? std::string("no leader is known")
                 : "the leader serves gRPC at " + role->leader_rpc +
                       (role->leader_admin.empty()
                            ? std::string()
                            : " and its admin API at http://" +
                                  role->leader_admin)));
  }
  for (const auto& [name, value] : req.params) {
    request.query.emplace(name, value);
  }
  request.body = req.body;
  AdminContext context{facade_, metrics_, [this] { return ready_.load(); },
                       &routes_};
  AdminResponse response = route.handler(request, context);
  if (route.mutating) {
    spdlog::info("admin: {} {} -> {}", req.method, request.path,
                 response.status);
  }
  return response;
}

void AdminServer::Shutdown() {
  if (server_ == nullptr) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace mooncake_tier::admin
