#pragma once

// The admin HTTP server (cpp-httplib) of the master: the routes of
// BuildAdminRoutes() over an AdminFacade, plus /metrics from a callback.
// It serves on its own threads until Shutdown(). A storage node's admin
// port is the same server over another route table (StartSite, used by
// NodeAdminServer), so both apply the same edge rules.
//
// Edge rules, applied here once for every route:
//   - routing by the raw path (keys percent-encoded, see RouteTable);
//   - with a token, every mutating route (POST/PATCH/DELETE) needs
//     "Authorization: Bearer <token>" (401 otherwise); Start refuses a
//     non-loopback bind address without a token;
//   - request bodies over max_body_bytes are 413, headers over
//     max_header_bytes 431;
//   - every error has the contract's body {"error":{code,reason,message}},
//     also the ones httplib raises itself (400 for a malformed request,
//     ...) and a handler that throws (500);
//   - every mutating request is logged with its outcome.
//
// Thread safety: Start/Shutdown from one thread; port(), SetReady() and
// the handlers' calls into the facade from any thread.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "admin_server/admin_facade.h"
#include "admin_server/route_table.h"
#include "mooncake_tier/status.h"
#include "rpc/call_recorder.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace mooncake_tier::admin {

struct AdminServerOptions {
  // Default: loopback only.
  std::string bind_address = "127.0.0.1";
  // 0 picks a free port (read it back with port()). Default: 9003.
  uint16_t port = 9003;
  // Bearer token for mutating routes; empty means none (loopback only).
  std::string token;
  // Largest request body accepted. Default: 64 KiB.
  size_t max_body_bytes = 64 << 10;
  // Largest sum of header names and values accepted. Default: 16 KiB.
  size_t max_header_bytes = 16 << 10;
  // Worker threads serving requests; an idle keep-alive connection holds
  // one for up to keep_alive_seconds. Default: 8.
  size_t threads = 8;
  // Default: 2 s.
  int keep_alive_seconds = 2;
};

class AdminServer {
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
  // address without a token, bad limits or a recorder of other routes;
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
  ~AdminServer();  // Shutdown()
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  uint16_t port() const { return port_; }
  // /readyz answers 200 once set (the daemon sets it when it serves).
  void SetReady(bool ready) { ready_.store(ready); }
  const RouteTable& routes() const { return routes_; }
  // Stops accepting, finishes requests in progress and joins the threads.
  // Idempotent.
  void Shutdown();

 private:
  AdminServer(AdminServerOptions options, Site site, AdminFacade* facade,
              MetricsSource metrics, rpc::CallRecorder* requests);
  // Limits, thread pool, edge handlers and the catch-all routes.
  void InstallHandlers();
  Status Listen();
  // Routes one request: match, token check, handler, response.
  void Dispatch(const httplib::Request& req, httplib::Response& res) const;
  // Runs a matched route: token check, handler, logging.
  AdminResponse Serve(const AdminRoute& route, AdminRequest& request,
                      const httplib::Request& req,
                      httplib::Response& res) const;

  const AdminServerOptions options_;
  AdminFacade* const facade_;
  const MetricsSource metrics_;
  rpc::CallRecorder* const requests_;
  const RouteTable routes_;
  const std::function<AdminResponse(const std::string& path)> unrouted_;
  const std::string what_;
  std::atomic<bool> ready_{false};
  uint16_t port_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackAddress(const std::string& address);

}  // namespace mooncake_tier::admin
