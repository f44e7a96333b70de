#include "admin_server/node_admin_server.h"

#include <utility>

#include "admin_server/admin_routes.h"

namespace mooncake_tier::admin {

Result<std::unique_ptr<NodeAdminServer>> NodeAdminServer::Start(
    AdminServerOptions options, std::string node_name, MetricsSource metrics) {
  AdminServer::Site site;
  AddHealthRoutes(site.routes);
  AddMetricsRoutes(site.routes);
  site.what = "the node's admin port";
  site.unrouted = [node_name = std::move(node_name)](const std::string& path) {
    if (path.rfind("/api/", 0) != 0) {
      return AdminResponse::Error(404, "NOT_FOUND", "ROUTE_NOT_FOUND",
                                  "no such route");
    }
    return AdminResponse::Error(
        404, "NOT_FOUND", "SERVED_BY_MASTER",
        "this is the admin port of storage node '" + node_name +
            "', which serves only /healthz, /readyz and /metrics; the admin "
            "API is served by the master's admin server (mooncake-tierd "
            "master --admin-listen, default 127.0.0.1:9003)");
  };
  MT_ASSIGN_OR_RETURN(
      std::unique_ptr<AdminServer> server,
      AdminServer::StartSite(std::move(options), std::move(site), nullptr,
                             std::move(metrics)));
  return std::unique_ptr<NodeAdminServer>(
      new NodeAdminServer(std::move(server)));
}

}  // namespace mooncake_tier::admin
