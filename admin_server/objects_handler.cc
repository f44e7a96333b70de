// /api/v1/objects/{key}: describe, remove, forced promotion and eviction.
// Keys arrive percent-encoded in the path and are decoded by the route
// table.

#include "admin_server/admin_json.h"
#include "admin_server/admin_routes.h"
#include "admin_server/request_parsing.h"

namespace mooncake_tier::admin {
namespace {

nlohmann::json TaskIds(const std::vector<TaskId>& ids) {
  nlohmann::json out = nlohmann::json::array();
  for (TaskId id : ids) out.push_back(id);
  return out;
}

AdminResponse GetObject(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {}));
  const std::string& key = request.params.at("key");
  MT_ASSIGN_OR_RESPOND(const ObjectDescription object,
                       context.facade->DescribeObject(key));
  return AdminResponse::Json(200,
                             ObjectJson(key, object, context.facade->Now()));
}

AdminResponse RemoveObject(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {"force"}));
  MT_ASSIGN_OR_RESPOND(const bool force, QueryBool(request, "force", false));
  const std::string& key = request.params.at("key");
  MT_RESPOND_IF_ERROR(context.facade->RemoveObject(key, force));
  return AdminResponse::Json(200, {{"key", key}, {"removed", true}});
}

AdminResponse PromoteObject(const AdminRequest& request,
                            AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {}));
  const std::string& key = request.params.at("key");
  MT_ASSIGN_OR_RESPOND(const std::vector<TaskId> tasks,
                       context.facade->PromoteObject(key));
  return AdminResponse::Json(202, {{"key", key}, {"tasks", TaskIds(tasks)}});
}

AdminResponse EvictObject(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {}));
  if (!context.facade->Supports(FacadeOp::kEvictObject)) {
    return AdminResponse::NotImplemented(FacadeOp::kEvictObject);
  }
  const std::string& key = request.params.at("key");
  MT_ASSIGN_OR_RESPOND(const EvictionOutcome outcome,
                       context.facade->EvictObject(key));
  const int status = outcome.offloads.empty() ? 200 : 202;
  return AdminResponse::Json(status, {{"key", key},
                                      {"bytes_freed", outcome.bytes_freed},
                                      {"offloads", TaskIds(outcome.offloads)}});
}

}  // namespace

void AddObjectRoutes(RouteTable& table) {
  table.Add({"GET", "/api/v1/objects/{key}",
             "An object: size, group, replicas (tier, state, node, refcnt), "
             "lease, pins. Grants no lease.",
             false, GetObject});
  table.Add({"DELETE", "/api/v1/objects/{key}",
             "Removes an object (follows the group remove policy). ?force=true "
             "removes it even while leased.",
             true, RemoveObject});
  table.Add({"POST", "/api/v1/objects/{key}/promote",
             "Forced promotion of an SSD-only object: 202 with the task.", true,
             PromoteObject});
  table.Add({"POST", "/api/v1/objects/{key}/evict",
             "Forced eviction from DRAM (a group member: its group): 200 with "
             "bytes_freed when dropped now, 202 with the offloads queued "
             "first when offload is on and it has no SSD copy.",
             true, EvictObject});
}

}  // namespace mooncake_tier::admin
