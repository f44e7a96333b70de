#pragma once

// The metadata engine: a facade over its parts (core/README.md maps them).
// It decides where bytes go and when they move, and never touches the
// bytes themselves. Every call is handed to the part that owns it: Puts,
// ObjectService (reads, removal, groups), NodeService, Promoter, Tiering
// (memory rounds, SSD eviction), ForcedEvictor and the task lifecycle
// (reports); they share one MasterState.
//
// Every client call takes a batch; a single key is a batch of one and each
// key gets its own result, so one bad key never hides the others.
//
// Background work is a set of steps (ExpireNodes, ReapStalledPuts,
// ReapOffloadTasks, EvictMemory, EvictSsd; Tick runs them all) that a
// daemon thread calls periodically and a test calls directly under a
// ManualClock.
//
// Lock order (see docs/design/core.md): eviction round -> group stripe ->
// object stripe(s) -> node registry -> task table -> detached replicas. The
// stripes are the ObjectIndex's, which takes them and checks their order;
// the master reaches objects and groups only through its slots. The
// configuration-change mutex is taken alone, before the run-time knobs and the
// promotion options (leaves).
//
// Thread safety: every public method is thread-safe.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "core/forced_evictor.h"
#include "core/hit_ratio_forecast.h"
#include "core/master_admin.h"
#include "core/master_config.h"
#include "core/master_state.h"
#include "core/master_stats.h"
#include "core/master_views.h"
#include "core/node_service.h"
#include "core/object_service.h"
#include "core/offloader.h"
#include "core/promoter.h"
#include "core/puts.h"
#include "core/tiering.h"
#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"
#include "protocol/messages.h"
#include "protocol/types.h"

namespace mooncake_tier {

class Master final : public MasterAdmin {
 public:
  // REQUIRES: config.Validate() is empty (otherwise throws
  // std::invalid_argument: a start-up configuration error). `clock` must
  // outlive the master.
  Master(MasterConfig config, const Clock* clock);
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  // The clock every deadline of this master is read from.
  const Clock* clock() const { return s_.clock; }
  // How long a put may wait for room (MasterConfig::put_wait_timeout).
  Duration put_wait_timeout() const { return s_.config.put_wait_timeout; }

  // The effective configuration: the start values, with the run-time
  // knobs and the promotion options as they are now. A copy.
  MasterConfig config() const override;

  // ---- Run-time configuration ----

  using PromotionEdit = ::mooncake_tier::PromotionEdit;
  // Applies `change` and then, when given, `edit_promotion` to the
  // promotion options as they are at that moment, in one step: changes are
  // applied one after another, each over the last (no lost update between
  // two concurrent partial changes), and all or nothing. INVALID_ARGUMENT
  // (or the edit's error) when the result would not pass
  // MasterConfig::Validate(), and nothing changes. Returns the effective
  // configuration before and after, for the caller to log.
  Result<RuntimeConfigUpdate> UpdateRuntimeConfig(
      const RuntimeConfigChange& change,
      const PromotionEdit& edit_promotion = nullptr) override;
  Status SetRuntimeConfig(const RuntimeConfigChange& change) {
    return UpdateRuntimeConfig(change).status();
  }

  // ---- Client calls ----

  // Reserves DRAM for each object and records a processing replica.
  // INVALID_KEY / INVALID_SIZE / INVALID_GROUP for bad input, OBJECT_EXISTS
  // for a key already stored (idempotent for the same client's identical
  // in-flight put). Consecutive requests of one group are put in one visit
  // of its stripe.
  // DRAM full: a put drops clean victims (DRAM copies also on SSD) at once;
  // when there are none it waits, until `wait_until` at the latest, for
  // writeback (or a reader, a task, another put) to free room, and is
  // NO_SPACE after that, with a message saying what holds the DRAM. It is
  // NO_SPACE at once when nothing could ever free room (the object is
  // larger than any segment; all DRAM hard-pinned or in filling groups).
  // Blocks the calling thread while it waits (never holding a lock), and
  // never longer in real time than `wait_until` is ahead of clock().
  std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests,
      TimePoint wait_until = TimePoint::min());
  // Makes each object visible. OBJECT_NOT_FOUND when no put is in flight
  // (revoked or timed out); OK again for an already completed put.
  std::vector<Status> PutEnd(const ClientId& client,
                             std::span<const std::string> keys) {
    return puts_.PutEnd(client, keys);
  }
  // Abandons puts in flight and frees their space.
  std::vector<Status> PutRevoke(const ClientId& client,
                                std::span<const std::string> keys) {
    return puts_.PutRevoke(client, keys);
  }
  // Complete replicas, MEMORY first; grants a lease that lasts until the
  // reader releases it (ReleaseLeases) or config().lease_ttl passes, and,
  // when the first is in DRAM, a location grant (location_valid_ms: its
  // range stays this object's bytes that long, docs/design/location-cache.md).
  // OBJECT_NOT_FOUND when absent, OBJECT_NOT_READY while only processing.
  std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys);
  // Readers are done copying: each ends its share of the lease it was
  // granted. A release whose lease already ended (expired, or another
  // period's id), or of an object gone since, changes nothing. A release
  // with lease_id 0 reports a read served from a location cache: it counts
  // for recency and promotion as a read would. Returns the releases that
  // ended a reader's share.
  size_t ReleaseLeases(std::span<const LeaseRelease> releases) {
    return object_service_.ReleaseLeases(releases);
  }
  // Existence probes: never grant leases nor count as accesses.
  std::vector<Result<ExistsInfo>> Exists(std::span<const std::string> keys) {
    return object_service_.Exists(keys);
  }
  // The longest readable prefix of `keys` (PrefixInfo): an engine's lookup
  // of a prompt's cached blocks in one call. Stops at the first key that is
  // absent, still being put, or a member of a group not complete. A probe
  // like Exists. INVALID_KEY (naming its position) for any bad key.
  Result<PrefixInfo> ProbePrefix(std::span<const std::string> keys) {
    return object_service_.ProbePrefix(keys);
  }
  // OBJECT_LEASED while a reader holds a lease (unless forced), OBJECT_BUSY
  // while a put is in flight. A group member follows group_remove_policy:
  // the whole group goes (kGroup), or the member goes and its group turns
  // broken (kMember).
  std::vector<Status> Remove(std::span<const std::string> keys,
                             RemoveOptions options) override;

  // Groups by id: state, counts and members. GROUP_NOT_FOUND when unknown.
  std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) const override {
    return object_service_.GetGroup(group_ids);
  }
  // Removes every member of each group and the group itself.
  std::vector<Status> RemoveGroup(std::span<const std::string> group_ids,
                                  RemoveOptions options) override {
    return object_service_.RemoveGroup(group_ids, options);
  }

  // ---- Node calls ----

  // Registers a node (retiring an earlier incarnation of the same name) and
  // rebuilds the objects of its DRAM directory and its SSD inventory (a
  // restarted master or a new leader learns what the node holds; ha.md).
  Result<NodeId> RegisterNode(const NodeSpec& spec,
                              std::span<const SsdInventoryEntry> inventory,
                              std::span<const DramEntry> dram = {}) {
    return node_service_.RegisterNode(spec, inventory, dram);
  }
  // A node with a DRAM directory (NodeSpec::keeps_directory): acknowledges
  // the changes up to `acked` and takes the next ones, at most
  // `max_changes`, waiting until `wait_until` (a long poll, as PullTasks)
  // when there are none. NODE_NOT_FOUND when the node must register again.
  Result<DirectoryChanges> SyncDirectory(
      NodeId node, uint64_t acked, uint32_t max_changes = UINT32_MAX,
      TimePoint wait_until = TimePoint::min()) {
    return node_service_.SyncDirectory(node, acked, max_changes, wait_until);
  }
  // Records liveness and what the node says of its SSD store (from then
  // on the SSD capacity eviction counts with; a store that refused writes
  // for room since its last report pauses offloads to it, see
  // NotifyOffloadFailure). Never waits for work or I/O. NODE_NOT_FOUND when
  // the node must register again.
  Status Heartbeat(NodeId node, const std::optional<SsdReport>& ssd = {}) {
    return node_service_.Heartbeat(node, ssd);
  }
  // The node's work, as it is made (and, like Heartbeat, a sign of life):
  // its SSD deletions (apply them before
  // the tasks), then at most `max_tasks` offload tasks (and no more than
  // offload_max_per_pull) and promotion tasks, oldest first; they
  // become dispatched. With nothing queued, waits for work until
  // `wait_until` at most (a long poll; the default returns at once; never
  // longer in real time than that is ahead of clock()), so a
  // node that asks again as it finishes gets tasks as fast as its SSD
  // takes them. NODE_NOT_FOUND when the node must register again.
  Result<NodeTasks> PullTasks(NodeId node, uint32_t max_tasks = UINT32_MAX,
                              TimePoint wait_until = TimePoint::min()) {
    return node_service_.PullTasks(node, max_tasks, wait_until);
  }
  // Ends the node's waiting PullTasks and SyncDirectory now (with nothing):
  // it is stopping.
  void InterruptPull(NodeId node) { node_service_.InterruptPull(node); }
  // Task reports (core/task_lifecycle.h). Each call takes a batch, the
  // node's, and answers one status per task in order: TASK_NOT_FOUND for a
  // task unknown (reaped, never issued, another node's or another kind's).
  // The single-task forms are batches of one.
  //
  // The SSD copy of an offload task is durable: add the local_disk replica.
  std::vector<Status> NotifyOffloadSuccess(NodeId node,
                                           std::span<const TaskId> tasks);
  std::vector<Status> NotifyOffloadFailure(
      NodeId node, std::span<const TaskFailure> failures);
  Status NotifyOffloadSuccess(NodeId node, TaskId task);
  // The offload did not land; its object stays in DRAM as it was. NO_SPACE
  // (the node's SSD full) pauses offloads to that node, 0.5 s doubling up
  // to 2 s while they keep failing, and SSD eviction there makes room
  // meanwhile: offloads back off instead of failing in a loop. A heartbeat
  // whose SSD report shows room again ends the pause early.
  Status NotifyOffloadFailure(NodeId node, TaskId task, const Status& cause);
  // SSD records a node found corrupt: their local_disk replicas are dropped.
  void ReportSsdCorruption(NodeId node, std::span<const std::string> keys) {
    node_service_.ReportSsdCorruption(node, keys);
  }
  // A node that is stopping cleanly leaves now instead of after node_ttl:
  // the same loss as ExpireNodes (its tasks reaped and their pins released,
  // its replicas dropped, objects left with none removed, their groups
  // broken with cause node_lost). The node is kept as dead (counted in
  // nodes_dead until its name registers again), as after node_ttl, but
  // counted in nodes_deregistered, not nodes_expired. NODE_NOT_FOUND for an
  // unknown, dead or replaced node, and nothing changes.
  Status DeregisterNode(NodeId node) {
    return node_service_.DeregisterNode(node);
  }

  // ---- Promotion on hit (core/promoter.h, docs/design/promotion.md) ----

  // Stages a processing DRAM replica for promotion `task` of `node`,
  // preferring the node's own segment, and says where to write the bytes.
  // TASK_NOT_FOUND when the task is gone (reaped). When no DRAM is free
  // (NO_SPACE) or the source vanished (OBJECT_NOT_FOUND) the task is
  // settled here as failed; the node drops it and reports nothing.
  Result<ReplicaDescriptor> PromotionAllocStart(NodeId node, TaskId task);
  std::vector<Result<ReplicaDescriptor>> PromotionAllocStart(
      NodeId node, std::span<const TaskId> tasks);
  std::vector<Status> NotifyPromotionSuccess(NodeId node,
                                             std::span<const TaskId> tasks);
  std::vector<Status> NotifyPromotionFailure(
      NodeId node, std::span<const TaskFailure> failures);
  // The bytes are in the staged replica: it becomes readable and the source
  // is unpinned. A group member's replica waits, staged, until every member
  // of its group succeeded; then all commit at once.
  Status NotifyPromotionSuccess(NodeId node, TaskId task);
  // The promotion failed (the SSD read, the transfer): the staged replica
  // is freed and the source unpinned; a group's other members are
  // abandoned with it. `cause` picks the counter (transfer_failed unless
  // it is an SSD read error, then source_lost).
  Status NotifyPromotionFailure(NodeId node, TaskId task, const Status& cause);
  // Operator: promotes an SSD-only object, or a whole group, now. Admission
  // and the watermark are bypassed; the queue limit and DRAM capacity are
  // not. Returns the tasks queued. OBJECT_NOT_FOUND / GROUP_NOT_FOUND when
  // unknown; NOT_APPLICABLE when it is already in DRAM, has no SSD copy, is
  // being put, or its group is not complete; OBJECT_BUSY when a promotion
  // is already queued; QUEUE_FULL at the queue limit.
  Result<std::vector<TaskId>> PromoteObject(const std::string& key) override {
    return promoter_.PromoteObject(key);
  }
  Result<std::vector<TaskId>> PromoteGroup(
      const std::string& group_id) override {
    return promoter_.PromoteGroup(group_id);
  }
  // Reaps promotions older than the task timeout. Returns tasks reaped.
  size_t ReapPromotionTasks() { return promoter_.Reap(); }
  // While DRAM is below the proactive low watermark, promotes the hottest
  // SSD-only objects among a bounded sample. Returns promotions queued.
  size_t PromoteProactively() { return promoter_.PromoteProactively(); }
  PromotionOptions promotion_options() const {
    return s_.lifecycle.gate().options();
  }
  // INVALID_ARGUMENT (nothing changes) when `options` is invalid. Replaces
  // every promotion option; UpdateRuntimeConfig changes some atomically.
  Status SetPromotionOptions(const PromotionOptions& options);

  // ---- Forced eviction (core/forced_evictor.h) ----

  // Operator: evicts an object's DRAM copy now; a group member's group is
  // evicted whole (as EvictGroup). With offload off, or when an SSD copy
  // exists, the DRAM copy is dropped now (an object with no other copy
  // leaves the store, as eviction does). With offload on (on_evict or
  // write_through) and no SSD copy, an offload is queued first and the DRAM
  // copy goes when it lands (bytes_freed 0, the task in offloads); a node
  // without an SSD tier drops it now. Not an access.
  // INVALID_KEY, OBJECT_NOT_FOUND; NOT_APPLICABLE when it has no DRAM copy
  // or is hard-pinned; OBJECT_BUSY while a put, an offload or a promotion
  // of it is in flight; OBJECT_LEASED while a reader holds a lease;
  // QUEUE_FULL when the offload cannot be queued.
  Result<ForcedEviction> EvictObject(const std::string& key) override {
    return forced_.EvictObject(key);
  }
  // The same for a whole group, as one unit (docs/design/groups.md): its
  // DRAM copies go together, and with offload on, not before every member
  // has an SSD copy: the missing offloads are queued and the last one to
  // land drops them all (unless a member is leased or pinned by then).
  // GROUP_NOT_FOUND; NOT_APPLICABLE when it is filling or no member is in
  // DRAM; the other reasons as EvictObject for any member.
  Result<ForcedEviction> EvictGroup(const std::string& group_id) override {
    return forced_.EvictGroup(group_id);
  }

  // ---- Lookups for clients and operators ----

  std::optional<NodeView> GetNode(NodeId node) const {
    return node_service_.GetNode(node);
  }
  // The same as a Result: NODE_NOT_FOUND when the node is not registered.
  Result<NodeView> FindNode(NodeId node) const {
    return node_service_.FindNode(node);
  }
  std::vector<NodeView> ListNodes() const override {
    return node_service_.ListNodes();
  }
  Result<ObjectDescription> DescribeObject(std::string_view key) const override;
  std::vector<Task> ListTasks(TaskKind kind) const override;
  // Up to `limit` groups with ids after `cursor`, in id order, in state
  // `filter` if given; GroupPage::next_cursor continues the listing. For
  // operators: each page scans every group stripe (one at a time, never
  // holding an object stripe).
  GroupPage ListGroups(std::optional<GroupState> filter, size_t limit,
                       std::string_view cursor) const override {
    return s_.index.ListGroups(filter, limit, cursor);
  }

  // ---- Background steps ----

  void Tick();
  size_t ExpireNodes() {  // returns nodes declared dead
    return node_service_.ExpireNodes();
  }
  size_t ReapStalledPuts() {  // returns puts freed
    return puts_.ReapStalledPuts();
  }
  size_t ReapOffloadTasks() { return offloader_.Reap(); }  // tasks reaped
  // A memory round that only evicts, per node: a node over the high
  // watermark (or, for the node that can free most at once, `need_free`
  // bytes more) frees down to high - ratio, least recently used first.
  // Clean units go now; dirty ones are offloaded first under offload.
  // Refreshes every node's clean reserve. Returns bytes freed or scheduled
  // to be freed.
  uint64_t EvictMemory(uint64_t need_free = 0) {
    return tiering_.EvictMemory(need_free);
  }
  // A memory round that only writes back: per node, while the bytes of
  // units without a whole SSD copy are above writeback_watermark x DRAM
  // (0 under write_through), the coldest are written to SSD (copies: they
  // stay in DRAM, clean), whole groups at a time, as far as the node's
  // offload queue takes them. Returns the bytes queued.
  uint64_t WriteBack() { return tiering_.WriteBack(); }
  // Every node's DRAM as the last memory round saw it.
  std::vector<NodeMemoryView> MemoryByNode() const override {
    return tiering_.MemoryByNode();
  }
  uint64_t EvictSsd() { return tiering_.EvictSsd(); }  // bytes dropped
  // Hands back to the allocators the DRAM ranges held for location grants
  // that ran out (allocations also do, node by node); wakes waiting puts.
  // Returns their bytes.
  uint64_t ReleaseHeldMemory() {
    const uint64_t bytes = s_.nodes.ReleaseHeldMemory();
    if (bytes > 0) s_.space.Notify();
    return bytes;
  }
  // Expires groups filling past group_fill_timeout (removing their
  // members) and collects groups broken or expired for group_broken_ttl
  // (removing survivors). Returns groups expired plus collected.
  size_t SweepGroups() { return object_service_.SweepGroups(); }

  MasterStats GetStats() const override;
  // Walks every object; O(n). For tests and operators.
  AuditReport Audit() const;

 private:
  // What every part shares: configuration, the index, the nodes, the task
  // lifecycle, the counters.
  MasterState s_;
  // The parts, each over s_ (and the parts it calls, built before it).
  Promoter promoter_{&s_};
  Offloader offloader_{&s_, [this](const std::string& group_id) {
                         forced_.FinishForcedGroupEviction(group_id);
                       }};
  Tiering tiering_{&s_, &offloader_};
  ForcedEvictor forced_{&s_, &tiering_, &offloader_};
  ObjectService object_service_{&s_, &promoter_};
  Puts puts_{&s_, &tiering_, &offloader_};
  NodeService node_service_{&s_, &object_service_, &tiering_, &offloader_};
  // What the store's hit ratio would be at other sizes: fed by reads that
  // hit and by puts here, sized every tick.
  HitRatioForecast forecast_;
  // Serializes run-time configuration changes (knobs and promotion
  // options), so a partial change is applied over the one before it.
  Mutex config_update_mu_;
};

}  // namespace mooncake_tier
