#include "daemon/node_process.h"

#include <utility>

#include "daemon/ssd_dir_lock.h"
#include "node/ssd_store.h"
#include "node/uring_ssd_device.h"
#include "rpc/grpc_master_link.h"
#include "spdlog/spdlog.h"
#include "transport/ucx_segment_exporter.h"
#include "transport/ucx_transport.h"

namespace mooncake_tier::daemon {

NodeProcessOptions::NodeProcessOptions() {
  node.dram_bytes = uint64_t{1} << 30;
  node.populate_dram = true;
}

NodeProcess::NodeProcess(NodeProcessOptions options)
    : options_(std::move(options)) {}

Result<std::unique_ptr<NodeProcess>> NodeProcess::Start(
    NodeProcessOptions options) {
  if (options.node.name.empty()) {
    return Status(ErrorReason::kInvalidArgument, "node name is empty");
  }
  std::unique_ptr<NodeProcess> process(new NodeProcess(std::move(options)));
  Status opened = process->Open();
  if (!opened.ok()) {
    process->Shutdown();
    return opened;
  }
  process->node_->Start();
  spdlog::info("node '{}': started; registering with the master at {}",
               process->options_.node.name, process->options_.master_address);
  return process;
}

Status NodeProcess::Open() {
  const NodeProcessOptions& o = options_;
  std::unique_ptr<SsdStore> store;
  if (o.ssd_capacity > 0) {
    MT_ASSIGN_OR_RETURN(ssd_lock_, SsdDirLock::Acquire(o.ssd_dir));
    UringSsdDeviceOptions device_options;
    device_options.direct_io = o.direct_io;
    device_options.fall_back_to_buffered = true;
    MT_ASSIGN_OR_RETURN(std::unique_ptr<UringSsdDevice> device,
                        UringSsdDevice::Open(o.ssd_dir, device_options));
    SsdStoreOptions store_options;
    store_options.capacity_bytes = o.ssd_capacity;
    MT_ASSIGN_OR_RETURN(store,
                        SsdStore::Open(std::move(device), store_options));
    spdlog::info("node '{}': SSD store at {} holds {} objects", o.node.name,
                 o.ssd_dir, store->stats().live_records);
  }
  rpc::GrpcChannelOptions channel;
  channel.target = o.master_address;
  channel.deadline = o.rpc_deadline;
  channel.token = o.token;
  if (!o.tls.ca.empty()) {
    MT_ASSIGN_OR_RETURN(
        tls_,
        rpc::TlsIdentity::Create(o.tls, rpc::kTlsClient,
                                 {rpc::TlsRole::kNode, rpc::TlsRole::kMaster}));
    channel.tls = tls_;
    channel.tls_server_name = o.tls_server_name;
  } else if (o.tls.has_identity() || !o.tls_server_name.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "--tls-cert, --tls-key and --tls-server-name need --tls-ca");
  }
  MT_ASSIGN_OR_RETURN(link_, rpc::GrpcMasterLink::Create(channel));

  UcxTransportOptions transport_options;
  transport_options.transports = o.ucx_transports;
  transport_options.timeout = o.ucx_timeout;
  transport_options.shared_memory = o.shared_memory;
  MT_ASSIGN_OR_RETURN(peer_transport_, UcxTransport::Create(transport_options));
  UcxExporterOptions exporter_options;
  exporter_options.transports = o.ucx_transports;
  exporter_options.timeout = o.ucx_timeout;
  exporter_options.ssd_threads = o.ssd_read_threads;
  exporter_options.shared_memory = o.shared_memory;
  MT_ASSIGN_OR_RETURN(exporter_, UcxSegmentExporter::Create(exporter_options));

  StorageNodeOptions node_options = o.node;
  node_options.peer_transport = peer_transport_.get();
  // Staged SSD reads need the segment shared with same-host clients.
  if (!o.shared_memory) node_options.ssd_read_staging_bytes = 0;
  MT_ASSIGN_OR_RETURN(
      node_, StorageNode::Create(std::move(node_options), std::move(store),
                                 link_.get(), exporter_.get()));
  return Status::Ok();
}

NodeProcess::~NodeProcess() { Shutdown(); }

Status NodeProcess::ReloadTls() {
  if (tls_ == nullptr) return Status::Ok();
  MT_RETURN_IF_ERROR(tls_->Reload());
  spdlog::info("node '{}': TLS files reloaded", options_.node.name);
  return Status::Ok();
}

bool NodeProcess::registered() const {
  return node_ && node_->stats().registrations > 0;
}

void NodeProcess::Shutdown() {
  const std::string& name = options_.node.name;
  if (node_) {
    spdlog::info("node '{}': stopping heartbeat and task threads", name);
    // Joins (the batch in progress finishes), deregisters from the master
    // (bounded by rpc_deadline) and syncs SSD.
    node_->Stop();
    spdlog::info("node '{}': threads stopped, deregistered, SSD store synced",
                 name);
    node_.reset();  // withdraws the segment, closes the store
    spdlog::info("node '{}': segment withdrawn", name);
  }
  exporter_.reset();
  peer_transport_.reset();
  link_.reset();
  if (ssd_lock_) {
    ssd_lock_.reset();
    spdlog::info("node '{}': SSD directory {} released", name,
                 options_.ssd_dir);
  }
}

}  // namespace mooncake_tier::daemon
