// GET /metrics: the Prometheus text exposition from the metrics callback.

#include "admin_server/admin_routes.h"

namespace mooncake_tier::admin {

void AddMetricsRoutes(RouteTable& table) {
  table.Add({"GET", "/metrics", "Prometheus metrics (text format 0.0.4).",
             false, [](const AdminRequest&, AdminContext& context) {
               if (!context.metrics) {
                 return AdminResponse::Error(503, "UNAVAILABLE", "NO_METRICS",
                                             "no metrics source configured");
               }
               return AdminResponse::Text(
                   200, context.metrics(),
                   "text/plain; version=0.0.4; charset=utf-8");
             }});
}

}  // namespace mooncake_tier::admin
