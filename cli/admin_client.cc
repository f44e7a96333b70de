#include "cli/admin_client.h"

#include <charconv>
#include <chrono>
#include <set>
#include <utility>

#include "httplib.h"

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;

// The Status a failed answer maps to: the server's reason when the client
// library knows it (OBJECT_NOT_FOUND, OBJECT_LEASED, ...), else the
// closest by HTTP status. Only a 404 with a known not-found reason (a
// thing that does not exist) is NOT_FOUND (exit 3); any other 404 (no
// route, SERVED_BY_MASTER, a proxy's page) means the endpoint is not this
// API and is an error (exit 1).
ErrorReason ReasonOf(int http_status, const std::string& reason) {
  const ErrorReason known = ReasonFromName(reason);
  if (known != ErrorReason::kInternal || reason == "INTERNAL") return known;
  switch (http_status) {
    case 400:
    case 404:
    case 405:
      return ErrorReason::kInvalidArgument;
    case 401:
    case 403:
      return ErrorReason::kUnauthenticated;
    case 409:
      return ErrorReason::kNotApplicable;
    case 413:
    case 429:
    case 431:
      return ErrorReason::kQueueFull;
    case 501:
    case 503:
      return ErrorReason::kUnavailable;
    case 504:
      return ErrorReason::kTimeout;
    default:
      return ErrorReason::kInternal;
  }
}

const char* MethodName(int method) {
  static constexpr const char* kNames[] = {"GET", "POST", "PATCH", "DELETE"};
  return kNames[method];
}

std::string WithQuery(const std::string& path, const ListQuery& query,
                      const std::string& cursor) {
  std::string out = path + "?limit=" + std::to_string(query.limit);
  if (!cursor.empty()) out += "&cursor=" + PercentEncode(cursor);
  if (!query.state.empty()) out += "&state=" + PercentEncode(query.state);
  return out;
}

}  // namespace

std::string AdminEndpoint::ToString() const {
  return scheme + "://" + host + ":" + std::to_string(port) + prefix;
}

Result<AdminEndpoint> ParseEndpoint(std::string_view url) {
  AdminEndpoint endpoint;
  std::string_view rest = url;
  const size_t scheme_end = rest.find("://");
  if (scheme_end == std::string_view::npos) {
    endpoint.scheme = "http";
  } else {
    endpoint.scheme = std::string(rest.substr(0, scheme_end));
    rest.remove_prefix(scheme_end + 3);
  }
  if (endpoint.scheme != "http" && endpoint.scheme != "https") {
    return Status::InvalidArgument("endpoint '" + std::string(url) +
                                   "': the scheme must be http or https");
  }
  const size_t path_start = rest.find('/');
  std::string_view authority = rest.substr(0, path_start);
  if (path_start != std::string_view::npos) {
    std::string_view prefix = rest.substr(path_start);
    while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
    endpoint.prefix = std::string(prefix);
  }
  if (authority.find_first_of("?#@ ") != std::string_view::npos) {
    return Status::InvalidArgument("endpoint '" + std::string(url) +
                                   "': expected http[s]://HOST:PORT[/PREFIX]");
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:9003
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Status::InvalidArgument("endpoint '" + std::string(url) +
                                     "': unclosed '['");
    }
    endpoint.host = std::string(authority.substr(0, close + 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return Status::InvalidArgument("endpoint '" + std::string(url) +
                                       "': expected ':PORT' after the address");
      }
      port = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    endpoint.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (endpoint.host.empty() || endpoint.host == "[]") {
    return Status::InvalidArgument("endpoint '" + std::string(url) +
                                   "': no host");
  }
  if (port.empty() && authority.back() == ':') {
    return Status::InvalidArgument("endpoint '" + std::string(url) +
                                   "': empty port");
  }
  if (port.empty()) {
    endpoint.port = endpoint.scheme == "https" ? 443 : 80;
  } else {
    unsigned value = 0;
    auto [end, error] =
        std::from_chars(port.data(), port.data() + port.size(), value);
    if (error != std::errc() || end != port.data() + port.size() ||
        value == 0 || value > 65535) {
      return Status::InvalidArgument("endpoint '" + std::string(url) +
                                     "': bad port '" + std::string(port) + "'");
    }
    endpoint.port = static_cast<uint16_t>(value);
  }
  return endpoint;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
        (byte >= '0' && byte <= '9') || byte == '-' || byte == '.' ||
        byte == '_' || byte == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
    }
  }
  return out;
}

AdminClient::AdminClient(const GlobalOptions& options, Failure* failure)
    : options_(options),
      failure_(failure),
      endpoint_(ParseEndpoint(options.endpoint)) {
  if (!endpoint_.ok()) return;
  http_ = std::make_unique<httplib::Client>(endpoint_->scheme + "://" +
                                            endpoint_->host + ":" +
                                            std::to_string(endpoint_->port));
  const std::chrono::milliseconds timeout(options.timeout_ms);
  http_->set_connection_timeout(timeout);
  http_->set_read_timeout(timeout);
  http_->set_write_timeout(timeout);
  // Paths are encoded here (PercentEncode); httplib must not re-encode the
  // '%' of an escape.
  http_->set_url_encode(false);
  // `top` reads every second: keep the connection.
  http_->set_keep_alive(true);
  if (!options.token.empty()) http_->set_bearer_token_auth(options.token);
  if (endpoint_->scheme == "https" && !options.tls_ca.empty()) {
    http_->set_ca_cert_path(options.tls_ca.c_str());
  }
}

AdminClient::~AdminClient() = default;

Result<std::pair<int, std::string>> AdminClient::Send(Method method,
                                                      const std::string& path,
                                                      const std::string& body) {
  if (!endpoint_.ok()) {
    failure_->hint =
        "give --endpoint (or MOONCAKE_TIER_ENDPOINT) as "
        "http://HOST:PORT, e.g. http://127.0.0.1:9003";
    return endpoint_.status();
  }
  const std::string target = endpoint_->prefix + path;
  httplib::Result result = [&] {
    switch (method) {
      case Method::kGet:
        return http_->Get(target);
      case Method::kPost:
        return http_->Post(target, body, "application/json");
      case Method::kPatch:
        return http_->Patch(target, body, "application/json");
      case Method::kDelete:
        return http_->Delete(target);
    }
    return http_->Get(target);
  }();
  if (!result) return TransportFailure(static_cast<int>(result.error()));
  if (result->status < 200 || result->status >= 300) {
    return HttpFailure(method, path, result->status, result->body);
  }
  return std::make_pair(result->status, std::move(result->body));
}

Result<AdminReply> AdminClient::Call(Method method, const std::string& path,
                                     const std::string& body) {
  MT_ASSIGN_OR_RETURN(auto answer, Send(method, path, body));
  AdminReply reply;
  reply.http_status = answer.first;
  reply.body = json::parse(answer.second, nullptr, /*allow_exceptions=*/false);
  if (reply.body.is_discarded()) {
    failure_->http_status = answer.first;
    failure_->hint = "is " + options_.endpoint +
                     " the admin API of mooncake-tierd (its --admin-listen "
                     "address)?";
    return Status(ErrorReason::kInternal,
                  std::string(MethodName(static_cast<int>(method))) + " " +
                      path + ": the answer is not JSON");
  }
  return reply;
}

Result<json> AdminClient::List(const std::string& path, const char* items,
                               const ListQuery& query) {
  json merged = {{items, json::array()}, {"next_cursor", ""}};
  std::string cursor = query.cursor;
  std::set<std::string> seen;  // a server repeating a cursor must not loop us
  while (true) {
    MT_ASSIGN_OR_RETURN(AdminReply reply,
                        Call(Method::kGet, WithQuery(path, query, cursor)));
    if (!reply.body.contains(items) || !reply.body[items].is_array()) {
      return Status(ErrorReason::kInternal,
                    "GET " + path + ": the answer has no '" + items + "' list");
    }
    for (json& item : reply.body[items])
      merged[items].push_back(std::move(item));
    const json next = reply.body.value("next_cursor", json(""));
    cursor = next.is_string() ? next.get<std::string>() : "";
    merged["next_cursor"] = cursor;
    if (!query.all || cursor.empty() || !seen.insert(cursor).second) break;
  }
  return merged;
}

Status AdminClient::HttpFailure(Method method, const std::string& path,
                                int http_status, const std::string& body) {
  const json document = json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::string reason, code, message;
  if (document.is_object() && document.contains("error") &&
      document["error"].is_object()) {
    const json& error = document["error"];
    reason = error.value("reason", "");
    code = error.value("code", "");
    message = error.value("message", "");
  }
  failure_->http_status = http_status;
  failure_->reason =
      reason.empty() ? "HTTP_" + std::to_string(http_status) : reason;
  failure_->code = code;
  if (message.empty()) {
    message = std::string(MethodName(static_cast<int>(method))) + " " + path +
              " answered HTTP " + std::to_string(http_status);
  }
  std::string& hint = failure_->hint;
  if (http_status == 401) {
    hint = options_.token.empty()
               ? "this command changes the store and the server wants a "
                 "token: pass --token or set MOONCAKE_TIER_TOKEN to the "
                 "daemon's --admin-token"
               : "the server refused the token; check --token or "
                 "MOONCAKE_TIER_TOKEN against the daemon's --admin-token";
  } else if (reason == "SERVED_BY_MASTER") {
    hint =
        "this is a storage node's admin port; point --endpoint at the "
        "master's admin address (mooncake-tierd master --admin-listen, "
        "default 127.0.0.1:9003)";
  } else if (reason == "ROUTE_NOT_FOUND" || reason.empty()) {
    hint = "is " + options_.endpoint +
           " the admin API of mooncake-tierd (its --admin-listen address), "
           "and a version with this route?";
  } else if (http_status == 501) {
    hint =
        "this mooncake-tierd does not support it yet and nothing "
        "changed; upgrade the daemon to use it";
  } else if (reason == "NOT_RUNTIME_TUNABLE") {
    hint =
        "nothing was changed; set it in the daemon's flags or --config "
        "file and restart it";
  } else if (reason == "NOT_READY") {
    hint = "mooncake-tierd is starting; retry shortly";
  } else if (reason == "OBJECT_NOT_FOUND") {
    hint =
        "check the key; the object may have been removed, evicted or "
        "expired";
  } else if (reason == "GROUP_NOT_FOUND") {
    hint = "check the group id; 'mooncake-tierctl groups list' lists them";
  } else if (reason == "OBJECT_LEASED") {
    hint =
        "retry when the lease ends (the message says when); 'objects rm' "
        "and 'groups rm' can --force";
  } else if (reason == "OBJECT_BUSY") {
    hint =
        "a put or a task is in flight for it; see 'mooncake-tierctl "
        "promotions list' and 'offloads list', and retry";
  } else if (reason == "QUEUE_FULL") {
    hint = "the task queue is full; retry later";
  }
  return Status(ReasonOf(http_status, reason), message);
}

Status AdminClient::TransportFailure(int error) {
  const auto kind = static_cast<httplib::Error>(error);
  const std::string admin = endpoint_->ToString();
  const std::string timeout = std::to_string(options_.timeout_ms);
  switch (kind) {
    case httplib::Error::Connection:
      failure_->hint = "is mooncake-tierd running with its admin API at " +
                       admin +
                       "? point --endpoint or MOONCAKE_TIER_ENDPOINT at the "
                       "daemon's --admin-listen address";
      return Status(ErrorReason::kUnavailable,
                    "cannot connect to the admin API at " + admin);
    case httplib::Error::ConnectionTimeout:
      failure_->hint = "is " + admin +
                       " reachable and mooncake-tierd running? raise "
                       "--timeout if the network is slow";
      return Status(ErrorReason::kTimeout,
                    "no connection to " + admin + " within " + timeout + " ms");
    case httplib::Error::Read:
    case httplib::Error::Write:
      failure_->hint =
          "the daemon may be overloaded or restarting; retry, "
          "or raise --timeout from " +
          timeout + " ms";
      return Status(ErrorReason::kTimeout, "no complete answer from " + admin +
                                               " within " + timeout + " ms (" +
                                               httplib::to_string(kind) + ")");
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      failure_->hint =
          options_.tls_ca.empty()
              ? "the daemon's certificate must lead to a CA this host "
                "trusts: give its CA bundle with --tls-ca or "
                "MOONCAKE_TIER_TLS_CA"
              : "the daemon's certificate must lead to " + options_.tls_ca +
                    " and name the endpoint's host";
      return Status(
          ErrorReason::kUnavailable,
          "TLS with " + admin + " failed (" + httplib::to_string(kind) + ")");
    default:
      failure_->hint = "check --endpoint " + options_.endpoint;
      return Status(
          ErrorReason::kUnavailable,
          "request to " + admin + " failed (" + httplib::to_string(kind) + ")");
  }
}

// ---- Typed calls -----------------------------------------------------------

Result<json> AdminClient::GetStatus() {
  MT_ASSIGN_OR_RETURN(AdminReply reply, Call(Method::kGet, "/api/v1/status"));
  return std::move(reply.body);
}

Result<json> AdminClient::ListNodes(const ListQuery& query) {
  return List("/api/v1/nodes", "nodes", query);
}

Result<json> AdminClient::ListGroups(const ListQuery& query) {
  return List("/api/v1/groups", "groups", query);
}

Result<json> AdminClient::ListPromotions(const ListQuery& query) {
  return List("/api/v1/promotions", "tasks", query);
}

Result<json> AdminClient::ListOffloads(const ListQuery& query) {
  return List("/api/v1/offloads", "tasks", query);
}

Result<json> AdminClient::GetObject(const std::string& key) {
  MT_ASSIGN_OR_RETURN(
      AdminReply reply,
      Call(Method::kGet, "/api/v1/objects/" + PercentEncode(key)));
  return std::move(reply.body);
}

Result<json> AdminClient::GetGroup(const std::string& id) {
  MT_ASSIGN_OR_RETURN(
      AdminReply reply,
      Call(Method::kGet, "/api/v1/groups/" + PercentEncode(id)));
  return std::move(reply.body);
}

Result<json> AdminClient::GetConfig() {
  MT_ASSIGN_OR_RETURN(AdminReply reply, Call(Method::kGet, "/api/v1/config"));
  return std::move(reply.body);
}

Result<std::string> AdminClient::Metrics() {
  MT_ASSIGN_OR_RETURN(auto answer, Send(Method::kGet, "/metrics", ""));
  return std::move(answer.second);
}

Result<AdminReply> AdminClient::RemoveObject(const std::string& key,
                                             bool force) {
  return Call(Method::kDelete, "/api/v1/objects/" + PercentEncode(key) +
                                   (force ? "?force=true" : ""));
}

Result<AdminReply> AdminClient::PromoteObject(const std::string& key) {
  return Call(Method::kPost,
              "/api/v1/objects/" + PercentEncode(key) + "/promote");
}

Result<AdminReply> AdminClient::EvictObject(const std::string& key) {
  return Call(Method::kPost,
              "/api/v1/objects/" + PercentEncode(key) + "/evict");
}

Result<AdminReply> AdminClient::RemoveGroup(const std::string& id, bool force) {
  return Call(Method::kDelete, "/api/v1/groups/" + PercentEncode(id) +
                                   (force ? "?force=true" : ""));
}

Result<AdminReply> AdminClient::PromoteGroup(const std::string& id) {
  return Call(Method::kPost,
              "/api/v1/groups/" + PercentEncode(id) + "/promote");
}

Result<AdminReply> AdminClient::EvictGroup(const std::string& id) {
  return Call(Method::kPost, "/api/v1/groups/" + PercentEncode(id) + "/evict");
}

Result<AdminReply> AdminClient::PatchConfig(const json& patch) {
  return Call(Method::kPatch, "/api/v1/config",
              patch.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace mooncake_tier::cli
