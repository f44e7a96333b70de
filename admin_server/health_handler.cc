// GET /healthz and GET /readyz.

#include "admin_server/admin_routes.h"

namespace mooncake_tier::admin {

void AddHealthRoutes(RouteTable& table) {
  table.Add({"GET", "/healthz", "Liveness: 200 while the process serves.",
             false, [](const AdminRequest&, AdminContext&) {
               return AdminResponse::Json(200, {{"status", "ok"}});
             }});
  table.Add({"GET", "/readyz",
             "Readiness: 200 once the daemon serves its clients, 503 before.",
             false, [](const AdminRequest&, AdminContext& context) {
               if (context.ready && context.ready()) {
                 return AdminResponse::Json(200, {{"status", "ready"}});
               }
               return AdminResponse::Error(503, "UNAVAILABLE", "NOT_READY",
                                           "not serving yet");
             }});
}

}  // namespace mooncake_tier::admin
