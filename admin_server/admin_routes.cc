#include "admin_server/admin_routes.h"

namespace mooncake_tier::admin {

RouteTable BuildAdminRoutes() {
  RouteTable table;
  AddHealthRoutes(table);
  AddMetricsRoutes(table);
  AddHelpRoutes(table);
  AddStatusRoutes(table);
  AddNodeRoutes(table);
  AddObjectRoutes(table);
  AddGroupRoutes(table);
  AddTaskRoutes(table);
  AddConfigRoutes(table);
  return table;
}

}  // namespace mooncake_tier::admin
