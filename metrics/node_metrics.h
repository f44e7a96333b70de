#pragma once

// A storage node's metrics: on every Collect() it reads StorageNode::stats()
// (counters and the depth of its work queues), its SSD store's
// SsdStore::stats() (counters and batch latency histograms; zeros when the
// node has no SSD tier) and, when given, the data plane's SSD-read request
// counters, and builds the families of the catalog's kNode scope.
//
// The data plane's counters come through a callback returning plain
// figures, so this library does not depend on UCX: the daemon adapts
// UcxSegmentServer::stats() (transport/ucx_segment_server.h) with a lambda.
//
// Thread safety: Collect() is const and thread-safe (the sources are).

#include <cstdint>
#include <functional>
#include <vector>

#include "node/storage_node.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace mooncake_tier::metrics {

// SSD-read requests the data plane received (UcxSegmentServerStats).
struct TransferRequestCounts {
  uint64_t served = 0;
  uint64_t rejected = 0;  // queue full or shutting down
  uint64_t malformed = 0;
};

class NodeMetrics final : public prometheus::Collectable {
 public:
  using TransferSource = std::function<TransferRequestCounts()>;

  // `node` must outlive this. `transfer` may be empty (reported as zero).
  explicit NodeMetrics(const StorageNode* node, TransferSource transfer = {});

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const StorageNode* const node_;
  const TransferSource transfer_;
};

}  // namespace mooncake_tier::metrics
