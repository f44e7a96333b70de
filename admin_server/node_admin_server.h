#pragma once

// The admin HTTP server of a storage node (`mooncake-tierd node`, default
// 127.0.0.1:9300): GET /healthz, GET /readyz and GET /metrics (the node's
// own metrics, from a callback). The admin API proper (/api/v1/...) is the
// master's: every path under /api/ answers 404 with reason
// SERVED_BY_MASTER and a message naming the master's admin server, so a
// tool pointed at the wrong port says so instead of "no such route".
//
// It is the master's AdminServer over another route table (the same
// health and metrics handlers, AddHealthRoutes and AddMetricsRoutes), so
// the two answer alike and share every edge rule (admin_server/http_edge.h):
// a non-loopback address needs a token (Start refuses otherwise; the node
// has no mutating route today, the rule keeps one policy for every admin
// port), limits and deadlines, every error (also the edge's own, or a
// handler's exception) has the contract's body, other methods are 405.
//
// Thread safety: Start/Shutdown from one thread; port(), SetReady() and
// ReloadTls() from any thread.

#include <cstdint>
#include <memory>
#include <string>

#include "admin_server/admin_server.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier::admin {

class NodeAdminServer {
 public:
  using MetricsSource = AdminServer::MetricsSource;

  // Binds and starts serving. `node_name` goes into the message of the
  // /api/ answers; `metrics` may be empty (then /metrics answers 503).
  // INVALID_ARGUMENT for a non-loopback address without a token, bad
  // limits or a TLS certificate or key that cannot be used (naming the
  // file); UNAVAILABLE when the address cannot be bound.
  static Result<std::unique_ptr<NodeAdminServer>> Start(
      AdminServerOptions options, std::string node_name, MetricsSource metrics);
  NodeAdminServer(const NodeAdminServer&) = delete;
  NodeAdminServer& operator=(const NodeAdminServer&) = delete;

  uint16_t port() const { return server_->port(); }
  HttpEdgeStats stats() const { return server_->stats(); }
  // /readyz answers 200 once set.
  void SetReady(bool ready) { server_->SetReady(ready); }
  // An HTTPS port (options.tls): AdminServer::ReloadTls.
  Status ReloadTls() { return server_->ReloadTls(); }
  // Stops accepting, finishes requests in progress and joins the threads.
  // Idempotent; the destructor does it too.
  void Shutdown() { server_->Shutdown(); }

 private:
  explicit NodeAdminServer(std::unique_ptr<AdminServer> server)
      : server_(std::move(server)) {}

  const std::unique_ptr<AdminServer> server_;
};

}  // namespace mooncake_tier::admin
