#include "admin_server/admin_server.h"

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string_view>

#include "admin_server/admin_routes.h"
#include "admin_server/request_parsing.h"
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

AdminResponse NotFound() {
  return AdminResponse::Error(404, "NOT_FOUND", "ROUTE_NOT_FOUND",
                              "no such route");
}

// Where a route runs on the edge: health from memory on its I/O thread,
// metrics on a lane of their own, the API on the rest.
HttpLane LaneOf(const AdminRoute& route) {
  if (route.pattern == "/healthz" || route.pattern == "/readyz") {
    return HttpLane::kInline;
  }
  return route.pattern == "/metrics" ? HttpLane::kObserve : HttpLane::kApi;
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
  if (options.token.empty() && !IsLoopbackAddress(options.bind_address)) {
    return Status(ErrorReason::kInvalidArgument,
                  "refusing to serve " + site.what + " on '" +
                      options.bind_address +
                      "' without an admin token: set --admin-token or bind "
                      "a loopback address");
  }
  if (requests != nullptr &&
      requests->method_count() != site.routes.routes().size()) {
    return Status(ErrorReason::kInvalidArgument,
                  "the request recorder must be built with RouteNames()");
  }
  std::unique_ptr<AdminServer> server(new AdminServer(
      options, std::move(site), facade, std::move(metrics), requests));
  MT_ASSIGN_OR_RETURN(server->edge_,
                      HttpEdge::Start(options, server.get(), server->what_));
  spdlog::info("admin: serving {} on {}://{}:{}{}", server->what_,
               options.tls ? "https" : "http", options.bind_address,
               server->port(),
               options.token.empty() ? "" : " (token required)");
  return server;
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

std::optional<AdminResponse> AdminServer::Route(
    const HttpHead& head, AdminRequest* request,
    const AdminRoute** route) const {
  request->method = head.method;
  request->path = head.target.substr(0, head.target.find('?'));
  switch (routes_.Match(head.method, request->path, route, &request->params)) {
    case RouteTable::MatchResult::kMatched:
      return std::nullopt;
    case RouteTable::MatchResult::kNoPath:
      return unrouted_ ? unrouted_(request->path) : NotFound();
    case RouteTable::MatchResult::kWrongMethod:
      return AdminResponse::Error(
          405, "INVALID_ARGUMENT", "METHOD_NOT_ALLOWED",
          head.method + " is not allowed on " + request->path);
    case RouteTable::MatchResult::kBadEncoding:
      return AdminResponse::BadRequest("malformed percent-encoding in the path",
                                       "BAD_ENCODING");
  }
  return NotFound();
}

HttpAdmission AdminServer::Admit(const HttpHead& head) {
  HttpAdmission admission;
  AdminRequest request;
  const AdminRoute* route = nullptr;
  if (std::optional<AdminResponse> answer = Route(head, &request, &route)) {
    admission.answer = std::move(answer);
    return admission;
  }
  if (route->mutating && !options_.token.empty() &&
      !SameSecret(head.Header("Authorization"), "Bearer " + options_.token)) {
    AdminResponse refused = AdminResponse::Error(
        401, "UNAUTHENTICATED", "TOKEN_REQUIRED",
        "this route needs 'Authorization: Bearer <admin token>'");
    refused.headers.emplace_back("WWW-Authenticate", "Bearer");
    if (requests_ != nullptr) {
      requests_->Record(static_cast<size_t>(route - routes_.routes().data()),
                        CanonicalCodeOfHttp(401), std::chrono::nanoseconds(0));
    }
    admission.answer = std::move(refused);
    admission.refusal = HttpRefusal::kUnauthenticated;
    return admission;
  }
  admission.lane = LaneOf(*route);
  return admission;
}

AdminResponse AdminServer::Handle(const HttpHead& head, std::string body) {
  AdminRequest request;
  const AdminRoute* route = nullptr;
  if (std::optional<AdminResponse> answer = Route(head, &request, &route)) {
    return *answer;
  }
  std::optional<std::map<std::string, std::string>> query =
      ParseQuery(head.target);
  if (!query) {
    return AdminResponse::BadRequest("malformed percent-encoding in the query",
                                     "BAD_ENCODING");
  }
  request.query = std::move(*query);
  request.body = std::move(body);
  const auto start = std::chrono::steady_clock::now();
  AdminResponse response = Serve(*route, request);
  if (requests_ != nullptr) {
    requests_->Record(static_cast<size_t>(route - routes_.routes().data()),
                      CanonicalCodeOfHttp(response.status),
                      std::chrono::steady_clock::now() - start);
  }
  return response;
}

AdminResponse AdminServer::Serve(const AdminRoute& route,
                                 AdminRequest& request) const {
  if (std::optional<ClusterRole> role =
          facade_ ? facade_->Role() : std::nullopt;
      role && !role->leader && !ServedByStandby(route)) {
    // 421 Misdirected Request: this master holds no data; ask the leader.
    AdminResponse response = AdminResponse::Error(
        421, "UNAVAILABLE", "NOT_LEADER",
        "this master is a standby of cluster '" + role->cluster + "'; " +
            (role->leader_rpc.empty()
                 ? std::string("no leader is known")
                 : "the leader serves gRPC at " + role->leader_rpc +
                       (role->leader_admin.empty()
                            ? std::string()
                            : " and its admin API at http://" +
                                  role->leader_admin)));
    if (!role->leader_admin.empty()) {
      response.headers.emplace_back("X-Mooncake-Leader", role->leader_admin);
    }
    return response;
  }
  AdminContext context{facade_, metrics_, [this] { return ready_.load(); },
                       &routes_};
  AdminResponse response = route.handler(request, context);
  if (route.mutating) {
    spdlog::info("admin: {} {} -> {}", request.method, request.path,
                 response.status);
  }
  return response;
}

void AdminServer::Shutdown() {
  if (edge_ != nullptr) edge_->Shutdown();
}

}  // namespace mooncake_tier::admin
