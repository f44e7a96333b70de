#pragma once

// The admin HTTP server of the master: the routes of BuildAdminRoutes()
// over an AdminFacade, plus /metrics from a callback, served by an HttpEdge
// (admin_server/http_edge.h: limits, deadlines, lanes, connection cap). A
// storage node's admin port is the same server over another route table
// (StartSite, used by NodeAdminServer), so both apply the same rules.
//
// Rules applied here once for every route, on top of the edge's:
//   - routing by the raw path (keys percent-encoded, see RouteTable), the
//     query parsed from the target only (a body is never read as a form);
//   - with a token, every mutating route (POST/PATCH/DELETE) needs
//     "Authorization: Bearer <token>": checked from the headers, before the
//     body is read (401 otherwise, counted as refused); Start refuses a
//     non-loopback bind address without a token;
//   - an unknown path (404), a wrong method (405) or a bad percent-encoding
//     (400) is answered from the headers too;
//   - /healthz and /readyz run on the edge's I/O thread, /metrics on its
//     observe lane, everything else on the API lane;
//   - every error has the contract's body {"error":{code,reason,message}},
//     also the edge's own (413, 431, 503 BUSY, ...) and a handler that
//     throws (500);
//   - every mutating request is logged with its outcome;
//   - with options.tls, HTTPS only (HttpEdge; ReloadTls() swaps the
//     certificate for new connections).
//
// Thread safety: Start/Shutdown from one thread; port(), stats(),
// SetReady(), ReloadTls() and the handlers' calls into the facade from any
// thread.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admin_server/admin_facade.h"
#include "admin_server/http_edge.h"
#include "admin_server/route_table.h"
#include "mooncake_tier/status.h"
#include "rpc/call_recorder.h"

namespace mooncake_tier::admin {

// The edge's options (address, limits, deadlines, lanes; see HttpEdge)
// and the admin token.
struct AdminServerOptions : HttpEdgeOptions {
  AdminServerOptions() { port = 9003; }
  // Bearer token for mutating routes; empty means none (loopback only).
  std::string token;
};

class AdminServer : private HttpEdgeHandler {
 public:
  using MetricsSource = std::function<std::string()>;

  // What a server serves: its routes, the answer for a path none of them
  // has, and its name for errors and logs.
  struct Site {
    RouteTable routes;
    // Called with the path as received; empty means 404 ROUTE_NOT_FOUND.
    std::function<AdminResponse(const std::string& path)> unrouted;
    std::string what = "the admin API";
  };

  // Binds and starts serving. `facade` must outlive the server; `metrics`
  // may be empty (then /metrics answers 503). `requests`, if given, records
  // every routed request (count, latency, canonical code) and must be built
  // with RouteNames() and outlive the server; the metrics layer reads it
  // (mooncake_admin_requests_total). INVALID_ARGUMENT for a non-loopback
  // address without a token, bad limits, a recorder of other routes or a
  // TLS certificate or key that cannot be used (naming the file);
  // UNAVAILABLE when the address cannot be bound.
  static Result<std::unique_ptr<AdminServer>> Start(
      AdminServerOptions options, AdminFacade* facade, MetricsSource metrics,
      rpc::CallRecorder* requests = nullptr);
  // Serves `site` under the same edge rules. `facade` may be null when no
  // route of the site uses it; `requests`, if given, must be built with
  // RouteNames(site.routes). Errors as Start.
  static Result<std::unique_ptr<AdminServer>> StartSite(
      AdminServerOptions options, Site site, AdminFacade* facade,
      MetricsSource metrics, rpc::CallRecorder* requests = nullptr);

  // "GET /api/v1/status", ... in route-table order: the method names of a
  // request recorder, of the admin API or of `routes`.
  static std::vector<std::string> RouteNames();
  static std::vector<std::string> RouteNames(const RouteTable& routes);
  ~AdminServer() override;  // Shutdown()
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  uint16_t port() const { return edge_->port(); }
  // Connections and refusals of the edge (mooncake_admin_* metrics).
  HttpEdgeStats stats() const { return edge_->stats(); }
  // /readyz answers 200 once set (the daemon sets it when it serves).
  void SetReady(bool ready) { ready_.store(ready); }
  // An HTTPS port: reads the certificate and key files again; new
  // connections get the new certificate, open ones keep theirs. On error
  // (INVALID_ARGUMENT naming the file) the old one stays served.
  // NOT_APPLICABLE for plain HTTP. See HttpEdge::ReloadTls.
  Status ReloadTls() { return edge_->ReloadTls(); }
  const RouteTable& routes() const { return routes_; }
  // Stops accepting, finishes requests in progress and joins the threads.
  // Idempotent.
  void Shutdown();

 private:
  AdminServer(AdminServerOptions options, Site site, AdminFacade* facade,
              MetricsSource metrics, rpc::CallRecorder* requests);
  // HttpEdgeHandler: route, token and lane from the headers; then the
  // handler with the body.
  HttpAdmission Admit(const HttpHead& head) override;
  AdminResponse Handle(const HttpHead& head, std::string body) override;
  // Routes a request; `route` is set when one matched, else the answer is.
  std::optional<AdminResponse> Route(const HttpHead& head,
                                     AdminRequest* request,
                                     const AdminRoute** route) const;
  // Runs a matched route: standby check, handler, logging.
  AdminResponse Serve(const AdminRoute& route, AdminRequest& request) const;

  const AdminServerOptions options_;
  AdminFacade* const facade_;
  const MetricsSource metrics_;
  rpc::CallRecorder* const requests_;
  const RouteTable routes_;
  const std::function<AdminResponse(const std::string& path)> unrouted_;
  const std::string what_;
  std::atomic<bool> ready_{false};
  std::unique_ptr<HttpEdge> edge_;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackAddress(const std::string& address);

}  // namespace mooncake_tier::admin
