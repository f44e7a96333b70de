#include "admin_server/admin_server.h"

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>

#include "admin_server/admin_routes.h"
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

AdminServer::AdminServer(AdminServerOptions options, AdminFacade* facade,
                         MetricsSource metrics, rpc::CallRecorder* requests)
    : options_(std::move(options)),
      facade_(facade),
      metrics_(std::move(metrics)),
      requests_(requests),
      routes_(BuildAdminRoutes()) {}

std::vector<std::string> AdminServer::RouteNames() {
  const RouteTable table = BuildAdminRoutes();
  std::vector<std::string> names;
  for (const AdminRoute& route : table.routes()) {
    names.push_back(route.method + " " + route.pattern);
  }
  return names;
}

AdminServer::~AdminServer() { Shutdown(); }

Result<std::unique_ptr<AdminServer>> AdminServer::Start(
    AdminServerOptions options, AdminFacade* facade, MetricsSource metrics,
    rpc::CallRecorder* requests) {
  if (options.token.empty() && !IsLoopbackAddress(options.bind_address)) {
    return Status(ErrorReason::kInvalidArgument,
                  "refusing to serve the admin API on '" +
                      options.bind_address +
                      "' without an admin token: set --admin-token or bind "
                      "a loopback address");
  }
  if (options.max_body_bytes == 0 || options.max_header_bytes == 0 ||
      options.threads == 0 || options.keep_alive_seconds <= 0 ||
      facade == nullptr) {
    return Status(ErrorReason::kInvalidArgument,
                  "admin server limits and threads must be positive");
  }
  if (requests != nullptr &&
      requests->method_count() != BuildAdminRoutes().routes().size()) {
    return Status(ErrorReason::kInvalidArgument,
                  "the request recorder must be built with RouteNames()");
  }
  std::unique_ptr<AdminServer> server(new AdminServer(
      std::move(options), facade, std::move(metrics), requests));
  MT_RETURN_IF_ERROR(server->Listen());
  return server;
}

void AdminServer::InstallHandlers() {
  const size_t threads = options_.threads;
  server_->new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  server_->set_payload_max_length(options_.max_body_bytes);
  server_->set_keep_alive_timeout(options_.keep_alive_seconds);
  // The server writes headers and body separately; with Nagle on, a small
  // body waits for the client's delayed ACK (~40 ms on Linux) on every
  // keep-alive request (measured by bench `admin`).
  server_->set_tcp_nodelay(true);
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
  int port = options_.port == 0
                 ? server_->bind_to_any_port(options_.bind_address)
                 : (server_->bind_to_port(options_.bind_address, options_.port)
                        ? options_.port
                        : -1);
  if (port <= 0) {
    return Status(ErrorReason::kUnavailable, "cannot bind the admin API to " +
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
  spdlog::info("admin: serving on http://{}:{}{}", options_.bind_address, port_,
               options_.token.empty() ? "" : " (token required)");
  return Status::Ok();
}

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
      return Write(EdgeError(404), res);
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
