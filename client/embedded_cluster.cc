#include "client/embedded_cluster.h"

#include "client/store_client.h"
#include "core/master_host.h"
#include "node/uring_ssd_device.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier {

EmbeddedCluster::EmbeddedCluster(EmbeddedClusterOptions options)
    : options_(std::move(options)),
      clock_(options_.clock ? options_.clock : SystemClock::Default()) {}

Result<std::unique_ptr<EmbeddedCluster>> EmbeddedCluster::Start(
    EmbeddedClusterOptions options) {
  if (std::string error = options.master.Validate(); !error.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "invalid master config: " + error);
  }
  std::unique_ptr<EmbeddedCluster> cluster(
      new EmbeddedCluster(std::move(options)));
  MT_ASSIGN_OR_RETURN(
      cluster->master_,
      MasterHost::Create(cluster->options_.master, cluster->clock_));
  for (const EmbeddedNodeOptions& node : cluster->options_.nodes) {
    cluster->nodes_.push_back(NodeSlot{node, nullptr, nullptr});
    NodeSlot& slot = cluster->nodes_.back();
    if (node.ssd_bytes > 0 && node.ssd_dir.empty()) {
      slot.memory_device = std::make_unique<MemorySsdDevice>();
    }
    MT_RETURN_IF_ERROR(cluster->StartNode(slot));
  }
  if (cluster->options_.background) {
    cluster->ticker_.Start(cluster->options_.tick_interval,
                           [c = cluster.get()] { c->master_->Tick(); });
  }
  return cluster;
}

Status EmbeddedCluster::StartNode(NodeSlot& slot) {
  std::unique_ptr<SsdStore> store;
  const EmbeddedNodeOptions& o = slot.options;
  if (o.ssd_bytes > 0) {
    std::unique_ptr<SsdDevice> device;
    if (slot.memory_device) {
      device = slot.memory_device->Reopen();
    } else {
      UringSsdDeviceOptions device_options;
      device_options.direct_io = o.direct_io;
      MT_ASSIGN_OR_RETURN(device,
                          UringSsdDevice::Open(o.ssd_dir, device_options));
    }
    SsdStoreOptions store_options;
    store_options.capacity_bytes = o.ssd_bytes;
    MT_ASSIGN_OR_RETURN(store,
                        SsdStore::Open(std::move(device), store_options));
  }
  StorageNodeOptions node_options = o.node;
  node_options.peer_transport = &transport_;  // promotions staged elsewhere
  MT_ASSIGN_OR_RETURN(
      slot.node, StorageNode::Create(std::move(node_options), std::move(store),
                                     &master_->link(), &transport_));
  MT_RETURN_IF_ERROR(slot.node->Register());
  if (options_.background) slot.node->Start();
  return Status::Ok();
}

Master& EmbeddedCluster::master() { return master_->engine(); }

EmbeddedCluster::~EmbeddedCluster() {
  ticker_.Stop();
  for (NodeSlot& slot : nodes_) slot.node.reset();
}

std::unique_ptr<Client> EmbeddedCluster::NewClient(
    const StoreClientOptions& options) {
  StoreClientOptions with_clock = options;
  // Grants are on the master's clock: a test's manual one too.
  if (with_clock.clock == nullptr) with_clock.clock = clock_;
  return std::make_unique<StoreClient>(&master_->api(), &transport_,
                                       with_clock);
}

void EmbeddedCluster::Step() {
  for (NodeSlot& slot : nodes_) {
    if (!slot.node) continue;
    slot.node->HeartbeatOnce().IgnoreError();
    slot.node->PullTasksOnce().status().IgnoreError();
    while (slot.node->RunTasksOnce() > 0) {
    }
  }
  master_->Tick();
}

Status EmbeddedCluster::RestartNode(size_t i) {
  NodeSlot& slot = nodes_.at(i);
  slot.node.reset();
  return StartNode(slot);
}

void EmbeddedCluster::KillNode(size_t i) { nodes_.at(i).node.reset(); }

}  // namespace mooncake_tier
