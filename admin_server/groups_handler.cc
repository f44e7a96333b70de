// /api/v1/groups: listing by page, describe, promote, evict, remove.

#include <optional>

#include "admin_server/admin_json.h"
#include "admin_server/admin_routes.h"
#include "admin_server/request_parsing.h"

namespace mooncake_tier::admin {
namespace {

Result<std::optional<GroupState>> StateFilter(const AdminRequest& request) {
  auto it = request.query.find("state");
  if (it == request.query.end() || it->second.empty()) {
    return std::optional<GroupState>();
  }
  for (GroupState state : {GroupState::kFilling, GroupState::kComplete,
                           GroupState::kBroken, GroupState::kExpired}) {
    if (GroupStateName(state) == it->second) {
      return std::optional<GroupState>(state);
    }
  }
  return Status(ErrorReason::kInvalidArgument,
                "state must be filling, complete, broken or expired, got '" +
                    it->second + "'");
}

AdminResponse ListGroups(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {"state", "limit", "cursor"}));
  MT_ASSIGN_OR_RESPOND(const std::optional<GroupState> state,
                       StateFilter(request));
  MT_ASSIGN_OR_RESPOND(const size_t limit, PageLimit(request));
  if (!context.facade->Supports(FacadeOp::kListGroups)) {
    return AdminResponse::NotImplemented(FacadeOp::kListGroups);
  }
  auto cursor = request.query.find("cursor");
  MT_ASSIGN_OR_RESPOND(
      const GroupPage page,
      context.facade->ListGroups(
          state, limit,
          cursor == request.query.end() ? std::string() : cursor->second));
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupStatus& group : page.groups) {
    groups.push_back(GroupStatusJson(group));
  }
  return AdminResponse::Json(
      200, {{"groups", std::move(groups)}, {"next_cursor", page.next_cursor}});
}

AdminResponse GetGroup(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {}));
  MT_ASSIGN_OR_RESPOND(const GroupDescription group,
                       context.facade->DescribeGroup(request.params.at("id")));
  return AdminResponse::Json(200, GroupJson(group));
}

AdminResponse PromoteGroup(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {}));
  const std::string& id = request.params.at("id");
  MT_ASSIGN_OR_RESPOND(const std::vector<TaskId> tasks,
                       context.facade->PromoteGroup(id));
  return AdminResponse::Json(202, {{"group", id}, {"tasks", tasks}});
}

AdminResponse EvictGroup(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {}));
  if (!context.facade->Supports(FacadeOp::kEvictGroup)) {
    return AdminResponse::NotImplemented(FacadeOp::kEvictGroup);
  }
  const std::string& id = request.params.at("id");
  MT_ASSIGN_OR_RESPOND(const EvictionOutcome outcome,
                       context.facade->EvictGroup(id));
  const int status = outcome.offloads.empty() ? 200 : 202;
  return AdminResponse::Json(status, {{"group", id},
                                      {"bytes_freed", outcome.bytes_freed},
                                      {"offloads", outcome.offloads}});
}

AdminResponse RemoveGroup(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {"force"}));
  MT_ASSIGN_OR_RESPOND(const bool force, QueryBool(request, "force", false));
  const std::string& id = request.params.at("id");
  MT_RESPOND_IF_ERROR(context.facade->RemoveGroup(id, force));
  return AdminResponse::Json(200, {{"group", id}, {"removed", true}});
}

}  // namespace

void AddGroupRoutes(RouteTable& table) {
  table.Add({"GET", "/api/v1/groups",
             "Groups by id, paginated. ?state=&limit=&cursor=", false,
             ListGroups});
  table.Add({"GET", "/api/v1/groups/{id}",
             "A group: state, expected/present, members with their tiers.",
             false, GetGroup});
  table.Add({"POST", "/api/v1/groups/{id}/promote",
             "Forced promotion of a complete SSD-only group: 202 with the "
             "tasks.",
             true, PromoteGroup});
  table.Add({"POST", "/api/v1/groups/{id}/evict",
             "Forced eviction of a group from DRAM, as one unit: 200 with "
             "bytes_freed, or 202 with the offloads queued first (the DRAM "
             "copies go when the last lands).",
             true, EvictGroup});
  table.Add({"DELETE", "/api/v1/groups/{id}",
             "Removes every member and the group. ?force=true removes leased "
             "members too.",
             true, RemoveGroup});
}

}  // namespace mooncake_tier::admin
