#pragma once

// The admin HTTP server of one mooncake-tierd process and what feeds it:
//   - master and standalone: admin::AdminServer (the whole admin API of
//     ARCHITECTURE.md section 8) over a MasterAdminFacade, with /metrics
//     rendering MasterMetrics (engine stats, the gRPC service's call
//     recorder, the admin server's own request recorder) and, in
//     standalone, the node's NodeMetrics too;
//   - node: admin::NodeAdminServer (/healthz, /readyz, /metrics with the
//     node's NodeMetrics; /api/... points at the master).
// Either /metrics also holds the admin port's own EdgeMetrics.
// /readyz is 503 until SetReady(true) (the runner sets it once the process
// serves, and clears it when a shutdown starts).
//
// Thread safety: Start, SetReady and Shutdown from the runner's threads;
// the servers call the collectors from their worker threads.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "admin_server/http_edge.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {
namespace rpc {
class CallRecorder;
}  // namespace rpc
namespace metrics {
struct EdgeSample;
class EdgeMetrics;
class MasterMetrics;
class NodeMetrics;
}  // namespace metrics
namespace admin {
struct AdminServerOptions;
class AdminServer;
class MasterAdminFacade;
class NodeAdminServer;
}  // namespace admin
}  // namespace mooncake_tier

namespace mooncake_tier::daemon {

class MasterProcess;
class NodeProcess;

// The --admin-* flags of one subcommand.
struct AdminOptions {
  // "host:port" of the admin HTTP server ("[v6addr]:port" for IPv6); port 0
  // picks a free port (the ready file names the one bound); empty disables
  // the server. Default: "127.0.0.1:9003" (master, standalone),
  // "127.0.0.1:9300" (node).
  std::string listen;
  // Bearer token that mutating routes require; empty: none (then only a
  // loopback address may be bound). Default: empty.
  std::string token;
  // File holding the token (surrounding whitespace trimmed); read by
  // ParseCommandLine into `token`. Excludes `token`. Default: empty.
  std::string token_file;
  // Serve HTTPS only, with this PEM certificate chain and key
  // (admin_server/http_edge.h); re-read on SIGHUP. Empty: plain HTTP.
  // Default: empty.
  std::string tls_cert;
  std::string tls_key;
};

inline constexpr std::string_view kMasterAdminListen = "127.0.0.1:9003";
inline constexpr std::string_view kNodeAdminListen = "127.0.0.1:9300";

struct HostPort {
  std::string host;  // without brackets
  uint16_t port = 0;
};
// Splits "host:port" or "[v6addr]:port". INVALID_ARGUMENT (saying what is
// wrong) for a missing host or port, or a port outside 0..65535.
Result<HostPort> SplitHostPort(std::string_view text);
// "host:port", with brackets around an IPv6 host.
std::string JoinHostPort(const std::string& host, uint16_t port);

// Reads the admin token file as rpc::ReadTokenLines reads the gRPC token
// files (blank and '#' lines skipped, whitespace trimmed); it must hold
// exactly one token. INVALID_ARGUMENT when it cannot be read, holds none
// or holds more than one.
Result<std::string> ReadTokenFile(const std::string& path);

class DaemonAdmin {
 public:
  // Starts the admin server of a process holding `master` and/or `node`
  // (at least one; both must outlive this object, or rather: Shutdown()
  // must run before either is shut down). REQUIRES: options.listen is not
  // empty. INVALID_ARGUMENT for a bad address or a non-loopback one without
  // a token, UNAVAILABLE when it cannot be bound.
  static Result<std::unique_ptr<DaemonAdmin>> Start(const AdminOptions& options,
                                                    MasterProcess* master,
                                                    NodeProcess* node);
  ~DaemonAdmin();  // Shutdown()
  DaemonAdmin(const DaemonAdmin&) = delete;
  DaemonAdmin& operator=(const DaemonAdmin&) = delete;

  // "host:port" actually bound (the port is the real one with port 0).
  const std::string& address() const { return address_; }
  // "http://host:port", or "https://..." with TLS.
  std::string url() const;
  // Reads the TLS files again (SIGHUP); bad ones keep the certificate
  // served and are the error. OK on a plain HTTP port.
  Status ReloadTls();
  void SetReady(bool ready);
  // The /metrics body (what a scrape gets).
  std::string RenderMetrics() const;
  // Stops serving (requests in progress finish). Idempotent.
  void Shutdown();

 private:
  DaemonAdmin();
  // The steps of Start. The admin server's options: address, token, TLS
  // files (both or neither).
  static Result<admin::AdminServerOptions> ServerOptionsFrom(
      const AdminOptions& options, const HostPort& bind);
  // A node's metrics, with the SSD requests its segment server answered.
  static std::unique_ptr<metrics::NodeMetrics> NodeMetricsOf(NodeProcess& node);
  // The admin port's connections and refusals, and the certificates in use.
  metrics::EdgeSample SampleEdge(MasterProcess* master,
                                 NodeProcess* node) const;
  // The facade and metrics of `master`: a lone master's, or for an HA
  // member whichever term's master leads when asked.
  void WatchMaster(MasterProcess& master);

  std::string address_;
  bool tls_ = false;
  std::unique_ptr<rpc::CallRecorder> requests_;
  std::unique_ptr<admin::MasterAdminFacade> facade_;
  std::unique_ptr<metrics::MasterMetrics> master_metrics_;
  std::unique_ptr<metrics::NodeMetrics> node_metrics_;
  // The admin port's own connections and refusals (either server's).
  std::unique_ptr<metrics::EdgeMetrics> edge_metrics_;
  std::unique_ptr<admin::AdminServer> server_;
  std::unique_ptr<admin::NodeAdminServer> node_server_;
  // The servers' edge statistics for edge_metrics_, published once the
  // server started (a scrape may run before Start returns).
  std::function<admin::HttpEdgeStats()> edge_stats_;
  std::atomic<bool> edge_stats_ready_{false};
};

}  // namespace mooncake_tier::daemon
