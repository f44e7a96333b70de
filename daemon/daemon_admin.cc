#include "daemon/daemon_admin.h"

#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "admin_server/admin_server.h"
#include "admin_server/master_admin_facade.h"
#include "admin_server/node_admin_server.h"
#include "core/master_host.h"
#include "daemon/ha_master.h"
#include "daemon/master_process.h"
#include "daemon/node_process.h"
#include "metrics/edge_metrics.h"
#include "metrics/master_metrics.h"
#include "metrics/node_metrics.h"
#include "metrics/text_exposition.h"
#include "rpc/call_authorizer.h"
#include "rpc/call_recorder.h"
#include "transport/ucx_segment_exporter.h"

namespace mooncake_tier::daemon {
namespace {

Status BadAddress(std::string_view text, std::string_view why) {
  std::string message = "'";
  message.append(text).append("' is not HOST:PORT (").append(why).append(")");
  return Status(ErrorReason::kInvalidArgument, std::move(message));
}

}  // namespace

Result<HostPort> SplitHostPort(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return BadAddress(text, "no port");
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return BadAddress(text, "write an IPv6 host in brackets: [::1]:9003");
  }
  if (host.empty()) return BadAddress(text, "no host");
  unsigned value = 0;
  const auto [end, error] =
      std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || error != std::errc() ||
      end != port.data() + port.size() || value > 65535) {
    return BadAddress(text, "the port must be a number from 0 to 65535");
  }
  return HostPort{std::string(host), static_cast<uint16_t>(value)};
}

std::string JoinHostPort(const std::string& host, uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<std::string> ReadTokenFile(const std::string& path) {
  Result<std::vector<std::string>> tokens = rpc::ReadTokenLines(path);
  if (!tokens.ok()) {
    return Status(ErrorReason::kInvalidArgument,
                  "--admin-token-file: " + tokens.status().message());
  }
  if (tokens->size() != 1) {
    return Status(ErrorReason::kInvalidArgument,
                  "--admin-token-file: '" + path + "' holds " +
                      std::to_string(tokens->size()) +
                      " tokens; the admin API takes one");
  }
  return std::move(tokens->front());
}

namespace {

admin::ClusterRole ClusterRoleOf(const HaView& view) {
  admin::ClusterRole role;
  role.cluster = view.cluster;
  role.leader = view.role == MasterRole::kLeader;
  role.term = view.term;
  role.leader_rpc = view.leader;
  role.leader_admin = view.leader_admin;
  role.failovers = view.failovers;
  role.recovering = view.recovering;
  role.nodes_expected = view.nodes_expected;
  role.nodes_registered = view.nodes_registered;
  role.in_sync = view.in_sync;
  return role;
}

metrics::MasterRoleSample RoleSampleOf(const HaView& view) {
  return metrics::MasterRoleSample{.leader = view.role == MasterRole::kLeader,
                                   .term = view.term,
                                   .failovers = view.failovers,
                                   .in_sync = view.in_sync,
                                   .recovering = view.recovering};
}

}  // namespace

DaemonAdmin::DaemonAdmin() = default;

DaemonAdmin::~DaemonAdmin() { Shutdown(); }

Result<std::unique_ptr<DaemonAdmin>> DaemonAdmin::Start(
    const AdminOptions& options, MasterProcess* master, NodeProcess* node) {
  if (master == nullptr && node == nullptr) {
    return Status(ErrorReason::kInvalidArgument,
                  "an admin server needs a master or a node");
  }
  MT_ASSIGN_OR_RETURN(const HostPort bind, SplitHostPort(options.listen));
  MT_ASSIGN_OR_RETURN(const admin::AdminServerOptions server_options,
                      ServerOptionsFrom(options, bind));
  std::unique_ptr<DaemonAdmin> admin(new DaemonAdmin());
  admin->tls_ = server_options.tls.has_value();
  if (node != nullptr) admin->node_metrics_ = NodeMetricsOf(*node);
  DaemonAdmin* self = admin.get();
  admin->edge_metrics_ = std::make_unique<metrics::EdgeMetrics>(
      [self, master, node] { return self->SampleEdge(master, node); });
  auto render = [self] { return self->RenderMetrics(); };
  if (master != nullptr) {
    admin->WatchMaster(*master);
    MT_ASSIGN_OR_RETURN(
        admin->server_,
        admin::AdminServer::Start(server_options, admin->facade_.get(), render,
                                  admin->requests_.get()));
    admin->address_ = JoinHostPort(bind.host, admin->server_->port());
    admin->edge_stats_ = [self] { return self->server_->stats(); };
  } else {
    MT_ASSIGN_OR_RETURN(admin->node_server_,
                        admin::NodeAdminServer::Start(
                            server_options, node->options().node.name, render));
    admin->address_ = JoinHostPort(bind.host, admin->node_server_->port());
    admin->edge_stats_ = [self] { return self->node_server_->stats(); };
  }
  admin->edge_stats_ready_.store(true, std::memory_order_release);
  return admin;
}

Result<admin::AdminServerOptions> DaemonAdmin::ServerOptionsFrom(
    const AdminOptions& options, const HostPort& bind) {
  admin::AdminServerOptions server_options;
  server_options.bind_address = bind.host;
  server_options.port = bind.port;
  server_options.token = options.token;
  if (!options.tls_cert.empty() || !options.tls_key.empty()) {
    if (options.tls_cert.empty() || options.tls_key.empty()) {
      return Status(ErrorReason::kInvalidArgument,
                    "--admin-tls-cert and --admin-tls-key go together");
    }
    server_options.tls = admin::HttpEdgeTls{.cert_file = options.tls_cert,
                                            .key_file = options.tls_key};
  }
  return server_options;
}

std::unique_ptr<metrics::NodeMetrics> DaemonAdmin::NodeMetricsOf(
    NodeProcess& node) {
  UcxSegmentExporter* exporter = node.exporter();
  const std::string name = node.options().node.name;
  return std::make_unique<metrics::NodeMetrics>(&node.node(), [exporter, name] {
    metrics::TransferRequestCounts counts;
    if (exporter == nullptr) return counts;
    Result<UcxSegmentServerStats> stats = exporter->StatsFor(name);
    if (!stats.ok()) return counts;
    counts.served = stats->ssd_requests_served;
    counts.rejected = stats->ssd_requests_rejected;
    counts.malformed = stats->malformed_requests;
    return counts;
  });
}

metrics::EdgeSample DaemonAdmin::SampleEdge(MasterProcess* master,
                                            NodeProcess* node) const {
  admin::HttpEdgeStats stats;
  if (edge_stats_ready_.load(std::memory_order_acquire)) stats = edge_stats_();
  metrics::EdgeSample sample;
  sample.connections_open = stats.connections_open;
  sample.connections_accepted = stats.connections_accepted;
  sample.idle_timeouts = stats.idle_closed;
  sample.idle_evicted = stats.idle_evicted;
  for (size_t i = 0; i < admin::kHttpRefusalCount; ++i) {
    sample.refused.emplace_back(
        admin::HttpRefusalName(static_cast<admin::HttpRefusal>(i)),
        stats.refused[i]);
  }
  // Certificates in use: this port's, the master's gRPC one and the one
  // a node dials its master with.
  if (stats.tls_not_after != 0) {
    sample.tls.push_back({"admin", stats.tls_not_after, 0});
  }
  auto grpc = [&sample](const char* plane, const rpc::TlsIdentity* tls) {
    if (tls == nullptr || !tls->has_identity()) return;
    sample.tls.push_back({plane,
                          std::chrono::duration_cast<std::chrono::seconds>(
                              tls->not_after().time_since_epoch())
                              .count(),
                          tls->reload_failures()});
  };
  if (master != nullptr) grpc("grpc", master->tls());
  if (node != nullptr) grpc("grpc_client", node->tls());
  return sample;
}

void DaemonAdmin::WatchMaster(MasterProcess& master) {
  requests_ =
      std::make_unique<rpc::CallRecorder>(admin::AdminServer::RouteNames());
  HaMaster* ha = master.ha();
  if (ha == nullptr) {
    facade_ = std::make_unique<admin::MasterAdminFacade>(&master.master(),
                                                         master.clock());
    master_metrics_ = std::make_unique<metrics::MasterMetrics>(
        &master.master(), master.clock(), &master.rpc_recorder(),
        requests_.get());
    return;
  }
  // A cluster's master: whichever term's master leads now, if any.
  auto current = [ha]() -> std::shared_ptr<MasterAdmin> {
    std::shared_ptr<MasterHost> host = ha->current();
    if (!host) return nullptr;
    return std::shared_ptr<MasterAdmin>(host, &host->admin());
  };
  facade_ = std::make_unique<admin::MasterAdminFacade>(
      current, [ha] { return ClusterRoleOf(ha->View()); }, master.clock());
  master_metrics_ = std::make_unique<metrics::MasterMetrics>(
      [current]() -> std::shared_ptr<const MasterAdmin> { return current(); },
      [ha] { return RoleSampleOf(ha->View()); }, master.clock(),
      &master.rpc_recorder(), requests_.get());
}

std::string DaemonAdmin::url() const {
  return (tls_ ? "https://" : "http://") + address_;
}

Status DaemonAdmin::ReloadTls() {
  if (!tls_) return Status::Ok();
  if (server_) return server_->ReloadTls();
  if (node_server_) return node_server_->ReloadTls();
  return Status::Ok();
}

void DaemonAdmin::SetReady(bool ready) {
  if (server_) server_->SetReady(ready);
  if (node_server_) node_server_->SetReady(ready);
}

std::string DaemonAdmin::RenderMetrics() const {
  std::vector<const prometheus::Collectable*> collectors;
  if (master_metrics_) collectors.push_back(master_metrics_.get());
  if (node_metrics_) collectors.push_back(node_metrics_.get());
  if (edge_metrics_) collectors.push_back(edge_metrics_.get());
  return metrics::RenderText(collectors);
}

void DaemonAdmin::Shutdown() {
  if (server_) server_->Shutdown();
  if (node_server_) node_server_->Shutdown();
}

}  // namespace mooncake_tier::daemon
