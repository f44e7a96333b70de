#include "admin_server/route_table.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "admin_server/admin_routes.h"

namespace mooncake_tier::admin {
namespace route_table_test {
namespace {

AdminResponse Nothing(const AdminRequest&, AdminContext&) { return {}; }

TEST(RouteTableTest, MatchesRawSegmentsAndDecodesParams) {
  RouteTable table;
  table.Add({"GET", "/api/v1/objects/{key}", "h", false, Nothing});
  table.Add({"POST", "/api/v1/objects/{key}/promote", "h", true, Nothing});
  const AdminRoute* route = nullptr;
  std::map<std::string, std::string> params;
  ASSERT_EQ(
      table.Match("GET", "/api/v1/objects/a%2Fb%20c%E2%82%AC", &route, &params),
      RouteTable::MatchResult::kMatched);
  EXPECT_EQ(route->pattern, "/api/v1/objects/{key}");
  EXPECT_EQ(params.at("key"), "a/b c\xE2\x82\xAC");
  ASSERT_EQ(table.Match("POST", "/api/v1/objects/x%2Fpromote/promote", &route,
                        &params),
            RouteTable::MatchResult::kMatched);
  EXPECT_EQ(params.at("key"), "x/promote");
  EXPECT_EQ(table.Match("DELETE", "/api/v1/objects/k", &route, &params),
            RouteTable::MatchResult::kWrongMethod);
  EXPECT_EQ(table.Match("GET", "/api/v1/objects/", &route, &params),
            RouteTable::MatchResult::kNoPath);
  EXPECT_EQ(table.Match("GET", "/api/v1/objects/a/b", &route, &params),
            RouteTable::MatchResult::kNoPath);
  EXPECT_EQ(table.Match("GET", "/api/v1/objects/%4", &route, &params),
            RouteTable::MatchResult::kBadEncoding);
}

TEST(RouteTableTest, PercentCodingRoundTrips) {
  const std::string all = [] {
    std::string s;
    for (int c = 1; c < 256; ++c) s.push_back(static_cast<char>(c));
    return s;
  }();
  EXPECT_EQ(PercentDecode(PercentEncode(all)), all);
  EXPECT_EQ(PercentEncode("a/b c"), "a%2Fb%20c");
  EXPECT_EQ(PercentDecode("a+b"), "a+b");
  EXPECT_FALSE(PercentDecode("%G0").has_value());
  EXPECT_FALSE(PercentDecode("%").has_value());
  EXPECT_FALSE(PercentDecode("ab%2").has_value());
}

TEST(RouteTableTest, EveryRouteIsUniqueAndMutatingMeansNotGet) {
  const RouteTable table = BuildAdminRoutes();
  std::set<std::pair<std::string, std::string>> seen;
  for (const AdminRoute& route : table.routes()) {
    EXPECT_TRUE(seen.emplace(route.method, route.pattern).second)
        << route.method << " " << route.pattern;
    EXPECT_EQ(route.mutating, route.method != "GET") << route.pattern;
    EXPECT_FALSE(route.help.empty()) << route.pattern;
    EXPECT_TRUE(route.handler) << route.pattern;
  }
}

// The (method, path) pairs of an OpenAPI 3 YAML document: a path is a
// two-space-indented key under `paths:`, a method a four-space-indented
// get/post/patch/delete/put key under it.
std::set<std::pair<std::string, std::string>> OpenApiRoutes(
    const std::string& file) {
  std::ifstream in(file);
  EXPECT_TRUE(in.good()) << file;
  std::set<std::pair<std::string, std::string>> routes;
  std::string line, path;
  bool in_paths = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '#') {
      in_paths = line.rfind("paths:", 0) == 0;
      continue;
    }
    if (!in_paths) continue;
    if (line.rfind("  /", 0) == 0 && line.back() == ':') {
      path = line.substr(2, line.size() - 3);
      continue;
    }
    for (const char* method : {"get", "post", "patch", "delete", "put"}) {
      if (line == std::string("    ") + method + ":") {
        std::string upper = method;
        for (char& c : upper) c = static_cast<char>(std::toupper(c));
        routes.emplace(upper, path);
      }
    }
  }
  return routes;
}

TEST(RouteTableTest, OpenApiDocumentListsTheSameRoutes) {
  const auto documented = OpenApiRoutes(std::string(MOONCAKE_TIER_SOURCE_DIR) +
                                        "/docs/admin-api.yaml");
  const RouteTable table = BuildAdminRoutes();
  std::set<std::pair<std::string, std::string>> served;
  for (const AdminRoute& route : table.routes()) {
    served.emplace(route.method, route.pattern);
  }
  for (const auto& route : served) {
    EXPECT_TRUE(documented.contains(route))
        << "not in docs/admin-api.yaml: " << route.first << " " << route.second;
  }
  for (const auto& route : documented) {
    EXPECT_TRUE(served.contains(route))
        << "documented but not served: " << route.first << " " << route.second;
  }
}

}  // namespace
}  // namespace route_table_test
}  // namespace mooncake_tier::admin
