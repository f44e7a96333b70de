#pragma once

// The admin API's one route table (Envoy source/server/admin/): every route
// with its method, path pattern, help text and whether it mutates. The
// server dispatches through Match(); GET /api/v1/help renders Help(); a
// test checks docs/admin-api.yaml lists the same routes.
//
// Patterns are literal segments and {param} segments. Matching works on the
// raw (still percent-encoded) path, one segment per param, and decodes each
// param afterwards, so a key may hold '/', spaces or any byte as long as
// the client encodes them (%2F, %20, ...).
//
// Thread safety: built once before serving; Match and Help are const and
// thread-safe.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin_server/admin_route.h"
#include "nlohmann/json.hpp"

namespace mooncake_tier::admin {

class RouteTable {
 public:
  void Add(AdminRoute route);

  enum class MatchResult { kMatched, kNoPath, kWrongMethod, kBadEncoding };
  // Finds the route for `method` and the raw `path` (no query string) and
  // fills `*params` with its decoded params.
  MatchResult Match(std::string_view method, std::string_view path,
                    const AdminRoute** route,
                    std::map<std::string, std::string>* params) const;

  const std::vector<AdminRoute>& routes() const { return routes_; }
  // {"routes":[{"method","path","help","mutating"}...]}
  nlohmann::json Help() const;

 private:
  std::vector<AdminRoute> routes_;
};

// Decodes %XX escapes ('+' stays '+'). nullopt for a malformed escape.
std::optional<std::string> PercentDecode(std::string_view text);
// Encodes every byte outside [A-Za-z0-9-._~] (for building paths).
std::string PercentEncode(std::string_view text);

}  // namespace mooncake_tier::admin
