#pragma once

// Every metric mooncake-tier exports, declared once (ARCHITECTURE.md
// section 8): name, type, label names and help. The collectors
// (MasterMetrics, NodeMetrics) look families up here by MetricId, so a name
// can be neither misspelled nor declared twice, and the tests walk this list
// to check the rendered text, the dashboards and Prometheus' naming rules.
//
// Thread safety: constants and pure functions.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace mooncake_tier::metrics {

// X(id, scope, type, name without the namespace, "label,names", help).
// scope: kMaster (the master's /metrics), kNode (a storage node's) or kEdge
// (every admin port's: its own connections and refusals).
// Appending is safe; renaming a metric breaks dashboards.
#define MOONCAKE_TIER_METRICS(X)                                               \
  /* ---- tiers, objects, nodes (master) ---- */                               \
  X(kTierCapacityBytes, kMaster, kGauge, "tier_capacity_bytes", "tier",        \
    "Bytes of each tier over alive and suspect nodes.")                        \
  X(kTierUsedBytes, kMaster, kGauge, "tier_used_bytes", "tier",                \
    "Bytes used in each tier (DRAM allocated; SSD logical replica bytes).")    \
  X(kHitRatioForecast, kMaster, kGauge, "hit_ratio_forecast", "scale",         \
    "Object hit ratio the store would have at this multiple of its object "    \
    "capacity (DRAM plus SSD), estimated online from a sample of its reads "   \
    "and puts (capacity planning).")                                           \
  X(kHitRatioForecastSampling, kMaster, kGauge, "hit_ratio_forecast_sampling", \
    "", "Share of objects whose references feed the hit-ratio forecast.")      \
  X(kTierLiveRatio, kMaster, kGauge, "tier_live_ratio", "tier",                \
    "Share of each tier's configured bytes (DRAM segments; --ssd-capacity) "   \
    "that holds objects.")                                                     \
  X(kObjects, kMaster, kGauge, "objects", "", "Objects in the store.")         \
  X(kPutsPending, kMaster, kGauge, "puts_pending", "",                         \
    "Puts started and not yet completed or revoked.")                          \
  X(kNodes, kMaster, kGauge, "nodes", "state", "Registered nodes by state.")   \
  X(kNodesRegisteredTotal, kMaster, kCounter, "nodes_registered_total", "",    \
    "Node registrations (including re-registrations).")                        \
  X(kNodesExpiredTotal, kMaster, kCounter, "nodes_expired_total", "",          \
    "Nodes declared dead (silent past node_ttl or replaced).")                 \
  X(kNodesDeregisteredTotal, kMaster, kCounter, "nodes_deregistered_total",    \
    "", "Nodes that left cleanly (deregistered as they stopped).")             \
  X(kNodeCapacityBytes, kMaster, kGauge, "node_capacity_bytes", "node,tier",   \
    "Bytes each node contributes to each tier.")                               \
  X(kNodeUsedBytes, kMaster, kGauge, "node_used_bytes", "node,tier",           \
    "Bytes used on each node in each tier.")                                   \
  X(kNodeHeartbeatAgeSeconds, kMaster, kGauge, "node_heartbeat_age_seconds",   \
    "node", "Seconds since each node's last heartbeat.")                       \
  X(kObjectsLostTotal, kMaster, kCounter, "objects_lost_total", "",            \
    "Objects whose last replica died with its node.")                          \
  X(kInventoryRestoredTotal, kMaster, kCounter, "inventory_restored_total",    \
    "", "SSD objects rebuilt from node inventories at registration.")          \
  X(kSsdCorruptionsTotal, kMaster, kCounter, "ssd_corruptions_total", "",      \
    "SSD records nodes reported corrupt.")                                     \
  X(kRecoveredObjectsTotal, kMaster, kCounter, "recovered_objects_total",      \
    "tier",                                                                    \
    "Copies rebuilt from what registering nodes hold, by tier (DRAM "          \
    "directories, SSD inventories).")                                          \
  X(kMasterRole, kMaster, kGauge, "master_role", "ha_role",                    \
    "1 for this master's role in its cluster (leader or standby), 0 for the "  \
    "other; a lone master is a leader.")                                       \
  X(kMasterTerm, kMaster, kGauge, "master_term", "",                           \
    "The leader's term (its etcd election revision; 0 for a lone master).")    \
  X(kFailoversTotal, kMaster, kCounter, "failovers_total", "",                 \
    "Changes of leader this master saw (a new term after another).")           \
  X(kMasterInSync, kMaster, kGauge, "master_in_sync", "",                      \
    "1 when this master could take over at once: a leader, or a standby "      \
    "that holds its etcd lease, campaigns and sees the leader.")               \
  X(kMasterRecovering, kMaster, kGauge, "master_recovering", "",               \
    "1 while a new leader waits for the previous term's nodes to register "    \
    "(clients are told to retry).")                                            \
  /* ---- data path (master) ---- */                                           \
  X(kPutStartedTotal, kMaster, kCounter, "put_started_total", "",              \
    "PutStart calls that reserved space.")                                     \
  X(kPutCompletedTotal, kMaster, kCounter, "put_completed_total", "",          \
    "PutEnd calls that made an object visible.")                               \
  X(kPutFailedTotal, kMaster, kCounter, "put_failed_total", "reason",          \
    "Puts that did not complete, by reason.")                                  \
  X(kGetTotal, kMaster, kCounter, "get_total", "result",                       \
    "GetReplicaList lookups by result.")                                       \
  X(kExistsTotal, kMaster, kCounter, "exists_total", "",                       \
    "Existence probes (keys).")                                                \
  X(kPrefixProbesTotal, kMaster, kCounter, "prefix_probes_total", "",          \
    "Prefix probes (calls, each of many keys).")                               \
  X(kRemovesTotal, kMaster, kCounter, "removes_total", "",                     \
    "Objects removed by Remove.")                                              \
  /* ---- eviction (master) ---- */                                            \
  X(kEvictionsTotal, kMaster, kCounter, "evictions_total", "tier",             \
    "Replicas dropped from each tier by eviction.")                            \
  X(kSsdReinsertedTotal, kMaster, kCounter, "ssd_reinserted_total", "unit",    \
    "Units the SSD tier's clock eviction gave another turn (read since they "  \
    "entered), by unit: object or group.")                                     \
  X(kEvictedBytesTotal, kMaster, kCounter, "evicted_bytes_total", "tier",      \
    "Bytes dropped from each tier by eviction.")                               \
  X(kObjectsEvictedTotal, kMaster, kCounter, "objects_evicted_total", "",      \
    "Objects that left the store by eviction (no replica left).")              \
  /* ---- offload (master) ---- */                                             \
  X(kOffloadQueuedTotal, kMaster, kCounter, "offload_queued_total", "",        \
    "Offload tasks queued.")                                                   \
  X(kOffloadCompletedTotal, kMaster, kCounter, "offload_completed_total", "",  \
    "Offloads committed (an SSD replica added).")                              \
  X(kOffloadBytesTotal, kMaster, kCounter, "offload_bytes_total", "",          \
    "Bytes committed to SSD by offload.")                                      \
  X(kOffloadFailedTotal, kMaster, kCounter, "offload_failed_total", "reason",  \
    "Offloads that did not commit, by reason.")                                \
  X(kOffloadDiscardedTotal, kMaster, kCounter, "offload_discarded_total", "",  \
    "Offloads that completed after their object was removed.")                 \
  X(kOffloadTasks, kMaster, kGauge, "offload_tasks", "state",                  \
    "Offload tasks booked, by state.")                                         \
  X(kSsdDeletesPending, kMaster, kGauge, "ssd_deletes_pending", "",            \
    "SSD deletions waiting to be handed to nodes.")                            \
  X(kOffloadBytesPending, kMaster, kGauge, "offload_bytes_pending", "",        \
    "Bytes of offload tasks queued or in flight (writeback and eviction).")    \
  X(kOffloadPausesTotal, kMaster, kCounter, "offload_pauses_total", "",        \
    "Times offloads to a node were paused because its SSD refused a write "    \
    "for room.")                                                               \
  /* ---- the DRAM pipeline: writeback, reserve, put waits (master) ---- */    \
  X(kMemoryBytes, kMaster, kGauge, "memory_bytes", "state",                    \
    "DRAM of every node by how it is held, as the last memory round saw it: "  \
    "free, clean (droppable at once), dirty (droppable once written back), "   \
    "writeback, leased, pinned, in_flight, filling, hard_pinned.")             \
  X(kNodeMemoryBytes, kMaster, kGauge, "node_memory_bytes", "node,state",      \
    "Each node's DRAM by how it is held (states as memory_bytes).")            \
  X(kMemoryReserveBytes, kMaster, kGauge, "memory_reserve_bytes", "",          \
    "Clean DRAM the last rounds left for puts to drop at once.")               \
  X(kWritebackQueuedTotal, kMaster, kCounter, "writeback_queued_total", "",    \
    "Writebacks queued (offloads that keep the DRAM copy, which turns "        \
    "clean).")                                                                 \
  X(kWritebackCompletedTotal, kMaster, kCounter, "writeback_completed_total",  \
    "", "Writebacks that landed.")                                             \
  X(kWritebackBytesTotal, kMaster, kCounter, "writeback_bytes_total", "",      \
    "Bytes written back.")                                                     \
  X(kPutWaitsTotal, kMaster, kCounter, "put_waits_total", "",                  \
    "Puts that found DRAM full with nothing clean to drop and waited for "     \
    "writeback.")                                                              \
  X(kPutWaitSeconds, kMaster, kHistogram, "put_wait_seconds", "",              \
    "How long puts waited for DRAM (placed or given up).")                     \
  X(kPutEvictionsTotal, kMaster, kCounter, "put_evictions_total", "",          \
    "Clean units puts dropped from the reserve to make room at once.")         \
  X(kMemoryRoundsTotal, kMaster, kCounter, "memory_rounds_total", "trigger",   \
    "Memory rounds (eviction, writeback, reserve), by what ran them: the "     \
    "background step, a put that found the reserve empty, or a node asking "   \
    "for work while its writeback was behind.")                                \
  X(kLeasesReleasedTotal, kMaster, kCounter, "leases_released_total", "",      \
    "Readers' leases ended by their release.")                                 \
  X(kLeasesExpiredTotal, kMaster, kCounter, "leases_expired_total", "",        \
    "Lease periods that ended by their TTL with readers that never released "  \
    "(counted at the object's next read).")                                    \
  X(kLocationGrantsTotal, kMaster, kCounter, "location_grants_total", "",      \
    "Reads answered with a DRAM location clients may cache and read again "    \
    "with no call while the grant lasts.")                                     \
  X(kCachedReadsReportedTotal, kMaster, kCounter,                              \
    "cached_reads_reported_total", "",                                         \
    "Reads clients served from their location caches, reported afterwards "    \
    "for recency and promotion (a hot key at most every 100 ms per client).")  \
  X(kHeldMemoryBytes, kMaster, kGauge, "held_memory_bytes", "",                \
    "Freed DRAM not handed out again until location grants on it run out.")    \
  /* ---- promotion (master) ---- */                                           \
  X(kPromotionAttemptsTotal, kMaster, kCounter, "promotion_attempts_total",    \
    "", "Reads that found a unit only on SSD.")                                \
  X(kPromotionQueuedTotal, kMaster, kCounter, "promotion_queued_total", "",    \
    "Promotion tasks queued.")                                                 \
  X(kPromotionCompletedTotal, kMaster, kCounter, "promotion_completed_total",  \
    "", "DRAM copies committed by promotion.")                                 \
  X(kPromotionUsefulTotal, kMaster, kCounter, "promotion_useful_total", "",    \
    "Promoted DRAM copies read from DRAM afterwards (at their first read).")   \
  X(kPromotionFailedTotal, kMaster, kCounter, "promotion_failed_total",        \
    "reason", "Promotions stopped by a gate or failed as tasks, by reason.")   \
  X(kPromotionDedupedTotal, kMaster, kCounter, "promotion_deduped_total", "",  \
    "Promotion attempts that found the unit already queued.")                  \
  X(kPromotionInFlight, kMaster, kGauge, "promotion_in_flight", "",            \
    "Promotion tasks alive (queued to committed).")                            \
  X(kPromotionTasksQueued, kMaster, kGauge, "promotion_tasks_queued", "",      \
    "Promotion tasks not yet handed to a node.")                               \
  X(kPromotionBytesTotal, kMaster, kCounter, "promotion_bytes_total", "",      \
    "Bytes committed to DRAM by promotion.")                                   \
  X(kPromotionDurationSecondsTotal, kMaster, kCounter,                         \
    "promotion_duration_seconds_total", "",                                    \
    "Sum of queue-to-commit times of completed promotions.")                   \
  X(kPromotionForcedTotal, kMaster, kCounter, "promotion_forced_total", "",    \
    "Promotions queued by an operator.")                                       \
  X(kPromotionProactiveTotal, kMaster, kCounter, "promotion_proactive_total",  \
    "", "Units queued by proactive promotion.")                                \
  X(kPromotionDroppedSourcesTotal, kMaster, kCounter,                          \
    "promotion_dropped_sources_total", "",                                     \
    "SSD copies dropped after promotion (drop_source).")                       \
  X(kPromotionSketchHalvingsTotal, kMaster, kCounter,                          \
    "promotion_sketch_halvings_total", "",                                     \
    "Times the admission sketch halved its counters.")                         \
  X(kPromotionDurationSeconds, kMaster, kHistogram,                            \
    "promotion_duration_seconds", "",                                          \
    "Queue-to-commit time of completed promotions.")                           \
  /* ---- groups (master) ---- */                                              \
  X(kGroups, kMaster, kGauge, "groups", "state", "Groups by state.")           \
  X(kGroupFillingBytes, kMaster, kGauge, "group_filling_bytes", "",            \
    "DRAM held by groups still filling.")                                      \
  X(kGroupCreatedTotal, kMaster, kCounter, "group_created_total", "",          \
    "Groups created.")                                                         \
  X(kGroupCompletedTotal, kMaster, kCounter, "group_completed_total", "",      \
    "Groups that became complete.")                                            \
  X(kGroupBrokenTotal, kMaster, kCounter, "group_broken_total", "cause",       \
    "Groups that became broken, by cause.")                                    \
  X(kGroupExpiredTotal, kMaster, kCounter, "group_expired_total", "",          \
    "Groups still filling past group_fill_timeout.")                           \
  X(kGroupCollectedTotal, kMaster, kCounter, "group_collected_total", "",      \
    "Groups dropped from the group table.")                                    \
  X(kGroupEvictedTotal, kMaster, kCounter, "group_evicted_total", "tier",      \
    "Groups evicted from a tier as one unit.")                                 \
  X(kGroupRefusedTotal, kMaster, kCounter, "group_refused_total", "reason",    \
    "New groups refused, by reason.")                                          \
  /* ---- RPC (master) ---- */                                                 \
  X(kRpcRequestsTotal, kMaster, kCounter, "rpc_requests_total", "method,code", \
    "RPCs served, by method and canonical result code.")                       \
  X(kAdminRequestsTotal, kMaster, kCounter, "admin_requests_total",            \
    "route,code", "Admin API requests, by route and canonical result code.")   \
  X(kAdminRequestDurationSeconds, kMaster, kHistogram,                         \
    "admin_request_duration_seconds", "route",                                 \
    "Admin API request latency, by route.")                                    \
  X(kRpcDurationSeconds, kMaster, kHistogram, "rpc_duration_seconds",          \
    "method", "RPC latency, by method.")                                       \
  /* ---- storage node ---- */                                                 \
  X(kNodeDramCapacityBytes, kNode, kGauge, "node_dram_capacity_bytes", "",     \
    "Bytes of this node's DRAM segment.")                                      \
  X(kNodeHeartbeatsTotal, kNode, kCounter, "node_heartbeats_total", "result",  \
    "Heartbeats sent to the master, by result.")                               \
  X(kNodeRegistrationsTotal, kNode, kCounter, "node_registrations_total", "",  \
    "Registrations with the master.")                                          \
  X(kNodePullsTotal, kNode, kCounter, "node_pulls_total", "result",            \
    "Requests to the master for work (PullTasks), by result.")                 \
  X(kNodeTasksTotal, kNode, kCounter, "node_tasks_total", "kind,result",       \
    "Offload and promotion tasks executed, by kind and result.")               \
  X(kNodeTaskBytesTotal, kNode, kCounter, "node_task_bytes_total", "kind",     \
    "Bytes moved by successful tasks, by kind.")                               \
  X(kNodeSsdDeletesTotal, kNode, kCounter, "node_ssd_deletes_total", "",       \
    "SSD deletions executed for the master.")                                  \
  X(kNodeSsdReadsTotal, kNode, kCounter, "node_ssd_reads_total", "result",     \
    "SSD-tier reads served to clients, by result.")                            \
  X(kNodeSsdReadBytesTotal, kNode, kCounter, "node_ssd_read_bytes_total", "",  \
    "Bytes of SSD-tier reads served to clients.")                              \
  X(kNodeCorruptKeysReportedTotal, kNode, kCounter,                            \
    "node_corrupt_keys_reported_total", "",                                    \
    "Corrupt SSD records reported to the master.")                             \
  X(kSsdRecords, kNode, kGauge, "ssd_records", "", "Live SSD records.")        \
  X(kSsdBytes, kNode, kGauge, "ssd_bytes", "kind",                             \
    "SSD store bytes: live values, live records (what they take in the "       \
    "files), data files, capacity (what the store may fill now), "             \
    "configured capacity, put limit, and the file system's free space.")       \
  X(kSsdNoSpaceTotal, kNode, kCounter, "ssd_no_space_total", "",               \
    "SSD writes refused for room (store at its put limit, or file system "     \
    "full).")                                                                  \
  X(kSsdOpsTotal, kNode, kCounter, "ssd_ops_total", "op",                      \
    "SSD store records read and written.")                                     \
  X(kSsdOpBytesTotal, kNode, kCounter, "ssd_op_bytes_total", "op",             \
    "SSD store value bytes read and written.")                                 \
  X(kSsdErrorsTotal, kNode, kCounter, "ssd_errors_total", "kind",              \
    "SSD store errors: read, write, corrupt and torn records.")                \
  X(kSsdCompactionsTotal, kNode, kCounter, "ssd_compactions_total", "",        \
    "SSD store compactions.")                                                  \
  X(kSsdCompactedBytesTotal, kNode, kCounter, "ssd_compacted_bytes_total", "", \
    "SSD bytes reclaimed by compaction.")                                      \
  X(kTransferSsdRequestsTotal, kNode, kCounter, "transfer_ssd_requests_total", \
    "result", "SSD-read requests received over the data plane, by result.")    \
  X(kNodePendingTasks, kNode, kGauge, "node_pending_tasks", "kind",            \
    "Work accepted from the master and not yet started, by kind.")             \
  X(kNodeMaxPendingTasks, kNode, kGauge, "node_max_pending_tasks", "",         \
    "Configured cap on pending offload and promotion tasks.")                  \
  X(kSsdBatchDurationSeconds, kNode, kHistogram, "ssd_batch_duration_seconds", \
    "op", "SSD store device time per read batch and per write round.")         \
  /* ---- the admin port's HTTP edge (every admin port) ---- */                \
  X(kAdminConnections, kEdge, kGauge, "admin_connections", "",                 \
    "Connections open to this admin port.")                                    \
  X(kAdminConnectionsTotal, kEdge, kCounter, "admin_connections_total", "",    \
    "Connections this admin port accepted.")                                   \
  X(kAdminConnectionsClosedTotal, kEdge, kCounter,                             \
    "admin_connections_closed_total", "reason",                                \
    "Idle connections the admin port closed: past the idle timeout, or "       \
    "evicted to make room for a new one at the connection limit.")             \
  X(kAdminRefusedTotal, kEdge, kCounter, "admin_refused_total", "reason",      \
    "Requests and connections the admin port refused, by reason.")             \
  X(kTlsCertificateExpiry, kEdge, kGauge,                                      \
    "tls_certificate_expiry_timestamp_seconds", "plane",                       \
    "When the certificate in use expires (its notAfter, seconds since the "    \
    "epoch), by plane: admin (this port), grpc (the master's service), "       \
    "grpc_client (what a node dials its master with).")                        \
  X(kTlsReloadFailuresTotal, kEdge, kCounter, "tls_reload_failures_total",     \
    "plane",                                                                   \
    "SIGHUP reloads of a plane's TLS files that failed (the certificate in "   \
    "use stayed); the admin plane's are in the log only.")

enum class MetricId : uint16_t {
#define MOONCAKE_TIER_METRIC_ENUM(id, scope, type, name, labels, help) id,
  MOONCAKE_TIER_METRICS(MOONCAKE_TIER_METRIC_ENUM)
#undef MOONCAKE_TIER_METRIC_ENUM
};

enum class MetricScope : uint8_t { kMaster, kNode, kEdge };
enum class MetricKind : uint8_t { kCounter, kGauge, kHistogram };

inline constexpr std::string_view kMetricNamespace = "mooncake_";

struct MetricSpec {
  MetricId id;
  MetricScope scope;
  MetricKind kind;
  std::string_view name;    // full name, "mooncake_..."
  std::string_view labels;  // comma-separated label names; empty for none
  std::string_view help;
};

// Every metric, in declaration order (index = MetricId).
std::span<const MetricSpec> AllMetrics();
const MetricSpec& Spec(MetricId id);
// The label names of `spec`, in order.
std::vector<std::string_view> LabelNames(const MetricSpec& spec);
// "counter" | "gauge" | "histogram": the text exposition's TYPE.
std::string_view KindName(MetricKind kind);

}  // namespace mooncake_tier::metrics
