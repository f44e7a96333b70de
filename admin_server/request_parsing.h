#pragma once

// Parsing of query parameters and bodies shared by the handlers; every
// failure is INVALID_ARGUMENT with a message naming the parameter, so
// handlers turn it into a 400 as is.
//
// Lists page by cursor: `limit` (default kDefaultPageLimit, at most
// kMaxPageLimit) and `cursor`, the opaque string a previous page returned
// as next_cursor. Nodes and tasks page in ascending id order, the cursor
// being the last id returned, so a page never repeats or skips an item that
// exists for the whole listing.
//
// Thread safety: pure functions.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin_server/admin_route.h"
#include "mooncake_tier/status.h"
#include "nlohmann/json.hpp"

// In a handler: returns the error response of a non-OK Status.
#define MT_RESPOND_IF_ERROR(expr)                                            \
  do {                                                                       \
    ::mooncake_tier::Status mt_admin_status_ = (expr);                       \
    if (!mt_admin_status_.ok()) {                                            \
      return ::mooncake_tier::admin::AdminResponse::Error(mt_admin_status_); \
    }                                                                        \
  } while (false)

// In a handler: `lhs = value of expr` (a Result<T>), or returns the error
// response of its Status.
#define MT_ASSIGN_OR_RESPOND(lhs, expr)                                        \
  MT_ASSIGN_OR_RESPOND_IMPL(MT_STATUS_CONCAT(mt_admin_result_, __LINE__), lhs, \
                            expr)
#define MT_ASSIGN_OR_RESPOND_IMPL(tmp, lhs, expr)                      \
  auto tmp = (expr);                                                   \
  if (!tmp.ok())                                                       \
    return ::mooncake_tier::admin::AdminResponse::Error(tmp.status()); \
  lhs = std::move(tmp).value()

namespace mooncake_tier::admin {

inline constexpr size_t kDefaultPageLimit = 100;
inline constexpr size_t kMaxPageLimit = 1000;

// The query of a request target ("/path?a=1&b=x%20y"): names and values
// percent-decoded, '+' read as a space; the first value of a repeated name
// wins; no '?' is an empty query. nullopt for a malformed escape.
std::optional<std::map<std::string, std::string>> ParseQuery(
    std::string_view target);

// A decimal unsigned integer, nothing else (no sign, no spaces).
Result<uint64_t> ParseUint(std::string_view text, std::string_view what);
// "true" | "false" | "1" | "0".
Result<bool> ParseBool(std::string_view text, std::string_view what);
// Query parameter `name` as above, or `fallback` when absent.
Result<bool> QueryBool(const AdminRequest& request, const std::string& name,
                       bool fallback);
// `limit` in 1..kMaxPageLimit.
Result<size_t> PageLimit(const AdminRequest& request);
// `cursor` as an id (0 = from the start).
Result<uint64_t> IdCursor(const AdminRequest& request);
// The body as a JSON object.
Result<nlohmann::json> JsonObjectBody(const AdminRequest& request);
// Fails on a query parameter not in `allowed`.
Status OnlyQuery(const AdminRequest& request,
                 std::initializer_list<std::string_view> allowed);

// One page of `items` sorted by `id(item)`: those with id > `after`, at
// most `limit`; `*next_cursor` is the last id when more remain, else "".
template <typename T, typename IdFn>
std::vector<T> PageById(std::vector<T> items, IdFn id, uint64_t after,
                        size_t limit, std::string* next_cursor) {
  std::sort(items.begin(), items.end(),
            [&](const T& a, const T& b) { return id(a) < id(b); });
  auto first = std::upper_bound(
      items.begin(), items.end(), after,
      [&](uint64_t value, const T& item) { return value < id(item); });
  const size_t left = static_cast<size_t>(items.end() - first);
  const size_t take = std::min(left, limit);
  std::vector<T> page(std::make_move_iterator(first),
                      std::make_move_iterator(first + take));
  *next_cursor = take < left && !page.empty() ? std::to_string(id(page.back()))
                                              : std::string();
  return page;
}

}  // namespace mooncake_tier::admin
