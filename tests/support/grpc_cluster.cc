#include "tests/support/grpc_cluster.h"

#include <chrono>
#include <utility>

#include "client/store_client.h"
#include "core/local_master.h"
#include "mooncake_tier/remote_client.h"
#include "node/memory_ssd_device.h"
#include "node/ssd_store.h"
#include "node/storage_node.h"
#include "rpc/control_lane_server.h"
#include "rpc/grpc_master_api.h"
#include "rpc/grpc_master_link.h"
#include "rpc/master_service.h"
#include "rpc/rpc_server.h"
#include "transport/in_process_transport.h"
#include "transport/ucx_segment_exporter.h"
#include "transport/ucx_transport.h"

namespace mooncake_tier::testing {

MasterConfig GrpcClusterOptions::DefaultMasterConfig() {
  MasterConfig config;
  config.offload_mode = OffloadMode::kOnEvict;
  return config;
}

Result<std::unique_ptr<GrpcCluster>> GrpcCluster::Start(
    const GrpcClusterOptions& options) {
  std::unique_ptr<GrpcCluster> cluster(new GrpcCluster(options));
  MT_RETURN_IF_ERROR(cluster->StartServer());
  if (options.plane == GrpcClusterOptions::DataPlane::kUcx) {
    MT_RETURN_IF_ERROR(cluster->StartUcx());
  }
  for (const std::string& name : options.node_names) {
    MT_RETURN_IF_ERROR(cluster->StartNode(name));
  }
  cluster->ticker_.Start(std::chrono::milliseconds(50),
                         [raw = cluster.get()] { raw->master_->Tick(); });
  return cluster;
}

GrpcCluster::GrpcCluster(const GrpcClusterOptions& options)
    : options_(options),
      master_(std::make_unique<Master>(options.master_config,
                                       SystemClock::Default())),
      local_api_(std::make_unique<LocalMasterApi>(master_.get())),
      local_link_(std::make_unique<LocalMasterLink>(master_.get())),
      service_(std::make_unique<rpc::MasterService>(
          local_api_.get(), local_link_.get(),
          rpc::MasterServiceOptions{.clock = SystemClock::Default()})),
      transport_(std::make_unique<InProcessTransport>()) {}

GrpcCluster::~GrpcCluster() {
  ticker_.Stop();
  nodes_.clear();  // stops their threads before the link goes
  if (server_) server_->Shutdown();
}

const std::string& GrpcCluster::master_address() const {
  return server_->address();
}

Result<std::unique_ptr<Client>> GrpcCluster::NewClient() {
  if (options_.plane == GrpcClusterOptions::DataPlane::kInProcess) {
    return std::unique_ptr<Client>(
        std::make_unique<StoreClient>(api_.get(), transport_.get()));
  }
  RemoteClientOptions options;
  options.master = server_->address();
  options.shared_memory = options_.shared_memory;
  return ConnectRemote(options);
}

Status GrpcCluster::StartServer() {
  MT_ASSIGN_OR_RETURN(server_,
                      rpc::RpcServer::Start(rpc::RpcServerOptions(),
                                            {service_->grpc_service()}));
  rpc::GrpcChannelOptions channel;
  channel.target = server_->address();
  MT_ASSIGN_OR_RETURN(api_, rpc::GrpcMasterApi::Create(channel));
  MT_ASSIGN_OR_RETURN(link_, rpc::GrpcMasterLink::Create(channel));
  return Status();
}

uint64_t GrpcCluster::master_calls(rpc::MasterMethod method) const {
  uint64_t calls = 0;
  service_->recorder().Visit([&](const rpc::CallStats& stats) {
    if (stats.method == rpc::MasterMethodName(method)) calls = stats.calls;
  });
  return calls;
}

Status GrpcCluster::StartUcx() {
  if (options_.control_lane) {
    MT_ASSIGN_OR_RETURN(lane_, rpc::ControlLaneServer::Create(service_.get()));
  }
  UcxExporterOptions exporter_options;
  exporter_options.shared_memory = options_.shared_memory;
  MT_ASSIGN_OR_RETURN(exporter_, UcxSegmentExporter::Create(exporter_options));
  UcxTransportOptions transport_options;
  transport_options.shared_memory = options_.shared_memory;
  MT_ASSIGN_OR_RETURN(peer_transport_, UcxTransport::Create(transport_options));
  return Status();
}

Status GrpcCluster::StartNode(const std::string& name) {
  SsdStoreOptions ssd_options;
  ssd_options.capacity_bytes = options_.node_ssd_bytes;
  MT_ASSIGN_OR_RETURN(
      std::unique_ptr<SsdStore> ssd,
      SsdStore::Open(std::make_unique<MemorySsdDevice>(), ssd_options));
  StorageNodeOptions options;
  options.name = name;
  options.dram_bytes = options_.node_dram_bytes;
  options.heartbeat_interval = std::chrono::milliseconds(50);
  SegmentExporter* exporter = transport_.get();
  if (options_.plane == GrpcClusterOptions::DataPlane::kUcx) {
    exporter = exporter_.get();
    options.peer_transport = peer_transport_.get();
  }
  MT_ASSIGN_OR_RETURN(
      std::unique_ptr<StorageNode> node,
      StorageNode::Create(options, std::move(ssd), link_.get(), exporter));
  MT_RETURN_IF_ERROR(node->Register());
  node->Start();
  nodes_.push_back(std::move(node));
  return Status();
}

}  // namespace mooncake_tier::testing
