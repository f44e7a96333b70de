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
  MT_RETURN_IF_ERROR(process->SetUpCallSecurity());
  MT_RETURN_IF_ERROR(process->StartEngine());
  process->StartControlLane();
  MT_RETURN_IF_ERROR(process->StartServing());
  process->LogServing();
  return process;
}

Status MasterProcess::SetUpCallSecurity() {
  const MasterProcessOptions& o = options_;
  // Caller certificates count only when the server asks for them.
  const bool certificates =
      o.tls.has_identity() && o.tls_client_auth != rpc::TlsClientAuth::kNone;
  if (o.tls.has_identity()) {
    MT_ASSIGN_OR_RETURN(
        tls_, rpc::TlsIdentity::Create(o.tls, rpc::kTlsServer | rpc::kTlsClient,
                                       {rpc::TlsRole::kMaster}));
  } else if (!o.tls.key.empty() || !o.tls.ca.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "--tls-key and --tls-ca need --tls-cert");
  }
  MT_ASSIGN_OR_RETURN(rpc::CallTokens tokens, ReadTokens());
  if (!tokens.node.empty() || !tokens.client.empty() || certificates) {
    MT_ASSIGN_OR_RETURN(authorizer_, rpc::CallAuthorizer::Create(
                                         std::move(tokens), certificates));
  }
  return Status();
}

Status MasterProcess::StartEngine() {
  const rpc::MasterServiceOptions service_options{
      .clock = clock(), .authorizer = authorizer_.get()};
  if (!options_.ha) {
    MT_ASSIGN_OR_RETURN(master_, MasterHost::Create(options_.config, clock()));
    service_ = std::make_unique<rpc::MasterService>(
        &master_->api(), &master_->link(), service_options);
    return Status();
  }
  const MasterHaOptions& ha = *options_.ha;
  HaMasterOptions ha_options;
  ha_options.etcd = ha.etcd;
  ha_options.cluster = ha.cluster;
  ha_options.advertise = ha.advertise.empty() ? options_.listen : ha.advertise;
  ha_options.admin_advertise = ha.admin_advertise;
  ha_options.lease_ttl = ha.lease_ttl;
  ha_options.recovery_timeout = ha.recovery_timeout;
  ha_options.config = options_.config;
  ha_options.config.first_node_id = 1;  // each term picks its own
  ha_options.tick_interval = options_.tick_interval;
  MT_ASSIGN_OR_RETURN(ha_, HaMaster::Start(std::move(ha_options), clock()));
  service_ = std::make_unique<rpc::MasterService>(ha_.get(), service_options);
  return Status();
}

void MasterProcess::StartControlLane() {
  if (!options_.control_lane) return;
  if (authorizer_ || tls_) {
    // The lane is UCX in clear, with no authentication of its own yet: it
    // would serve anyone what gRPC serves only to callers it knows, and
    // show a sniffer what TLS hides.
    spdlog::info(
        "master: no control lane: calls are authenticated or encrypted and "
        "the lane has neither");
    return;
  }
  // Before gRPC serves, so that the first GetControlLane finds it.
  Result<std::unique_ptr<rpc::ControlLaneServer>> lane =
      rpc::ControlLaneServer::Create(
          service_.get(), {.transports = options_.control_lane_transports});
  if (lane.ok()) {
    lane_ = std::move(*lane);
  } else {
    spdlog::warn("master: no control lane, serving gRPC alone: {}",
                 lane.status().ToString());
  }
}

Status MasterProcess::StartServing() {
  rpc::RpcServerOptions server_options;
  server_options.address = options_.listen;
  if (tls_) {
    server_options.credentials =
        rpc::MakeServerCredentials(*tls_, options_.tls_client_auth);
  }
  MT_ASSIGN_OR_RETURN(server_, rpc::RpcServer::Start(
                                   server_options, {service_->grpc_service()}));
  address_ = server_->address();
  if (master_) {
    ticker_.Start(options_.tick_interval, [this] { master_->Tick(); });
  }
  return Status();
}

void MasterProcess::LogServing() const {
  const MasterProcessOptions& o = options_;
  if (tls_) {
    spdlog::info(
        "master: TLS with the certificate {} (client certificates: {}{})",
        o.tls.cert, rpc::TlsClientAuthName(o.tls_client_auth),
        o.tls_client_auth == rpc::TlsClientAuth::kRequire
            ? ""
            : "; callers without one need a token");
  } else if (authorizer_) {
    spdlog::info(
        "master: every call needs a node's or a client's token; tokens "
        "travel in clear over gRPC without TLS");
  }
  if (!authorizer_ && o.insecure) {
    spdlog::warn(
        "master: --insecure: anyone who reaches {} may make any call, "
        "register and deregister nodes included",
        address_);
  }
  spdlog::info(
      "master: serving gRPC on {} (control lane {}, offload {}, promotion on "
      "hit {})",
      address_, lane_ ? "on" : "off", OffloadModeName(o.config.offload_mode),
      o.config.promotion.on_hit ? "on" : "off");
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
