#pragma once

// A whole store in one process: a Master, any number of StorageNodes and an
// in-process transport, with clients on top. Standalone mode runs one node;
// tests run several, drive time with a ManualClock and step the background
// work by hand (background = false), or let threads run it.
//
// Thread safety: clients and Step() may be used from many threads; node
// restarts must not race with Step().

#include <memory>
#include <string>
#include <vector>

#include "base/periodic_thread.h"
#include "client/store_client.h"
#include "core/master_config.h"
#include "mooncake_tier/client.h"
#include "node/memory_ssd_device.h"
#include "node/storage_node.h"
#include "protocol/master_api.h"
#include "protocol/master_link.h"
#include "transport/in_process_transport.h"

namespace mooncake_tier {

class Master;      // core/master.h
class MasterHost;  // core/master_host.h

struct EmbeddedNodeOptions {
  StorageNodeOptions node;
  // SSD tier: capacity 0 means none. With an empty directory the SSD store
  // lives in memory (tests); otherwise in real files there.
  uint64_t ssd_bytes = 0;
  std::string ssd_dir;
  bool direct_io = false;
};

struct EmbeddedClusterOptions {
  MasterConfig master;
  std::vector<EmbeddedNodeOptions> nodes;
  // Time source; null means the system clock.
  const Clock* clock = nullptr;
  // Run the master's background steps and the nodes' threads. With false,
  // call Step() instead.
  bool background = true;
  // How often the master runs its background steps. Default: 100 ms.
  Duration tick_interval = std::chrono::milliseconds(100);
};

class EmbeddedCluster {
 public:
  static Result<std::unique_ptr<EmbeddedCluster>> Start(
      EmbeddedClusterOptions options);
  ~EmbeddedCluster();

  // The engine, for tests and benchmarks that drive it directly (they
  // include core/master.h).
  Master& master();
  size_t node_count() const { return nodes_.size(); }
  StorageNode& node(size_t i) { return *nodes_[i].node; }
  std::unique_ptr<Client> NewClient(const StoreClientOptions& options = {});

  // One round of background work: every node heartbeats and runs its
  // tasks until idle, then the master ticks. For background = false.
  void Step();

  // Stops node `i` the hard way (no SSD sync, like kill -9 for a store
  // whose writes reached the device) and starts it again on the same SSD.
  Status RestartNode(size_t i);
  // Stops node `i` and withdraws it from the data plane; it stops
  // heartbeating, so the master expires it after node_ttl. (With
  // background threads the node stops cleanly and deregisters at once.)
  void KillNode(size_t i);

 private:
  struct NodeSlot {
    EmbeddedNodeOptions options;
    std::unique_ptr<MemorySsdDevice> memory_device;  // when in memory
    std::unique_ptr<StorageNode> node;
  };

  explicit EmbeddedCluster(EmbeddedClusterOptions options);
  Status StartNode(NodeSlot& slot);

  const EmbeddedClusterOptions options_;
  const Clock* const clock_;
  std::unique_ptr<MasterHost> master_;
  InProcessTransport transport_;
  std::vector<NodeSlot> nodes_;
  PeriodicThread ticker_;  // the master's Tick, with background
};

}  // namespace mooncake_tier
