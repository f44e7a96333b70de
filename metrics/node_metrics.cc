#include "metrics/node_metrics.h"

#include <array>
#include <chrono>
#include <string_view>

#include "metrics/family_set.h"

namespace mooncake_tier::metrics {
namespace {

using M = MetricId;

void AddNodeStats(const StorageNodeStats& s, FamilySet& f) {
  f.Add(M::kNodeHeartbeatsTotal, s.heartbeats, {"ok"});
  f.Add(M::kNodeHeartbeatsTotal, s.heartbeat_failures, {"failed"});
  f.Add(M::kNodeRegistrationsTotal, s.registrations);
  f.Add(M::kNodePullsTotal, s.pulls, {"ok"});
  f.Add(M::kNodePullsTotal, s.pull_failures, {"failed"});
  f.Add(M::kNodeTasksTotal, s.offloads_done, {"offload", "ok"});
  f.Add(M::kNodeTasksTotal, s.offloads_failed, {"offload", "failed"});
  f.Add(M::kNodeTasksTotal, s.promotions_done, {"promotion", "ok"});
  f.Add(M::kNodeTasksTotal, s.promotions_failed, {"promotion", "failed"});
  f.Add(M::kNodeTaskBytesTotal, s.offload_bytes, {"offload"});
  f.Add(M::kNodeTaskBytesTotal, s.promotion_bytes, {"promotion"});
  f.Add(M::kNodeSsdDeletesTotal, s.ssd_deletes);
  f.Add(M::kNodeSsdReadsTotal, s.ssd_reads, {"ok"});
  f.Add(M::kNodeSsdReadsTotal, s.ssd_read_errors, {"error"});
  f.Add(M::kNodeSsdReadBytesTotal, s.ssd_read_bytes);
  f.Add(M::kNodeCorruptKeysReportedTotal, s.corrupt_keys_reported);
  f.Add(M::kNodePendingTasks, s.pending_offloads, {"offload"});
  f.Add(M::kNodePendingTasks, s.pending_promotions, {"promotion"});
  f.Add(M::kNodePendingTasks, s.pending_deletes, {"delete"});
}

void AddLatency(const LatencySnapshot& latency, std::string_view op,
                FamilySet& f) {
  std::array<double, kIoLatencyBounds.size()> bounds{};
  for (size_t i = 0; i < bounds.size(); ++i) {
    bounds[i] = std::chrono::duration<double>(kIoLatencyBounds[i]).count();
  }
  f.AddHistogram(M::kSsdBatchDurationSeconds, {op}, bounds, latency.buckets,
                 static_cast<double>(latency.sum_ns) / 1e9);
}

// A node without an SSD tier reports zeros, so its dashboards show 0
// rather than no data.
void AddSsdStats(const SsdStoreStats& s, FamilySet& f) {
  f.Add(M::kSsdRecords, s.live_records);
  f.Add(M::kSsdBytes, s.live_bytes, {"live"});
  f.Add(M::kSsdBytes, s.live_record_bytes, {"live_records"});
  f.Add(M::kSsdBytes, s.file_bytes, {"file"});
  f.Add(M::kSsdBytes, s.capacity_bytes, {"capacity"});
  f.Add(M::kSsdBytes, s.configured_capacity_bytes, {"configured_capacity"});
  f.Add(M::kSsdBytes, s.put_limit_bytes, {"put_limit"});
  // UINT64_MAX: nothing known of the file system (not a size to plot).
  if (s.filesystem_free_bytes != UINT64_MAX) {
    f.Add(M::kSsdBytes, s.filesystem_free_bytes, {"filesystem_free"});
  }
  f.Add(M::kSsdNoSpaceTotal, s.no_space_refusals);
  f.Add(M::kSsdOpsTotal, s.records_read, {"read"});
  f.Add(M::kSsdOpsTotal, s.records_written, {"write"});
  f.Add(M::kSsdOpBytesTotal, s.bytes_read, {"read"});
  f.Add(M::kSsdOpBytesTotal, s.bytes_written, {"write"});
  f.Add(M::kSsdErrorsTotal, s.read_errors, {"read"});
  f.Add(M::kSsdErrorsTotal, s.write_errors, {"write"});
  f.Add(M::kSsdErrorsTotal, s.corrupt_records, {"corrupt"});
  f.Add(M::kSsdErrorsTotal, s.torn_records, {"torn"});
  f.Add(M::kSsdCompactionsTotal, s.compactions);
  f.Add(M::kSsdCompactedBytesTotal, s.compacted_bytes_reclaimed);
  AddLatency(s.read_latency, "read", f);
  AddLatency(s.write_latency, "write", f);
}

}  // namespace

NodeMetrics::NodeMetrics(const StorageNode* node, TransferSource transfer)
    : node_(node), transfer_(std::move(transfer)) {}

std::vector<prometheus::MetricFamily> NodeMetrics::Collect() const {
  FamilySet families(MetricScope::kNode);
  families.Add(M::kNodeDramCapacityBytes, node_->segment().size());
  families.Add(M::kNodeMaxPendingTasks, node_->max_pending_tasks());
  AddNodeStats(node_->stats(), families);
  const SsdStore* ssd = node_->ssd();
  AddSsdStats(ssd != nullptr ? ssd->stats() : SsdStoreStats{}, families);
  const TransferRequestCounts transfer =
      transfer_ ? transfer_() : TransferRequestCounts{};
  families.Add(M::kTransferSsdRequestsTotal, transfer.served, {"served"});
  families.Add(M::kTransferSsdRequestsTotal, transfer.rejected, {"rejected"});
  families.Add(M::kTransferSsdRequestsTotal, transfer.malformed, {"malformed"});
  return std::move(families).Take();
}

}  // namespace mooncake_tier::metrics
