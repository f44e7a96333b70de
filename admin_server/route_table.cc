#include "admin_server/route_table.h"

namespace mooncake_tier::admin {
namespace {

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path[0] != '/') return out;
  path.remove_prefix(1);
  while (true) {
    const size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool IsParam(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Does `path` fit `pattern`? Fills params (decoded) when it does.
// kBadEncoding when it fits but a param does not decode.
RouteTable::MatchResult Fit(std::string_view pattern,
                            const std::vector<std::string_view>& path,
                            std::map<std::string, std::string>* params) {
  const std::vector<std::string_view> want = Segments(pattern);
  if (want.size() != path.size()) return RouteTable::MatchResult::kNoPath;
  std::map<std::string, std::string> found;
  bool bad = false;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!IsParam(want[i])) {
      if (want[i] != path[i]) return RouteTable::MatchResult::kNoPath;
      continue;
    }
    if (path[i].empty()) return RouteTable::MatchResult::kNoPath;
    std::optional<std::string> value = PercentDecode(path[i]);
    if (!value) {
      bad = true;
      continue;
    }
    found[std::string(want[i].substr(1, want[i].size() - 2))] =
        std::move(*value);
  }
  if (bad) return RouteTable::MatchResult::kBadEncoding;
  *params = std::move(found);
  return RouteTable::MatchResult::kMatched;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = HexValue(text[i + 1]);
    const int lo = HexValue(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
        (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

void RouteTable::Add(AdminRoute route) { routes_.push_back(std::move(route)); }

RouteTable::MatchResult RouteTable::Match(
    std::string_view method, std::string_view path, const AdminRoute** route,
    std::map<std::string, std::string>* params) const {
  const std::vector<std::string_view> segments = Segments(path);
  MatchResult best = MatchResult::kNoPath;
  for (const AdminRoute& candidate : routes_) {
    std::map<std::string, std::string> found;
    const MatchResult fit = Fit(candidate.pattern, segments, &found);
    if (fit == MatchResult::kNoPath) continue;
    if (candidate.method != method) {
      if (best == MatchResult::kNoPath) best = MatchResult::kWrongMethod;
      continue;
    }
    if (fit == MatchResult::kBadEncoding) return fit;
    *route = &candidate;
    *params = std::move(found);
    return MatchResult::kMatched;
  }
  return best;
}

nlohmann::json RouteTable::Help() const {
  nlohmann::json routes = nlohmann::json::array();
  for (const AdminRoute& route : routes_) {
    routes.push_back({{"method", route.method},
                      {"path", route.pattern},
                      {"help", route.help},
                      {"mutating", route.mutating}});
  }
  return {{"routes", std::move(routes)}};
}

}  // namespace mooncake_tier::admin
