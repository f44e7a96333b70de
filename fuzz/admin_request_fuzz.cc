// Fuzzes what the admin server runs on a request before it reaches the
// engine (admin_server/admin_server.cc, AdminServer::Route and Handle):
// routing by method and raw path (admin_server/route_table.h), the query
// string and the body (admin_server/request_parsing.h), and the handler of
// the route matched, which parses its parameters and renders the answer
// (admin_server/admin_json.h) around one call into the AdminFacade. The
// facade here is a fixed, stateless stand-in: the engine is not under test.
// No HTTP server is started.
//
// Input: the request line "METHOD TARGET" (a line without a space is a GET
// of that target), then '\n' and the body (the rest of the input).
//
// Properties checked:
//   - no exception leaves a handler (the edge would turn it into a 500);
//   - every answer has a status in 200..599 and, when JSON, a body that
//     parses; an error (4xx, 5xx) has the contract's body
//     {"error":{"code","reason","message"}};
//   - a matched route has the request's method, and its params are the
//     pattern's;
//   - percent-encoding a decoded param decodes back to it.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin_server/admin_facade.h"
#include "admin_server/admin_route.h"
#include "admin_server/admin_routes.h"
#include "admin_server/request_parsing.h"
#include "admin_server/route_table.h"
#include "fuzz/fuzz_support.h"
#include "nlohmann/json.hpp"

namespace mooncake_tier::admin {
namespace {

constexpr size_t kMaxInputBytes = 64 << 10;

[[maybe_unused]] const bool kSilenced = fuzz::SilenceLogs();

// The engine's side of every route, fixed: a few nodes, tasks and groups,
// any object found unless its key starts with "missing". Stateless, so
// runs do not depend on each other.
class FixedFacade final : public AdminFacade {
 public:
  bool Supports(FacadeOp) const override { return true; }
  TimePoint Now() const override { return TimePoint(std::chrono::hours(1000)); }
  MasterStats Stats() const override { return MasterStats{}; }

  std::vector<NodeView> Nodes() const override {
    std::vector<NodeView> nodes;
    for (NodeId id : {5, 1, 2}) {
      NodeView n;
      n.id = id;
      n.spec.name = "node-" + std::to_string(id);
      n.spec.dram_size = 1 << 20;
      n.dram_used = id << 10;
      n.registered_at = Now() - std::chrono::seconds(id);
      n.last_heartbeat = Now();
      if (id == 2) {
        n.ssd_report = SsdReport{1 << 30, 1 << 29, 4096, 1, 2, 3, 8192};
      }
      nodes.push_back(std::move(n));
    }
    return nodes;
  }

  std::vector<NodeMemoryView> Memory() const override {
    NodeMemoryView m;
    m.node = 1;
    m.bytes.capacity = 1 << 20;
    m.bytes.used = 4096;
    return {m};
  }

  std::vector<Task> Tasks(TaskKind kind) const override {
    std::vector<Task> tasks;
    for (TaskId id : {7, 3, 9}) {
      Task t;
      t.id = id;
      t.kind = kind;
      t.node = id % 2 + 1;
      t.key = "task-key-" + std::to_string(id);
      if (id == 3) t.group = GroupSpec{"g", 2, 1};
      t.created = Now() - std::chrono::milliseconds(id);
      tasks.push_back(std::move(t));
    }
    return tasks;
  }

  Result<ObjectDescription> DescribeObject(
      const std::string& key) const override {
    if (key.rfind("missing", 0) == 0) {
      return Status(ErrorReason::kObjectNotFound, "no object '" + key + "'");
    }
    ObjectDescription d;
    d.size = key.size();
    Replica memory;
    memory.desc.id = 1;
    memory.desc.state = ReplicaState::kComplete;
    memory.desc.node = 1;
    memory.desc.size = key.size();
    d.replicas.push_back(memory);
    if (key.size() % 2 == 0) d.group = GroupSpec{key, 2, 0};
    d.lease_deadline = Now() + std::chrono::seconds(1);
    return d;
  }

  Result<GroupDescription> DescribeGroup(
      const std::string& group_id) const override {
    if (group_id.rfind("missing", 0) == 0) {
      return Status(ErrorReason::kGroupNotFound, "no group");
    }
    GroupDescription g;
    g.status = {group_id, GroupState::kComplete, 2, 2};
    g.members.push_back({0, group_id + "/0", true, {Tier::kMemory}});
    g.members.push_back({1, group_id + "/1", true, {Tier::kLocalDisk}});
    return g;
  }

  Result<GroupPage> ListGroups(std::optional<GroupState> filter, size_t limit,
                               const std::string& cursor) const override {
    GroupPage page;
    for (const char* id : {"a", "b", "c", "d"}) {
      if (id <= cursor) continue;
      if (page.groups.size() == limit) {
        page.next_cursor = page.groups.back().group_id;
        break;
      }
      page.groups.push_back({id, filter.value_or(GroupState::kFilling), 3, 1});
    }
    return page;
  }

  MasterConfig Config() const override { return MasterConfig{}; }

  Status RemoveObject(const std::string& key, bool) override {
    return DescribeObject(key).status();
  }
  Status RemoveGroup(const std::string& group_id, bool) override {
    return DescribeGroup(group_id).status();
  }
  Result<std::vector<TaskId>> PromoteObject(const std::string& key) override {
    MT_RETURN_IF_ERROR(DescribeObject(key).status());
    return std::vector<TaskId>{11};
  }
  Result<std::vector<TaskId>> PromoteGroup(
      const std::string& group_id) override {
    MT_RETURN_IF_ERROR(DescribeGroup(group_id).status());
    return std::vector<TaskId>{12, 13};
  }
  Result<EvictionOutcome> EvictObject(const std::string& key) override {
    MT_RETURN_IF_ERROR(DescribeObject(key).status());
    return key.size() % 2 ? EvictionOutcome{4096, {}}
                          : EvictionOutcome{0, {14}};
  }
  Result<EvictionOutcome> EvictGroup(const std::string& group_id) override {
    MT_RETURN_IF_ERROR(DescribeGroup(group_id).status());
    return EvictionOutcome{8192, {}};
  }

  // As the master does it (core/master.cc, UpdateRuntimeConfig), minus
  // keeping the result: the change, the edit, then the whole validated.
  Result<RuntimeConfigUpdate> UpdateConfig(
      const RuntimeConfigChange& change,
      const PromotionEdit& edit_promotion) override {
    RuntimeConfigUpdate out;
    out.before = Config();
    MasterConfig next = out.before;
    change.ApplyTo(next);
    if (edit_promotion) MT_RETURN_IF_ERROR(edit_promotion(next.promotion));
    if (std::string error = next.Validate(); !error.empty()) {
      return Status(ErrorReason::kInvalidArgument, error);
    }
    out.after = std::move(next);
    return out;
  }
};

const RouteTable& Routes() {
  static const RouteTable* routes = new RouteTable(BuildAdminRoutes());
  return *routes;
}

// The pattern's param names ("/a/{key}/b" -> {"key"}).
std::vector<std::string> ParamNames(std::string_view pattern) {
  std::vector<std::string> names;
  for (size_t open = pattern.find('{'); open != std::string_view::npos;
       open = pattern.find('{', open + 1)) {
    const size_t close = pattern.find('}', open);
    names.emplace_back(pattern.substr(open + 1, close - open - 1));
  }
  return names;
}

void CheckAnswer(const AdminResponse& response) {
  FUZZ_CHECK(response.status >= 200 && response.status <= 599,
             "an answer has an HTTP status");
  if (response.content_type != "application/json") return;
  const nlohmann::json body =
      nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!body.is_discarded(), "a JSON answer parses");
  if (response.status < 400) return;
  FUZZ_CHECK(body.is_object() && body.contains("error") &&
                 body["error"].is_object() && body["error"].contains("code") &&
                 body["error"].contains("reason") &&
                 body["error"].contains("message"),
             "an error answer has the contract's body");
}

// AdminServer::Route and Handle, without the edge and the token check.
AdminResponse Serve(std::string_view method, std::string_view target,
                    std::string_view body) {
  AdminRequest request;
  request.method = std::string(method);
  request.path = std::string(target.substr(0, target.find('?')));
  const AdminRoute* route = nullptr;
  switch (
      Routes().Match(request.method, request.path, &route, &request.params)) {
    case RouteTable::MatchResult::kMatched:
      break;
    case RouteTable::MatchResult::kNoPath:
      return AdminResponse::Error(404, "NOT_FOUND", "ROUTE_NOT_FOUND",
                                  "no such route");
    case RouteTable::MatchResult::kWrongMethod:
      return AdminResponse::Error(405, "INVALID_ARGUMENT", "METHOD_NOT_ALLOWED",
                                  request.method + " is not allowed");
    case RouteTable::MatchResult::kBadEncoding:
      return AdminResponse::BadRequest("malformed percent-encoding",
                                       "BAD_ENCODING");
  }
  FUZZ_CHECK(route != nullptr && route->method == request.method,
             "a matched route has the request's method");
  std::vector<std::string> names = ParamNames(route->pattern);
  FUZZ_CHECK(names.size() == request.params.size(),
             "a matched route fills each of its params");
  for (const std::string& name : names) {
    auto it = request.params.find(name);
    FUZZ_CHECK(it != request.params.end(), "a param is filled by name");
    FUZZ_CHECK(PercentDecode(PercentEncode(it->second)) == it->second,
               "an encoded param decodes back");
  }
  std::optional<std::map<std::string, std::string>> query = ParseQuery(target);
  if (!query) {
    return AdminResponse::BadRequest("malformed percent-encoding in the query",
                                     "BAD_ENCODING");
  }
  request.query = std::move(*query);
  request.body = std::string(body);
  FixedFacade facade;
  AdminContext context{&facade, [] { return std::string("up 1\n"); },
                       [] { return true; }, &Routes()};
  return route->handler(request, context);
}

void RunOne(std::string_view input) {
  if (input.size() > kMaxInputBytes) return;
  const size_t eol = input.find('\n');
  const std::string_view line = input.substr(0, eol);
  const std::string_view body = eol == std::string_view::npos
                                    ? std::string_view()
                                    : input.substr(eol + 1);
  const size_t space = line.find(' ');
  const std::string_view method =
      space == std::string_view::npos ? "GET" : line.substr(0, space);
  const std::string_view target =
      space == std::string_view::npos ? line : line.substr(space + 1);
  CheckAnswer(Serve(method, target, body));
}

}  // namespace
}  // namespace mooncake_tier::admin

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mooncake_tier::admin::RunOne(mooncake_tier::fuzz::AsText(data, size));
  return 0;
}
