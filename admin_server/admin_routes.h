#pragma once

// Registration of the admin API's routes, one function per resource, each
// defined in that resource's handler file (health_handler.cc,
// objects_handler.cc, ...). BuildAdminRoutes() makes the table the server
// uses, in the order /api/v1/help lists it.

#include "admin_server/route_table.h"

namespace mooncake_tier::admin {

void AddHealthRoutes(RouteTable& table);   // /healthz, /readyz
void AddMetricsRoutes(RouteTable& table);  // /metrics
void AddHelpRoutes(RouteTable& table);     // /api/v1/help
void AddStatusRoutes(RouteTable& table);   // /api/v1/status
void AddNodeRoutes(RouteTable& table);     // /api/v1/nodes
void AddObjectRoutes(RouteTable& table);   // /api/v1/objects/{key}...
void AddGroupRoutes(RouteTable& table);    // /api/v1/groups...
void AddTaskRoutes(RouteTable& table);     // /api/v1/promotions, offloads
void AddConfigRoutes(RouteTable& table);   // /api/v1/config

RouteTable BuildAdminRoutes();

}  // namespace mooncake_tier::admin
