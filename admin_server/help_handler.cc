// GET /api/v1/help: the route table itself.

#include "admin_server/admin_routes.h"

namespace mooncake_tier::admin {

void AddHelpRoutes(RouteTable& table) {
  table.Add({"GET", "/api/v1/help",
             "Every route: method, path, help, whether it needs the token.",
             false, [](const AdminRequest&, AdminContext& context) {
               return AdminResponse::Json(200, context.routes->Help());
             }});
}

}  // namespace mooncake_tier::admin
