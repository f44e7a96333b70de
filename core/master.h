#pragma once

// The metadata engine: a thin facade over the object table, the node
// registry, the task table and the eviction planner. It decides where bytes
// go and when they move, and never touches the bytes themselves.
//
// Every client call takes a batch; a single key is a batch of one and each
// key gets its own result, so one bad key never hides the others.
//
// Background work is a set of steps (ExpireNodes, ReapStalledPuts,
// ReapOffloadTasks, EvictMemory, EvictSsd; Tick runs them all) that a
// daemon thread calls periodically and a test calls directly under a
// ManualClock.
//
// Lock order (see docs/design/core.md): eviction round -> object shard ->
// node registry -> task table -> detached replicas. At most one shard lock
// is held at once.
//
// Thread safety: every public method is thread-safe.

#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/detached_replicas.h"
#include "core/master_config.h"
#include "core/master_stats.h"
#include "core/node_registry.h"
#include "core/object_table.h"
#include "core/task_table.h"
#include "core/types.h"
#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"

namespace mooncake_tier {

struct PutStartRequest {
  std::string key;
  uint64_t size = 0;
  PutOptions options;
  ClientId client;  // makes a repeated PutStart by the same client idempotent
};

// What a reader needs: complete replicas, DRAM first, and its lease.
struct ObjectReplicas {
  uint64_t size = 0;
  std::vector<ReplicaDescriptor> replicas;
  TimePoint lease_deadline;
  std::optional<GroupSpec> group;
};

// A full view of one object for operators (admin API), no lease granted.
struct ObjectDescription {
  uint64_t size = 0;
  std::vector<Replica> replicas;
  std::optional<GroupSpec> group;
  TimePoint lease_deadline;
  TimePoint last_access;
  bool hard_pin = false;
};

// One live record in a node's SSD store, reported on (re-)registration.
struct SsdInventoryEntry {
  std::string key;
  uint64_t size = 0;
  std::optional<GroupSpec> group;
};

// What a node gets back from a heartbeat.
struct HeartbeatReply {
  std::vector<Task> offloads;
  std::vector<std::string> ssd_deletes;
};

class Master {
 public:
  // REQUIRES: config.Validate() is empty (otherwise throws
  // std::invalid_argument: a start-up configuration error). `clock` must
  // outlive the master.
  Master(MasterConfig config, const Clock* clock);
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  const MasterConfig& config() const { return config_; }

  // ---- Client calls ----

  // Reserves DRAM for each object and records a processing replica.
  // INVALID_KEY / INVALID_SIZE / INVALID_GROUP for bad input, OBJECT_EXISTS
  // for a key already stored (idempotent for the same client's identical
  // in-flight put), NO_SPACE when no node can hold it even after eviction.
  std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests);
  // Makes each object visible. OBJECT_NOT_FOUND when no put is in flight
  // (revoked or timed out); OK again for an already completed put.
  std::vector<Status> PutEnd(const ClientId& client,
                             std::span<const std::string> keys);
  // Abandons puts in flight and frees their space.
  std::vector<Status> PutRevoke(const ClientId& client,
                                std::span<const std::string> keys);
  // Complete replicas, MEMORY first; grants a lease of config().lease_ttl.
  // OBJECT_NOT_FOUND when absent, OBJECT_NOT_READY while only processing.
  std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys);
  // Existence probes: never grant leases nor count as accesses.
  std::vector<Result<ExistsInfo>> Exists(std::span<const std::string> keys);
  // OBJECT_LEASED while a reader holds a lease (unless forced), OBJECT_BUSY
  // while a put is in flight.
  std::vector<Status> Remove(std::span<const std::string> keys,
                             RemoveOptions options);

  // ---- Node calls ----

  // Registers a node (retiring an earlier incarnation of the same name) and
  // rebuilds the objects of its SSD inventory.
  Result<NodeId> RegisterNode(const NodeSpec& spec,
                              std::span<const SsdInventoryEntry> inventory);
  // Records liveness and hands out at most `max_tasks` offload tasks (and
  // never more than config().offload_max_per_heartbeat) plus SSD deletions.
  // NODE_NOT_FOUND when the node must register again.
  Result<HeartbeatReply> Heartbeat(NodeId node, uint32_t max_tasks = UINT32_MAX);
  // The SSD copy of an offload task is durable: add the local_disk replica.
  Status NotifyOffloadSuccess(NodeId node, TaskId task);
  Status NotifyOffloadFailure(NodeId node, TaskId task, const Status& cause);
  // SSD records a node found corrupt: their local_disk replicas are dropped.
  void ReportSsdCorruption(NodeId node, std::span<const std::string> keys);

  // ---- Lookups for clients and operators ----

  std::optional<NodeView> GetNode(NodeId node) const;
  std::vector<NodeView> ListNodes() const;
  Result<ObjectDescription> DescribeObject(std::string_view key) const;
  std::vector<Task> ListTasks(TaskKind kind) const;

  // ---- Background steps ----

  void Tick();
  size_t ExpireNodes();       // returns nodes declared dead
  size_t ReapStalledPuts();   // returns puts freed
  size_t ReapOffloadTasks();  // returns tasks reaped
  // Evicts DRAM when over the high watermark (or when `need_free` more
  // bytes are wanted). Returns bytes freed or scheduled to be freed.
  uint64_t EvictMemory(uint64_t need_free = 0);
  uint64_t EvictSsd();  // per node; returns bytes dropped

  MasterStats GetStats() const;
  // Walks every object; O(n). For tests and operators.
  AuditReport Audit() const;

 private:
  using Shard = ObjectTable::Shard;
  using ObjectMap = decltype(Shard::objects);

  Result<ReplicaDescriptor> PutStartOne(const PutStartRequest& request);
  Status PutEndOne(const ClientId& client, const std::string& key);
  Status PutRevokeOne(const ClientId& client, const std::string& key);
  Result<ObjectReplicas> GetReplicaListOne(const std::string& key);
  Result<ExistsInfo> ExistsOne(const std::string& key);
  Status RemoveOne(const std::string& key, RemoveOptions options);

  // Releases one replica's resources (DRAM space, SSD accounting, pins).
  void ReleaseReplicaLocked(Shard& shard, const std::string& key,
                            const Replica& replica, bool node_alive)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // Removes an object and releases all its replicas.
  void DropObjectLocked(Shard& shard, ObjectMap::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // Removes an object once its last replica is gone.
  void EraseIfEmptyLocked(Shard& shard, ObjectMap::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);

  // Queues an offload of `replica`'s bytes to its node's SSD, pinning it.
  bool QueueOffloadLocked(Shard& shard, const std::string& key,
                          ObjectMeta& meta, Replica& replica,
                          bool drop_source) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // Every offload leaves the task table under its object's stripe lock, so
  // its exit (unpin, SSD copy kept or deleted) is ordered with any later
  // offload of the same key. Returns the task if it was still booked.
  Result<Task> CompleteOffloadLocked(Shard& shard, NodeId node, TaskId id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // Drops one pin of a task's source replica, wherever it now lives.
  void UnpinLocked(Shard& shard, const Task& task)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // Ends an offload that did not commit: unpins, and when the node may hold
  // a copy no replica points at (`delete_copy`), tells it to drop it.
  void SettleUncommittedLocked(Shard& shard, const Task& task, bool delete_copy)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // Runs `fn(shard, task)` for a booked offload under its stripe lock after
  // removing it from the table; TASK_NOT_FOUND if it is no longer booked.
  // (The analysis cannot map the stripe onto the callback's parameter; the
  // callbacks declare the requirement themselves.)
  template <typename Fn>
  Status WithCompletedOffload(NodeId node, TaskId id, Fn&& fn)
      ABSL_NO_THREAD_SAFETY_ANALYSIS;

  bool MemoryEvictable(const ObjectMeta& meta, TimePoint now) const;
  // Frees (or schedules the freeing of) an object's DRAM copy. Returns the
  // bytes freed or scheduled; 0 if nothing happened.
  uint64_t EvictMemoryLocked(Shard& shard, ObjectMap::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  uint64_t EvictSsdOf(NodeId node, TierUsage usage);

  void RestoreInventoryEntry(NodeId node, const SsdInventoryEntry& entry);
  // Records a complete local_disk replica of `meta` on `node` and its SSD
  // use. REQUIRES: the object's stripe lock is held.
  void AddDiskReplica(ObjectMeta& meta, NodeId node);
  void DropNodeReplicas(NodeId node);

  ReplicaId NextReplicaId() { return next_replica_id_.fetch_add(1) + 1; }
  bool NodeHasSsd(NodeId node) const;

  const MasterConfig config_;
  const Clock* const clock_;
  ObjectTable objects_;
  NodeRegistry nodes_;
  TaskTable tasks_;
  DetachedReplicas detached_;
  // One eviction round at a time (Tick and PutStart may both start one);
  // taken before any stripe lock.
  Mutex eviction_mu_;
  std::atomic<ReplicaId> next_replica_id_{0};
  // DRAM bytes that queued drop-source offloads will free when they land.
  std::atomic<uint64_t> pending_offload_drop_bytes_{0};
  mutable MasterCounters counters_;
};

}  // namespace mooncake_tier
