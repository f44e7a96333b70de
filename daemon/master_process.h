#pragma once

// The master role of mooncake-tierd: a master (core/master_host.h) served
// over gRPC (rpc::MasterService in an rpc::RpcServer), with the master's
// background steps (Tick: node expiry, put and task reaping, eviction,
// group sweeps, proactive promotion) on a thread of their own.
//
// With `ha` set, the master campaigns in a cluster through etcd and serves
// only while it leads (daemon/ha_master.h; the background steps are then
// the leader's).
//
// Used by the `master` and `standalone` subcommands and by tests.
//
// Thread safety: master() is thread-safe (the master is). Start, Shutdown
// and the destructor are called by one owner.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/periodic_thread.h"
#include "core/master_admin.h"
#include "core/master_config.h"
#include "rpc/call_authorizer.h"

namespace mooncake_tier {
class MasterHost;  // core/master_host.h
}  // namespace mooncake_tier

namespace mooncake_tier::rpc {
class CallRecorder;
class ControlLaneServer;
class MasterService;
class RpcServer;
}  // namespace mooncake_tier::rpc

namespace mooncake_tier::daemon {

class HaMaster;  // daemon/ha_master.h

// The --etcd/--cluster flags: a master of a high-availability cluster
// (daemon/ha_master.h).
struct MasterHaOptions {
  std::vector<std::string> etcd;  // REQUIRES: at least one
  std::string cluster;            // REQUIRES: non-empty
  // Published as the leader's gRPC address. Default (empty): `listen`,
  // which then needs a routable host and a fixed port.
  std::string advertise;
  // Published as the leader's admin address ("" none).
  std::string admin_advertise;
  std::chrono::seconds lease_ttl{2};
  Duration recovery_timeout = std::chrono::seconds(10);
};

struct MasterProcessOptions {
  // "host:port" the gRPC service binds; port 0 picks a free port (see
  // MasterProcess::address()). Default: "127.0.0.1:50051".
  std::string listen = "127.0.0.1:50051";
  // The engine's configuration. REQUIRES: config.Validate() is empty.
  MasterConfig config;
  // How often the background steps run. REQUIRES: > 0. Default: 100 ms.
  Duration tick_interval = std::chrono::milliseconds(100);
  // At shutdown, calls in flight get this long to finish before they are
  // cancelled. Default: 1 s.
  Duration shutdown_grace = std::chrono::seconds(1);
  // Set: campaign in a cluster instead of serving alone. Default: unset.
  std::optional<MasterHaOptions> ha;
  // Also serve the hot client calls on a UCX control lane
  // (rpc/control_lane_server.h), found by clients through gRPC. A lane
  // that cannot start is logged and the master serves gRPC alone.
  // Default: on.
  bool control_lane = true;
  // The lane's UCX transports as UCX_TLS spells them; empty keeps UCX's
  // configuration. Default: empty.
  std::string control_lane_transports;
  // Files of the tokens nodes and clients must present with every call
  // (one per line; rpc/call_authorizer.h). With either set, every call is
  // authenticated and the control lane is off (it has no authentication
  // of its own yet). Default: empty (calls are not authenticated).
  std::string node_token_file;
  std::string client_token_file;
  // Serve unauthenticated gRPC on a non-loopback address (refused without
  // it). Default: false.
  bool insecure = false;
  // TLS: the master's certificate (role master, usable as a server), its
  // key and the CA bundle callers' certificates must lead to
  // (rpc/tls_credentials.h). Re-read on SIGHUP. Empty cert: plaintext.
  rpc::TlsFiles tls;
  // With TLS: whether callers must show a certificate. With kRequire or
  // kOptional a caller's certificate proves its role (kOptional: callers
  // without one need a token). Default: kRequire.
  rpc::TlsClientAuth tls_client_auth = rpc::TlsClientAuth::kRequire;

  // Whether every call is authenticated: by tokens, or by certificates
  // that every caller must show.
  bool authenticated() const {
    return !node_token_file.empty() || !client_token_file.empty() ||
           (tls.has_identity() &&
            tls_client_auth == rpc::TlsClientAuth::kRequire);
  }
};

// The first node id a master starting now hands out (see the .cc): ids
// never repeat across restarts and terms.
NodeId FirstNodeIdFromClock();

class MasterProcess {
 public:
  // Validates the options, creates the master and starts serving.
  // INVALID_ARGUMENT for an invalid configuration (the message says what),
  // UNAVAILABLE when the address cannot be bound (in use or invalid).
  static Result<std::unique_ptr<MasterProcess>> Start(
      MasterProcessOptions options);
  // Shuts down if not done yet.
  ~MasterProcess();
  MasterProcess(const MasterProcess&) = delete;
  MasterProcess& operator=(const MasterProcess&) = delete;

  // "host:port" actually bound: what clients and nodes dial.
  const std::string& address() const { return address_; }
  // The engine's operators' interface (the admin API and metrics use it).
  // REQUIRES: a lone master (ha() is null).
  MasterAdmin& master();
  // The cluster role of a master started with `ha`; else null.
  HaMaster* ha() { return ha_.get(); }
  // The master's clock (heartbeat, lease and task ages).
  const Clock* clock() const;
  // Every gRPC call served, by method (mooncake_rpc_requests_total,
  // mooncake_rpc_duration_seconds); valid for the life of this object.
  const rpc::CallRecorder& rpc_recorder() const;

  // Reads the token files again and swaps the tokens in at once (the
  // daemon calls it on SIGHUP). A file that cannot be read or holds a bad
  // token changes nothing and is the error. OK without token files.
  Status ReloadTokens();
  // Reads the TLS files again (SIGHUP): new connections get the new
  // certificate within about a second. Bad files change nothing and are
  // the error. OK without TLS.
  Status ReloadTls();
  // The TLS identity served; null without TLS.
  const rpc::TlsIdentity* tls() const { return tls_.get(); }

  // Stops accepting calls, lets calls in flight finish for up to
  // shutdown_grace, then stops the background thread. Idempotent.
  void Shutdown();

 private:
  explicit MasterProcess(MasterProcessOptions options);
  // The tokens of the token files (empty sets without files).
  Result<rpc::CallTokens> ReadTokens() const;
  // The steps of Start, in order. TLS identity and the call authorizer
  // (tokens, client certificates) from the options.
  Status SetUpCallSecurity();
  // The engine (a lone master, or an HA member) and its gRPC service.
  Status StartEngine();
  // The UCX control lane, unless calls are authenticated or encrypted (the
  // lane has neither); a lane that cannot start leaves gRPC alone.
  void StartControlLane();
  // The gRPC server, then the lone master's tick.
  Status StartServing();
  // What the master serves, and how callers are checked.
  void LogServing() const;

  const MasterProcessOptions options_;
  std::string address_;
  std::unique_ptr<MasterHost> master_;               // a lone master
  std::unique_ptr<HaMaster> ha_;                     // or a cluster's
  std::unique_ptr<rpc::TlsIdentity> tls_;            // null: plaintext
  std::unique_ptr<rpc::CallAuthorizer> authorizer_;  // null: open plane
  std::unique_ptr<rpc::MasterService> service_;
  std::unique_ptr<rpc::ControlLaneServer> lane_;  // null: gRPC only
  std::unique_ptr<rpc::RpcServer> server_;

  PeriodicThread ticker_;  // a lone master's Tick
};

}  // namespace mooncake_tier::daemon
