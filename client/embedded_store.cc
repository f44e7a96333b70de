#include "mooncake_tier/embedded_store.h"

#include "client/embedded_cluster.h"

namespace mooncake_tier {

struct EmbeddedStore::Impl {
  std::unique_ptr<EmbeddedCluster> cluster;
  std::unique_ptr<Client> client;
};

EmbeddedStore::EmbeddedStore(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

EmbeddedStore::~EmbeddedStore() {
  if (impl_) impl_->client.reset();
}

Result<std::unique_ptr<EmbeddedStore>> EmbeddedStore::Open(
    const EmbeddedStoreOptions& options) {
  std::optional<OffloadMode> mode = ParseOffloadMode(options.offload_mode);
  if (!mode) {
    return Status(ErrorReason::kInvalidArgument,
                  "offload_mode must be off, write_through or on_evict, not '" +
                      options.offload_mode + "'");
  }
  EmbeddedClusterOptions cluster;
  cluster.master.offload_mode = *mode;
  cluster.master.eviction_high_watermark = options.eviction_high_watermark;
  cluster.master.eviction_ratio = options.eviction_ratio;
  EmbeddedNodeOptions node;
  node.node.name = "standalone";
  node.node.dram_bytes = options.dram_bytes;
  if (!options.ssd_dir.empty()) {
    node.ssd_dir = options.ssd_dir;
    node.ssd_bytes = options.ssd_bytes;
    node.direct_io = options.direct_io;
  }
  cluster.nodes.push_back(std::move(node));
  MT_ASSIGN_OR_RETURN(std::unique_ptr<EmbeddedCluster> started,
                      EmbeddedCluster::Start(std::move(cluster)));
  auto impl = std::make_unique<Impl>();
  impl->client = started->NewClient();
  impl->cluster = std::move(started);
  return std::unique_ptr<EmbeddedStore>(new EmbeddedStore(std::move(impl)));
}

Client& EmbeddedStore::client() { return *impl_->client; }

std::unique_ptr<Client> EmbeddedStore::NewClient() {
  return impl_->cluster->NewClient();
}

}  // namespace mooncake_tier
