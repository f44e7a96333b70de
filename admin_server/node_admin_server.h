#pragma once

// The admin HTTP server of a storage node (`mooncake-tierd node`, default
// 127.0.0.1:9300): GET /healthz, GET /readyz and GET /metrics (the node's
// own metrics, from a callback). The admin API proper (/api/v1/...) is the
// master's: every path under /api/ answers 404 with reason
// SERVED_BY_MASTER and a message naming the master's admin server, so a
// tool pointed at the wrong port says so instead of "no such route".
//
// The routes are the same health and metrics handlers the master's
// AdminServer serves (AddHealthRoutes, AddMetricsRoutes), so the two
// answer alike. The edge rules are the master's where they apply: a
// non-loopback address needs a token (Start refuses otherwise; the node has
// no mutating route today, the rule keeps one policy for every admin port),
// errors use the contract's body, other methods are 405.
//
// Thread safety: Start/Shutdown from one thread; port() and SetReady() from
// any thread.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "admin_server/admin_server.h"
#include "admin_server/route_table.h"
#include "mooncake_tier/status.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace mooncake_tier::admin {

class NodeAdminServer {
 public:
  using MetricsSource = AdminServer::MetricsSource;

  // Binds and starts serving. `node_name` goes into the message of the
  // /api/ answers; `metrics` may be empty (then /metrics answers 503).
  // INVALID_ARGUMENT for a non-loopback address without a token or bad
  // limits; UNAVAILABLE when the address cannot be bound.
  static Result<std::unique_ptr<NodeAdminServer>> Start(
      AdminServerOptions options, std::string node_name, MetricsSource metrics);
  ~NodeAdminServer();  // Shutdown()
  NodeAdminServer(const NodeAdminServer&) = delete;
  NodeAdminServer& operator=(const NodeAdminServer&) = delete;

  uint16_t port() const { return port_; }
  // /readyz answers 200 once set.
  void SetReady(bool ready) { ready_.store(ready); }
  // Stops accepting, finishes requests in progress and joins the threads.
  // Idempotent.
  void Shutdown();

 private:
  NodeAdminServer(AdminServerOptions options, std::string node_name,
                  MetricsSource metrics);
  Status Listen();
  void Dispatch(const httplib::Request& req, httplib::Response& res) const;

  const AdminServerOptions options_;
  const std::string node_name_;
  const MetricsSource metrics_;
  RouteTable routes_;
  std::atomic<bool> ready_{false};
  uint16_t port_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace mooncake_tier::admin
