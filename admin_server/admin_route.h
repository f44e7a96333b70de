#pragma once

// The vocabulary of the admin HTTP API, kept apart from the HTTP edge so the
// route table and the handlers can be read (and tested) without a server:
// a parsed request, a response, and a route (method, path pattern, help,
// whether it mutates, handler).
//
// Thread safety: values; handlers must be thread-safe (they run on the
// edge's lanes).

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "admin_server/admin_facade.h"
#include "mooncake_tier/status.h"
#include "nlohmann/json.hpp"

namespace mooncake_tier::admin {

class RouteTable;

struct AdminRequest {
  std::string method;  // "GET", "POST", "PATCH", "DELETE"
  std::string path;    // as received (still percent-encoded)
  // Values of the pattern's {params}, percent-decoded.
  std::map<std::string, std::string> params;
  // Query parameters, decoded; the first value of a repeated name.
  std::map<std::string, std::string> query;
  std::string body;
};

struct AdminResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Further header fields (WWW-Authenticate, X-Mooncake-Leader, ...).
  std::vector<std::pair<std::string, std::string>> headers;

  static AdminResponse Json(int status, const nlohmann::json& body);
  static AdminResponse Text(int status, std::string body,
                            std::string content_type = "text/plain");
  // The contract's error body, {"error":{"code","reason","message"}}, with
  // the HTTP status of the status' canonical code (HttpStatusOf).
  static AdminResponse Error(const Status& status);
  // An error of the HTTP edge itself (no engine reason): e.g. 404
  // NOT_FOUND/ROUTE_NOT_FOUND, 401 UNAUTHENTICATED/TOKEN_REQUIRED.
  static AdminResponse Error(int http_status, std::string_view code,
                             std::string_view reason, std::string_view message);
  // 400 INVALID_ARGUMENT/<reason>.
  static AdminResponse BadRequest(std::string_view message,
                                  std::string_view reason = "INVALID_ARGUMENT");
  // 501 NOT_IMPLEMENTED/NOT_IMPLEMENTED for an operation the engine lacks.
  static AdminResponse NotImplemented(FacadeOp op);
};

// What a handler may use: the facade and, for /metrics, /readyz and
// /api/v1/help, the server's own state.
struct AdminContext {
  AdminFacade* facade = nullptr;
  std::function<std::string()> metrics;  // may be empty
  std::function<bool()> ready;
  const RouteTable* routes = nullptr;
};

using AdminHandler =
    std::function<AdminResponse(const AdminRequest&, AdminContext&)>;

struct AdminRoute {
  std::string method;   // "GET", "POST", "PATCH", "DELETE"
  std::string pattern;  // "/api/v1/objects/{key}/promote"
  std::string help;
  bool mutating = false;  // needs the admin token
  AdminHandler handler;
};

// HTTP status for a canonical code (the one place it is decided).
int HttpStatusOf(StatusCode code);
// The gRPC canonical code (0..16) an HTTP status stands for, for request
// metrics labelled like the RPCs'.
int CanonicalCodeOfHttp(int http_status);

}  // namespace mooncake_tier::admin
