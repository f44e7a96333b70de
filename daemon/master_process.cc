#include "daemon/master_process.h"

#include <chrono>
#include <utility>

#include "core/master_host.h"
#include "daemon/ha_master.h"
#include "rpc/call_authorizer.h"
#include "rpc/control_lane_server.h"
#include "rpc/master_service.h"
#include "rpc/rpc_server.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::daemon {
// Node ids of this master's life start at its start time in milliseconds
// times 4096: a restarted master never hands out an id an earlier one gave
// a node (unless over 4096 nodes registered per millisecond of uptime), so
// clients' cached endpoints and nodes' stale reports can never name the
// wrong node. Ids stay below 2^53 (exact in JSON) until about 2039.
NodeId FirstNodeIdFromClock() {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return (static_cast<NodeId>(ms) << 12) + 1;
}

MasterProcess::MasterProcess(MasterProcessOptions options)
    : options_(std::move(options)) {}

Result<std::unique_ptr<MasterProcess>> MasterProcess::Start(
    MasterProcessOptions options) {
  if (std::string error = options.config.Validate(); !error.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "invalid master configuration: " + error);
  }
  if (options.tick_interval.count() <= 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "tick interval must be positive");
  }
  if (options.config.first_node_id == 1) {
    options.config.first_node_id = FirstNodeIdFromClock();
  }
  std::unique_ptr<MasterProcess> process(new MasterProcess(std::move(options)));
  const MasterProcessOptions& o = process->options_;
  // Caller certificates count only when the server asks for them.
  const bool certificates =
      o.tls.has_identity() && o.tls_client_auth != rpc::TlsClientAuth::kNone;
  if (o.tls.has_identity()) {
    MT_ASSIGN_OR_RETURN(
        process->tls_,
        rpc::TlsIdentity::Create(o.tls, rpc::kTlsServer | rpc::kTlsClient,
                                 {rpc::TlsRole::kMaster}));
  } else if (!o.tls.key.empty() || !o.tls.ca.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "--tls-key and --tls-ca need --tls-cert");
  }
  MT_ASSIGN_OR_RETURN(rpc::CallTokens tokens, process->ReadTokens());
  if (!tokens.node.empty() || !tokens.client.empty() || certificates) {
    MT_ASSIGN_OR_RETURN(
        process->authorizer_,
        rpc::CallAuthorizer::Create(std::move(tokens), certificates));
  }
  const rpc::MasterServiceOptions service_options{
      .clock = process->clock(), .authorizer = process->authorizer_.get()};
  if (process->options_.ha) {
    const MasterHaOptions& ha = *process->options_.ha;
    HaMasterOptions ha_options;
    ha_options.etcd = ha.etcd;
    ha_options.cluster = ha.cluster;
    ha_options.advertise =
        ha.advertise.empty() ? process->options_.listen : ha.advertise;
    ha_options.admin_advertise = ha.admin_advertise;
    ha_options.lease_ttl = ha.lease_ttl;
    ha_options.recovery_timeout = ha.recovery_timeout;
    ha_options.config = process->options_.config;
    ha_options.config.first_node_id = 1;  // each term picks its own
    ha_options.tick_interval = process->options_.tick_interval;
    MT_ASSIGN_OR_RETURN(
        process->ha_, HaMaster::Start(std::move(ha_options), process->clock()));
    process->service_ = std::make_unique<rpc::MasterService>(process->ha_.get(),
                                                             service_options);
  } else {
    MT_ASSIGN_OR_RETURN(
        process->master_,
        MasterHost::Create(process->options_.config, process->clock()));
    process->service_ = std::make_unique<rpc::MasterService>(
        &process->master_->api(), &process->master_->link(), service_options);
  }
  if (process->options_.control_lane &&
      (process->authorizer_ || process->tls_)) {
    // The lane is UCX in clear, with no authentication of its own yet: it
    // would serve anyone what gRPC serves only to callers it knows, and
    // show a sniffer what TLS hides.
    spdlog::info(
        "master: no control lane: calls are authenticated or encrypted and "
        "the lane has neither");
  } else if (process->options_.control_lane) {
    // Before gRPC serves, so that the first GetControlLane finds it.
    Result<std::unique_ptr<rpc::ControlLaneServer>> lane =
        rpc::ControlLaneServer::Create(
            process->service_.get(),
            {.transports = process->options_.control_lane_transports});
    if (lane.ok()) {
      process->lane_ = std::move(*lane);
    } else {
      spdlog::warn("master: no control lane, serving gRPC alone: {}",
                   lane.status().ToString());
    }
  }
  rpc::RpcServerOptions server_options;
  server_options.address = process->options_.listen;
  if (process->tls_) {
    server_options.credentials =
        rpc::MakeServerCredentials(*process->tls_, o.tls_client_auth);
  }
  MT_ASSIGN_OR_RETURN(process->server_,
                      rpc::RpcServer::Start(
                          server_options, {process->service_->grpc_service()}));
  process->address_ = process->server_->address();
  if (process->master_) {
    process->ticker_.Start(process->options_.tick_interval,
                           [p = process.get()] { p->master_->Tick(); });
  }
  if (process->tls_) {
    spdlog::info(
        "master: TLS with the certificate {} (client certificates: {}{})",
        o.tls.cert, rpc::TlsClientAuthName(o.tls_client_auth),
        o.tls_client_auth == rpc::TlsClientAuth::kRequire
            ? ""
            : "; callers without one need a token");
  } else if (process->authorizer_) {
    spdlog::info(
        "master: every call needs a node's or a client's token; tokens "
        "travel in clear over gRPC without TLS");
  }
  if (!process->authorizer_ && process->options_.insecure) {
    spdlog::warn(
        "master: --insecure: anyone who reaches {} may make any call, "
        "register and deregister nodes included",
        process->address_);
  }
  spdlog::info(
      "master: serving gRPC on {} (control lane {}, offload {}, promotion on "
      "hit {})",
      process->address_, process->lane_ ? "on" : "off",
      OffloadModeName(process->options_.config.offload_mode),
      process->options_.config.promotion.on_hit ? "on" : "off");
  return process;
}

MasterProcess::~MasterProcess() { Shutdown(); }

MasterAdmin& MasterProcess::master() { return master_->admin(); }

const Clock* MasterProcess::clock() const { return SystemClock::Default(); }

const rpc::CallRecorder& MasterProcess::rpc_recorder() const {
  return service_->recorder();
}

Result<rpc::CallTokens> MasterProcess::ReadTokens() const {
  rpc::CallTokens tokens;
  if (!options_.node_token_file.empty()) {
    MT_ASSIGN_OR_RETURN(tokens.node,
                        rpc::ReadTokenLines(options_.node_token_file));
  }
  if (!options_.client_token_file.empty()) {
    MT_ASSIGN_OR_RETURN(tokens.client,
                        rpc::ReadTokenLines(options_.client_token_file));
  }
  return tokens;
}

Status MasterProcess::ReloadTokens() {
  if (authorizer_ == nullptr) return Status::Ok();
  MT_ASSIGN_OR_RETURN(rpc::CallTokens tokens, ReadTokens());
  MT_RETURN_IF_ERROR(authorizer_->SetTokens(std::move(tokens)));
  spdlog::info("master: tokens reloaded");
  return Status::Ok();
}

Status MasterProcess::ReloadTls() {
  if (tls_ == nullptr) return Status::Ok();
  MT_RETURN_IF_ERROR(tls_->Reload());
  spdlog::info("master: TLS certificate {} reloaded", options_.tls.cert);
  return Status::Ok();
}

void MasterProcess::Shutdown() {
  // A cluster's master steps down first: a standby takes over while the
  // calls in flight here end (NOT_LEADER sends their callers on).
  if (ha_) ha_->Shutdown();
  // Lane calls in flight finish first; clients then go over gRPC, which
  // the grace below lets finish.
  lane_.reset();
  if (server_) {
    spdlog::info("master: shutting down the gRPC server (grace {} ms)",
                 std::chrono::duration_cast<std::chrono::milliseconds>(
                     options_.shutdown_grace)
                     .count());
    server_->Shutdown(options_.shutdown_grace);
    server_.reset();
  }
  if (ticker_.running()) {
    ticker_.Stop();
    spdlog::info("master: background thread stopped");
  }
}

}  // namespace mooncake_tier::daemon
