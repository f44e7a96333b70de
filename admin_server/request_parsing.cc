#include "admin_server/request_parsing.h"

#include <charconv>

#include "admin_server/route_table.h"

namespace mooncake_tier::admin {
namespace {}  // namespace

std::optional<std::map<std::string, std::string>> ParseQuery(
    std::string_view target) {
  std::map<std::string, std::string> query;
  const size_t mark = target.find('?');
  if (mark == std::string_view::npos) return query;
  std::string_view rest = target.substr(mark + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view()
                                         : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    std::string name(pair.substr(0, eq));
    std::string value(eq == std::string_view::npos ? std::string_view()
                                                   : pair.substr(eq + 1));
    std::replace(name.begin(), name.end(), '+', ' ');
    std::replace(value.begin(), value.end(), '+', ' ');
    std::optional<std::string> decoded_name = PercentDecode(name);
    std::optional<std::string> decoded_value = PercentDecode(value);
    if (!decoded_name || !decoded_value) return std::nullopt;
    query.emplace(std::move(*decoded_name), std::move(*decoded_value));
  }
  return query;
}

Result<uint64_t> ParseUint(std::string_view text, std::string_view what) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return Status::InvalidArgument(std::string(what) +
                                   " must be an unsigned integer, got '" +
                                   std::string(text) + "'");
  }
  return value;
}

Result<bool> ParseBool(std::string_view text, std::string_view what) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return Status::InvalidArgument(std::string(what) +
                                 " must be true or false, got '" +
                                 std::string(text) + "'");
}

Result<bool> QueryBool(const AdminRequest& request, const std::string& name,
                       bool fallback) {
  auto it = request.query.find(name);
  if (it == request.query.end()) return fallback;
  return ParseBool(it->second, name);
}

Result<size_t> PageLimit(const AdminRequest& request) {
  auto it = request.query.find("limit");
  if (it == request.query.end()) return kDefaultPageLimit;
  MT_ASSIGN_OR_RETURN(uint64_t limit, ParseUint(it->second, "limit"));
  if (limit == 0 || limit > kMaxPageLimit) {
    return Status::InvalidArgument("limit must be 1.." +
                                   std::to_string(kMaxPageLimit));
  }
  return static_cast<size_t>(limit);
}

Result<uint64_t> IdCursor(const AdminRequest& request) {
  auto it = request.query.find("cursor");
  if (it == request.query.end() || it->second.empty()) return uint64_t{0};
  return ParseUint(it->second, "cursor");
}

Result<nlohmann::json> JsonObjectBody(const AdminRequest& request) {
  nlohmann::json body = nlohmann::json::parse(request.body, nullptr,
                                              /*allow_exceptions=*/false);
  if (body.is_discarded())
    return Status::InvalidArgument("the body is not valid JSON");
  if (!body.is_object())
    return Status::InvalidArgument("the body must be a JSON object");
  return body;
}

Status OnlyQuery(const AdminRequest& request,
                 std::initializer_list<std::string_view> allowed) {
  for (const auto& [name, value] : request.query) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return Status::InvalidArgument("unknown query parameter '" + name + "'");
    }
  }
  return Status::Ok();
}

}  // namespace mooncake_tier::admin
