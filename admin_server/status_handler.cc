// GET /api/v1/status: tiers, objects, groups, queues and nodes at a glance.

#include "admin_server/admin_json.h"
#include "admin_server/admin_routes.h"

namespace mooncake_tier::admin {

void AddStatusRoutes(RouteTable& table) {
  table.Add({"GET", "/api/v1/status",
             "Tier capacity and use, objects, groups by state, promotion and "
             "offload queues, nodes.",
             false, [](const AdminRequest&, AdminContext& context) {
               const std::optional<ClusterRole> role = context.facade->Role();
               if (!role) {
                 return AdminResponse::Json(
                     200, StatusJson(context.facade->Stats()));
               }
               // A standby has no data of its own: the role alone.
               nlohmann::json body = role->leader
                                         ? StatusJson(context.facade->Stats())
                                         : nlohmann::json::object();
               body["ha"] = ClusterRoleJson(*role);
               return AdminResponse::Json(200, std::move(body));
             }});
}

}  // namespace mooncake_tier::admin
