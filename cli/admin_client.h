#pragma once

// The one typed client of the admin HTTP API (ARCHITECTURE.md section 8,
// docs/admin-api.yaml) that every admin command group of mooncake-tierctl
// goes through, so that requests, the token, timeouts, percent-encoding
// and the reading of errors are written once.
//
// Every call returns the decoded JSON body (or the /metrics text) on a 2xx
// answer. On anything else it returns a non-OK Status and fills the
// Failure given at construction: the server's own error reason and code
// (the contract's {"error":{code,reason,message}}), the HTTP status, and a
// hint saying what to do (pass a token, start the daemon, ...). The
// Status's reason is the server's when the client library knows it, else
// the closest by HTTP status, so the exit code follows the contract: 404
// of a missing object, group, node or task (a known reason whose code is
// NOT_FOUND) exits 3; any other 404, such as an unknown route
// (ROUTE_NOT_FOUND: the endpoint is not this API) or a storage node's
// admin port (SERVED_BY_MASTER), exits 1.
//
// Thread safety: not thread-safe; one command uses it from one thread.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_context.h"
#include "mooncake_tier/status.h"

namespace httplib {
class Client;
}  // namespace httplib

namespace mooncake_tier::cli {

// Where the admin API is: "http[s]://HOST[:PORT][/PREFIX]"; a URL without
// a scheme is http, without a port 80 (443 for https).
struct AdminEndpoint {
  std::string scheme;  // "http" or "https"
  std::string host;    // "127.0.0.1", "[::1]", "admin.example"
  uint16_t port = 0;
  std::string prefix;  // "" or "/something", no trailing '/'

  // "http://127.0.0.1:9003" (with the prefix, if any).
  std::string ToString() const;
};

// INVALID_ARGUMENT naming what is wrong.
Result<AdminEndpoint> ParseEndpoint(std::string_view url);

// Encodes every byte outside [A-Za-z0-9-._~] as %XX, so a key or group id
// (which may hold '/', spaces, '%' or non-ASCII bytes) is one path segment.
std::string PercentEncode(std::string_view text);

// A 2xx answer: its status (200, 202) and body.
struct AdminReply {
  int http_status = 0;
  nlohmann::json body;
};

// One page request of a list route; `all` follows next_cursor to the end.
struct ListQuery {
  size_t limit = 100;  // 1..1000, the server's page size
  std::string cursor;  // "" = from the start
  std::string state;   // groups only; "" = any
  bool all = false;
};

class AdminClient {
 public:
  // `options` (endpoint, token, timeout) and `failure` must outlive the
  // client. The endpoint is parsed here; a bad one fails every call with
  // INVALID_ARGUMENT.
  AdminClient(const GlobalOptions& options, Failure* failure);
  ~AdminClient();
  AdminClient(const AdminClient&) = delete;
  AdminClient& operator=(const AdminClient&) = delete;

  // ---- Reads ----
  Result<nlohmann::json> GetStatus();
  // {"<items>": [...], "next_cursor": "..."}: one page, or every page
  // after the cursor merged into one list when query.all.
  Result<nlohmann::json> ListNodes(const ListQuery& query);
  Result<nlohmann::json> ListGroups(const ListQuery& query);
  Result<nlohmann::json> ListPromotions(const ListQuery& query);
  Result<nlohmann::json> ListOffloads(const ListQuery& query);
  Result<nlohmann::json> GetObject(const std::string& key);
  Result<nlohmann::json> GetGroup(const std::string& id);
  Result<nlohmann::json> GetConfig();
  // The Prometheus text of /metrics.
  Result<std::string> Metrics();

  // ---- Operator actions (need the token when the server has one) ----
  Result<AdminReply> RemoveObject(const std::string& key, bool force);
  Result<AdminReply> PromoteObject(const std::string& key);
  Result<AdminReply> EvictObject(const std::string& key);
  Result<AdminReply> RemoveGroup(const std::string& id, bool force);
  Result<AdminReply> PromoteGroup(const std::string& id);
  Result<AdminReply> EvictGroup(const std::string& id);
  // PATCH /api/v1/config with a merge patch of the GET shape.
  Result<AdminReply> PatchConfig(const nlohmann::json& patch);

  // The options it was built with (a second client for a probe whose
  // failure must not become the command's).
  const GlobalOptions& options() const { return options_; }

 private:
  enum class Method { kGet, kPost, kPatch, kDelete };

  // One request to `path` (below the prefix, query included). A 2xx
  // answer's status and raw body; otherwise the failure.
  Result<std::pair<int, std::string>> Send(Method method,
                                           const std::string& path,
                                           const std::string& body);
  // Send, with the body decoded as JSON.
  Result<AdminReply> Call(Method method, const std::string& path,
                          const std::string& body = "");
  // A list route; `items` is the field holding the list.
  Result<nlohmann::json> List(const std::string& path, const char* items,
                              const ListQuery& query);

  // The failure of an answer that is not 2xx.
  Status HttpFailure(Method method, const std::string& path, int http_status,
                     const std::string& body);
  // The failure of a request that got no answer.
  Status TransportFailure(int error);

  const GlobalOptions& options_;
  Failure* const failure_;
  Result<AdminEndpoint> endpoint_;
  std::unique_ptr<httplib::Client> http_;
};

}  // namespace mooncake_tier::cli
