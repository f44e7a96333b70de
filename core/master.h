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
// Lock order (see docs/design/core.md): eviction round -> group stripe ->
// object stripe(s) -> node registry -> task table -> detached replicas. The
// stripes are the ObjectIndex's, which takes them and checks their order;
// the master reaches objects and groups only through its slots. The
// configuration-change mutex is taken alone, before the run-time knobs and the
// promotion options (leaves).
//
// Thread safety: every public method is thread-safe.

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "base/clock.h"
#include "core/dram_pressure.h"
#include "core/eviction_planner.h"
#include "core/group_table.h"
#include "core/master_admin.h"
#include "core/master_config.h"
#include "core/master_state.h"
#include "core/master_stats.h"
#include "core/master_views.h"
#include "core/node_registry.h"
#include "core/object_index.h"
#include "core/object_table.h"
#include "core/offloader.h"
#include "core/promoter.h"
#include "core/runtime_knobs.h"
#include "core/space_signal.h"
#include "core/task_lifecycle.h"
#include "core/tiering.h"
#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"
#include "protocol/messages.h"
#include "protocol/types.h"

namespace mooncake_tier {









struct MemoryRound;
enum class DramUse : uint8_t;


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
                             std::span<const std::string> keys);
  // Abandons puts in flight and frees their space.
  std::vector<Status> PutRevoke(const ClientId& client,
                                std::span<const std::string> keys);
  // Complete replicas, MEMORY first; grants a lease that lasts until the
  // reader releases it (ReleaseLeases) or config().lease_ttl passes.
  // OBJECT_NOT_FOUND when absent, OBJECT_NOT_READY while only processing.
  std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys);
  // Readers are done copying: each ends its share of the lease it was
  // granted. A release whose lease already ended (expired, or another
  // period's id), or of an object gone since, changes nothing. Returns the
  // releases that ended a reader's share.
  size_t ReleaseLeases(std::span<const LeaseRelease> releases);
  // Existence probes: never grant leases nor count as accesses.
  std::vector<Result<ExistsInfo>> Exists(std::span<const std::string> keys);
  // OBJECT_LEASED while a reader holds a lease (unless forced), OBJECT_BUSY
  // while a put is in flight. A group member follows group_remove_policy:
  // the whole group goes (kGroup), or the member goes and its group turns
  // broken (kMember).
  std::vector<Status> Remove(std::span<const std::string> keys,
                             RemoveOptions options) override;

  // Groups by id: state, counts and members. GROUP_NOT_FOUND when unknown.
  std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) const override;
  // Removes every member of each group and the group itself.
  std::vector<Status> RemoveGroup(std::span<const std::string> group_ids,
                                  RemoveOptions options) override;

  // ---- Node calls ----

  // Registers a node (retiring an earlier incarnation of the same name) and
  // rebuilds the objects of its SSD inventory.
  Result<NodeId> RegisterNode(const NodeSpec& spec,
                              std::span<const SsdInventoryEntry> inventory);
  // Records liveness and what the node says of its SSD store (from then
  // on the SSD capacity eviction counts with; a store that refused writes
  // for room since its last report pauses offloads to it, see
  // NotifyOffloadFailure). Never waits for work or I/O. NODE_NOT_FOUND when
  // the node must register again.
  Status Heartbeat(NodeId node, const std::optional<SsdReport>& ssd = {});
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
                              TimePoint wait_until = TimePoint::min());
  // Ends the node's waiting PullTasks now (with no tasks): it is stopping.
  void InterruptPull(NodeId node);
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
  void ReportSsdCorruption(NodeId node, std::span<const std::string> keys);
  // A node that is stopping cleanly leaves now instead of after node_ttl:
  // the same loss as ExpireNodes (its tasks reaped and their pins released,
  // its replicas dropped, objects left with none removed, their groups
  // broken with cause node_lost). The node is kept as dead (counted in
  // nodes_dead until its name registers again), as after node_ttl, but
  // counted in nodes_deregistered, not nodes_expired. NODE_NOT_FOUND for an
  // unknown, dead or replaced node, and nothing changes.
  Status DeregisterNode(NodeId node);

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

  // ---- Forced eviction (master_forced_eviction.cc) ----

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
  Result<ForcedEviction> EvictObject(const std::string& key) override;
  // The same for a whole group, as one unit (docs/design/groups.md): its
  // DRAM copies go together, and with offload on, not before every member
  // has an SSD copy: the missing offloads are queued and the last one to
  // land drops them all (unless a member is leased or pinned by then).
  // GROUP_NOT_FOUND; NOT_APPLICABLE when it is filling or no member is in
  // DRAM; the other reasons as EvictObject for any member.
  Result<ForcedEviction> EvictGroup(const std::string& group_id) override;

  // ---- Lookups for clients and operators ----

  std::optional<NodeView> GetNode(NodeId node) const;
  // The same as a Result: NODE_NOT_FOUND when the node is not registered.
  Result<NodeView> FindNode(NodeId node) const;
  std::vector<NodeView> ListNodes() const override;
  Result<ObjectDescription> DescribeObject(
      std::string_view key) const override;
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
  size_t ExpireNodes();       // returns nodes declared dead
  size_t ReapStalledPuts();   // returns puts freed
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
  // Expires groups filling past group_fill_timeout (removing their
  // members) and collects groups broken or expired for group_broken_ttl
  // (removing survivors). Returns groups expired plus collected.
  size_t SweepGroups();

  MasterStats GetStats() const override;
  // Walks every object; O(n). For tests and operators.
  AuditReport Audit() const;

 private:
  // Why `request` cannot be put at all (OK when it may be tried).
  // `group_id_valid`, if given, is ValidateGroupId of the request's group
  // id, checked once for a run of members sharing it.
  Status ValidatePutStart(const PutStartRequest& request,
                          const Status* group_id_valid = nullptr) const;
  // Book a put start's outcome in the counters.
  void CountPutStart(const Result<ReplicaDescriptor>& placed) {
    if (placed.ok()) {
      s_.counters.put_started.fetch_add(1, std::memory_order_relaxed);
    } else {
      CountPutRefused(placed.status());
    }
  }
  void CountPutRefused(const Status& refused);
  // One try at every request, in order; sets waiting[i] for a request that
  // found no room (its result is then a NO_SPACE not yet counted).
  std::vector<Result<ReplicaDescriptor>> PutStartPass(
      std::span<const PutStartRequest> requests, std::vector<uint8_t>& waiting);
  void RecordPutWait(Duration waited);
  // A put of an object that is no group member. *no_room: it found no
  // room even after MakeRoom.
  Result<ReplicaDescriptor> PutStartOne(const PutStartRequest& request,
                                        bool* no_room);
  // Consecutive members of one group (`run`, all carrying the same group
  // id), appended to `out` in order: one visit of the group stripe for the
  // run, left only for MakeRoom when a member finds no space. no_room[i]
  // as PutStartOne's.
  void PutStartGroupRun(std::span<const PutStartRequest> run,
                        std::vector<Result<ReplicaDescriptor>>& out,
                        std::span<uint8_t> no_room);
  // The object half of a put start: NO_SPACE without evicting. `key` is
  // request.key with its hash; `now` the time of the call; `group` the
  // record of the group the member joins (null: not a member).
  Result<ReplicaDescriptor> PutStartObject(const PutStartRequest& request,
                                           const HashedKey& key, TimePoint now,
                                           GroupRef group = nullptr);
  // Reserves the member's index, then starts the object. `group` is the
  // slot of the request's group id, looked up once for a run of members:
  // the call may create or erase its entry.
  Result<ReplicaDescriptor> PutStartMemberLocked(GroupSlot& group,
                                                 const PutStartRequest& request,
                                                 const HashedKey& key,
                                                 TimePoint now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role);
  // A group member whose put this call completed.
  struct CompletedMember {
    GroupRef group;
    uint32_t index = 0;
    TimePoint completed;
  };
  using CompletedMembers = absl::InlinedVector<CompletedMember, 8>;
  // The object half of PutEnd, under the key's stripe alone: completes the
  // staged DRAM replica, and a group member counts itself present in its
  // group's record. It appends the member to *members when its put is the
  // group's last (GroupRecord::CountPresent); the caller then completes
  // those groups with CompleteGroups.
  Status CompletePut(const ClientId& client, const std::string& key,
                     CompletedMembers* members);
  // The group half of PutEnd, under each group's stripe: the last member
  // becomes present if its index is still held (by that put: see
  // CompleteGroups), and a filling group complete, which makes every member
  // readable (one store into the group's record).
  void CompleteGroups(const CompletedMembers& last_members);
  Status PutRevokeOne(const ClientId& client, const std::string& key);
  // Frees a staged put of `key` (still carrying `group`). With a null
  // client, only if it is stalled past the put timeout. On success
  // *revoked_bytes (when given) is the DRAM the put had staged.
  Status RevokeStaged(const std::string& key,
                      const std::optional<GroupSpec>& group,
                      const ClientId* client,
                      std::optional<uint64_t>* revoked_bytes);
  Status RevokeGrouped(const std::string& key, const GroupSpec& group,
                       const ClientId* client);
  // The group membership of `key`, read under its stripe alone.
  std::optional<GroupSpec> GroupOf(const std::string& key);
  // Removes a group and every member. With `member`, only if the member at
  // `member_index` is still that key (GROUP_NOT_FOUND otherwise).
  Status RemoveGroupOne(const std::string& group_id, RemoveOptions options,
                        const std::string* member = nullptr,
                        uint32_t member_index = 0);

  // Removes every member object of `group` (leases and pins as Remove
  // with `force`); returns OBJECT_LEASED / OBJECT_BUSY without changing
  // anything when a member blocks it.
  Status RemoveMembersLocked(GroupSlot& group, bool force)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role);
  // Records that members of groups lost their last replica or were found
  // corrupt: their groups turn broken.
  void LoseMembers(const std::vector<std::pair<GroupSpec, std::string>>& lost,
                   BreakCause cause);
  Result<ObjectReplicas> GetReplicaListOne(const std::string& key);
  // A reader's share of the object's lease (a new lease period if the
  // last one ended).
  void GrantLeaseLocked(ObjectMeta& meta, TimePoint now);
  // The read itself, under the key's stripe; an SSD-only hit sets
  // *candidate.
  Result<ObjectReplicas> ReadReplicas(
      const std::string& key, std::optional<PromotionCandidate>* candidate);
  Result<ExistsInfo> ExistsOne(const std::string& key);
  Status RemoveOne(const std::string& key, RemoveOptions options);
  // Removes the object at `key` if it still carries `group`.
  Status RemoveObject(const std::string& key,
                      const std::optional<GroupSpec>& group,
                      RemoveOptions options);





  void RestoreInventoryEntry(NodeId node, const SsdInventoryEntry& entry);
  // Adds the node's copy to the object (creating it); false when the copy
  // is stale or already known. For a group member, once the copy is known
  // to be restored, calls join() (under the object's stripe; the caller
  // holds the group's): the record of the incarnation the group took it
  // into, or null if the group did not take it.
  using JoinFn = absl::FunctionRef<GroupRef()>;
  bool RestoreObject(NodeId node, const SsdInventoryEntry& entry, JoinFn join);
  void DropNodeReplicas(NodeId node);

  // Keeps s_.filling_group_bytes in step with one group: made before the
  // group changes, it books the change of the group's FillingDramBytes()
  // when it goes out of scope. Dropped() before the group is erased.
  // REQUIRES: the group's stripe is held for its whole life.
  class FillingDelta {
   public:
    FillingDelta(std::atomic<int64_t>* total, const GroupMeta* group)
        : total_(total), group_(group), before_(group->FillingDramBytes()) {}
    ~FillingDelta() {
      const uint64_t after = group_ ? group_->FillingDramBytes() : 0;
      // Most changes (a member of a complete group, a retried put) change
      // nothing here: no atomic write for them.
      if (after == before_) return;
      total_->fetch_add(
          static_cast<int64_t>(after) - static_cast<int64_t>(before_),
          std::memory_order_relaxed);
    }
    void Dropped() { group_ = nullptr; }
    FillingDelta(const FillingDelta&) = delete;
    FillingDelta& operator=(const FillingDelta&) = delete;

   private:
    std::atomic<int64_t>* const total_;
    const GroupMeta* group_;
    const uint64_t before_;
  };

  // Why `meta`'s DRAM copy cannot be evicted by an operator now (OK when
  // it can).
  Status ForcedEvictable(std::string_view key, const ObjectMeta& meta,
                         TimePoint now) const;
  // A forced eviction of a group whose offloads were queued ends here when
  // its last offload lands: with every member on SSD and none leased or
  // pinned, the DRAM copies go together.
  void FinishForcedGroupEviction(const std::string& group_id);

  // What every part shares: configuration, the index, the nodes, the task
  // lifecycle, the counters.
  MasterState s_;
  // The parts.
  Promoter promoter_{&s_};
  Offloader offloader_{&s_, [this](const std::string& group_id) {
                         FinishForcedGroupEviction(group_id);
                       }};
  Tiering tiering_{&s_, &offloader_};
  // Serializes run-time configuration changes (knobs and promotion
  // options), so a partial change is applied over the one before it.
  Mutex config_update_mu_;
  std::atomic<uint64_t> next_lease_id_{0};
};

}  // namespace mooncake_tier
