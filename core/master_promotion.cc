// Master: promotion on hit (ARCHITECTURE.md section 6,
// docs/design/promotion.md). A read that finds an object, or a member of a
// complete group, only on SSD feeds the sketch; admitted units get a task
// per object for the node that holds the SSD copy, which is pinned until
// the task ends. The node stages a DRAM replica (PromotionAllocStart),
// writes the bytes and reports. A group's members commit together once all
// of them are staged; one failure abandons the whole group's promotion.
//
// Every promotion task leaves the task table under its object's stripe (and
// a group member's, under its group stripe too), so its exit is ordered
// with any other change to the object, as offloads are.

#include <algorithm>

#include "core/master.h"
#include "core/validation.h"

namespace mooncake_tier {
namespace {

// How many stripes a sampling pass (victims, proactive candidates) visits,
// and how many objects it looks at in each.
constexpr uint32_t kSampleStripes = 16;
constexpr uint32_t kSamplePerStripe = 16;

const ReplicaDescriptor* SsdOnlySource(const ObjectMeta& meta) {
  if (meta.HasComplete(Tier::kMemory) || meta.PutInFlight()) return nullptr;
  for (const Replica& r : meta.replicas) {
    if (r.desc.tier == Tier::kLocalDisk &&
        r.desc.state == ReplicaState::kComplete) {
      return &r.desc;
    }
  }
  return nullptr;
}

// The sketch counts a group member as its group.
uint64_t UnitHash(const std::string& key, const std::optional<GroupSpec>& g) {
  return HashKey(g ? std::string_view(g->group_id) : std::string_view(key));
}
uint64_t UnitHash(const std::string& key, const ObjectMeta& meta) {
  return meta.group ? meta.group->id_hash() : HashKey(key);
}

}  // namespace

void Master::MaybePromote(const PromotionCandidate& c) {
  const PromotionOptions o = promotion_.options();
  if (!o.on_hit) return;
  counters_.promotion_attempts.fetch_add(1, std::memory_order_relaxed);
  const uint32_t estimate = promotion_.Touch(UnitHash(c.key, c.group));
  const uint64_t bytes = c.group ? c.size * c.group->group_size : c.size;
  std::vector<AdmissionVictim> victims;
  if (o.policy == PromotionPolicy::kTinyLfu &&
      estimate >= o.admission_threshold) {
    victims = VictimEstimates(bytes);
  }
  if (!promotion_.Admit(o, estimate, bytes, victims)) {
    counters_.promotion_admission_gated.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (PromotionTarget(c.holder, bytes) == kNoNode) {
    counters_.promotion_watermark_gated.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Result<std::vector<TaskId>> queued =
      c.group ? QueueGroupPromotion(c.group->group_id, /*forced=*/false)
              : QueueObjectPromotion(c.key, /*forced=*/false);
  if (queued.ok()) return;
  switch (queued.status().reason()) {
    case ErrorReason::kObjectBusy:  // already queued: not a failure
      counters_.promotion_deduped.fetch_add(1, std::memory_order_relaxed);
      break;
    case ErrorReason::kQueueFull:
      counters_.promotion_queue_full.fetch_add(1, std::memory_order_relaxed);
      break;
    default:  // changed since the read (removed, promoted, being put)
      break;
  }
}

std::vector<AdmissionVictim> Master::VictimEstimates(uint64_t bytes) {
  const TierUsage usage = nodes_.MemoryUsage();
  const RuntimeKnobs::Watermarks marks = knobs_.memory();
  const double target = (marks.high - marks.ratio) * usage.capacity;
  if (usage.used + bytes <= target) return {};  // room: nothing displaced
  // The least recently used of a sample stand for what the next eviction
  // round would take (eviction itself is approximately LRU too).
  struct Victim {
    TimePoint last_access;
    uint64_t size;
    uint64_t unit;
  };
  std::vector<Victim> sample;
  const TimePoint now = clock_->Now();
  SampleObjects(
      kSamplePerStripe, [&](const std::string& key, const ObjectMeta& meta) {
        if (MemoryEvictable(meta, now)) {
          sample.push_back({meta.last_access, meta.size, UnitHash(key, meta)});
        }
      });
  std::sort(sample.begin(), sample.end(), [](const Victim& a, const Victim& b) {
    return a.last_access < b.last_access;
  });
  std::vector<AdmissionVictim> out;
  uint64_t covered = 0;
  for (const Victim& v : sample) {
    if (covered >= bytes) break;
    out.push_back({promotion_.Estimate(v.unit), v.size});
    covered += v.size;
  }
  return out;
}

void Master::SampleObjects(uint32_t per_stripe, ObjectIndex::SampleFn fn) {
  index_.SampleObjects(kSampleStripes, per_stripe, fn);
}

Result<TaskId> Master::QueuePromotionLocked(ObjectSlot& object, bool forced) {
  ObjectMeta& meta = *object;
  const std::string key(object.key());
  if (meta.HasComplete(Tier::kMemory)) {
    return Status(ErrorReason::kNotApplicable, "'" + key + "' is in DRAM");
  }
  if (meta.PutInFlight()) {
    return Status(ErrorReason::kNotApplicable, "'" + key + "' is being put");
  }
  Replica* source = nullptr;
  for (Replica& r : meta.replicas) {
    if (r.desc.tier == Tier::kLocalDisk &&
        r.desc.state == ReplicaState::kComplete &&
        nodes_.IsAlive(r.desc.node)) {
      source = &r;
      break;
    }
  }
  if (source == nullptr) {
    return Status(ErrorReason::kNotApplicable,
                  "'" + key + "' has no SSD copy on a live node");
  }
  Task task;
  task.kind = TaskKind::kPromotion;
  task.node = source->desc.node;
  task.key = key;
  task.group = meta.group_spec();
  task.source = source->desc;
  task.forced = forced;
  // The table refuses a second task for the key (OBJECT_BUSY: dedup).
  MT_ASSIGN_OR_RETURN(const TaskId id,
                      tasks_.Enqueue(std::move(task), UINT32_MAX));
  ++source->refcnt;
  counters_.promotion_queued.fetch_add(1, std::memory_order_relaxed);
  if (forced)
    counters_.promotion_forced.fetch_add(1, std::memory_order_relaxed);
  return id;
}

Result<std::vector<TaskId>> Master::QueueObjectPromotion(const std::string& key,
                                                         bool forced) {
  return index_.Update(
      key,
      [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
          object_stripe_role) -> Result<std::vector<TaskId>> {
        if (!object) {
          return Status(ErrorReason::kObjectNotFound,
                        "no object '" + key + "'");
        }
        if (object->group) {
          return Status(ErrorReason::kNotApplicable,
                        "'" + key + "' is a member of group '" +
                            std::string(object->group->group_id()) +
                            "': promote the group");
        }
        if (tasks_.FindByKey(TaskKind::kPromotion, key)) {
          return Status(ErrorReason::kObjectBusy,
                        "a promotion is already queued");
        }
        if (!promotion_.Reserve(1, promotion_.options().queue_limit)) {
          return Status(ErrorReason::kQueueFull, "promotion queue is full");
        }
        Result<TaskId> id = QueuePromotionLocked(object, forced);
        if (!id.ok()) {
          promotion_.Release(1);
          return id.status();
        }
        return std::vector<TaskId>{*id};
      });
}

Result<std::vector<TaskId>> Master::QueueGroupPromotion(
    const std::string& group_id, bool forced) {
  return index_.UpdateGroup(
      group_id,
      [&](GroupSlot& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
          group_stripe_role) -> Result<std::vector<TaskId>> {
        if (!entry) {
          return Status(ErrorReason::kGroupNotFound,
                        "no group '" + group_id + "'");
        }
        GroupMeta& group = *entry;
        if (group.state != GroupState::kComplete) {
          return Status(ErrorReason::kNotApplicable,
                        "group '" + group_id + "' is " +
                            std::string(GroupStateName(group.state)));
        }
        if (group.AnyMember([&](uint32_t, const GroupMember& member) {
              return tasks_.FindByKey(TaskKind::kPromotion, group.KeyOf(member))
                  .has_value();
            })) {
          return Status(ErrorReason::kObjectBusy,
                        "a promotion is already queued");
        }
        const uint32_t n = group.member_count;
        if (!promotion_.Reserve(n, promotion_.options().queue_limit)) {
          return Status(ErrorReason::kQueueFull, "promotion queue is full");
        }
        std::vector<TaskId> ids;
        Status failed;
        uint32_t visited = 0;
        entry.ForEachMember(
            [&](ObjectSlot& member)
                ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
                  ++visited;
                  if (!failed.ok()) return;
                  Result<TaskId> id = QueuePromotionLocked(member, forced);
                  if (id.ok()) {
                    ids.push_back(*id);
                  } else {
                    failed = id.status();
                  }
                });
        if (failed.ok() && visited != n) {
          failed = Status(ErrorReason::kNotApplicable,
                          "group '" + group_id + "' is missing a member");
        }
        if (failed.ok()) return ids;
        // All or nothing: take back the members already queued.
        entry.ForEachMember(
            [&](ObjectSlot& member)
                ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
                  std::optional<Task> task = tasks_.FindByKey(
                      TaskKind::kPromotion, std::string(member.key()));
                  if (!task ||
                      std::find(ids.begin(), ids.end(), task->id) == ids.end())
                    return;
                  if (tasks_.Take(task->id).ok())
                    AbandonPromotionLocked(member, *task);
                });
        promotion_.Release(n);
        return failed;
      });
}

Result<std::vector<TaskId>> Master::PromoteObject(const std::string& key) {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  if (std::optional<GroupSpec> group = GroupOf(key)) {
    return QueueGroupPromotion(group->group_id, /*forced=*/true);
  }
  return QueueObjectPromotion(key, /*forced=*/true);
}

Result<std::vector<TaskId>> Master::PromoteGroup(const std::string& group_id) {
  return QueueGroupPromotion(group_id, /*forced=*/true);
}

bool Master::PromotionRoomOn(NodeId node, uint64_t bytes) const {
  const TierUsage usage = nodes_.MemoryUsageOf(node);
  const RuntimeKnobs::Watermarks marks = knobs_.memory();
  const double cap = static_cast<double>(usage.capacity);
  if (usage.capacity == 0 ||
      static_cast<double>(usage.used + bytes) >= marks.high * cap) {
    return false;  // at the high watermark: the next round evicts
  }
  // Writers need free or clean DRAM at hand (what a put takes at once). A
  // promoted copy is clean itself, so it only takes free room; but while
  // writeback lags and DRAM is mostly dirty, that room is what the writers
  // have left: then no promotion.
  const std::optional<DramPressure::NodeState> seen = pressure_.Get(node);
  if (!seen) return true;
  const uint64_t at_hand = seen->bytes.free() + seen->bytes.clean;
  const auto reserve = static_cast<uint64_t>(marks.ratio * cap);
  return at_hand >= bytes + reserve;
}

NodeId Master::PromotionTarget(NodeId node, uint64_t bytes) const {
  if (node != kNoNode && PromotionRoomOn(node, bytes)) return node;
  NodeId best = kNoNode;
  uint64_t most_free = 0;
  for (const NodeView& view : nodes_.List()) {
    const uint64_t free = view.spec.dram_size - view.dram_used;
    if (view.state == NodeState::kAlive && free > most_free &&
        PromotionRoomOn(view.id, bytes)) {
      best = view.id;
      most_free = free;
    }
  }
  return best;
}

Result<ReplicaDescriptor> Master::StagePromotionSpace(NodeId holder,
                                                      uint64_t size) {
  // The holder's own segment first: its bytes then never cross the network.
  const NodeId target = PromotionTarget(holder, size);
  if (target == kNoNode) {
    return Status(ErrorReason::kNoSpace,
                  "no node has DRAM for a promotion below its eviction "
                  "target (the room above is kept for puts)");
  }
  MT_ASSIGN_OR_RETURN(const uint64_t offset,
                      nodes_.AllocateMemoryOn(target, size));
  ReplicaDescriptor desc;
  desc.tier = Tier::kMemory;
  desc.node = target;
  desc.offset = offset;
  desc.size = size;
  return desc;
}

Result<ReplicaDescriptor> Master::PromotionAllocStart(NodeId node, TaskId id) {
  std::optional<Task> booked = tasks_.Find(node, id);
  if (!booked || booked->kind != TaskKind::kPromotion) {
    return Status(ErrorReason::kTaskNotFound,
                  "promotion task " + std::to_string(id) + " is not booked");
  }
  Status failure;
  std::optional<Result<ReplicaDescriptor>> answer = index_.Update(
      booked->key,
      [&](ObjectSlot& object) -> std::optional<Result<ReplicaDescriptor>> {
        // Re-read under the stripe: every exit of the task happens under it.
        std::optional<Task> task = tasks_.Find(node, id);
        if (!task) {
          return Status(ErrorReason::kTaskNotFound,
                        "promotion task was reaped");
        }
        if (task->target.id != 0) return task->target;  // a retried call
        if (!object || object->Find(task->source.id) == nullptr) {
          failure = Status(ErrorReason::kObjectNotFound,
                           "'" + task->key + "' or its SSD copy is gone");
        } else {
          Result<ReplicaDescriptor> placed =
              StagePromotionSpace(task->node, task->source.size);
          if (placed.ok()) {
            ReplicaDescriptor desc = *placed;
            desc.id = NextReplicaId();
            desc.state = ReplicaState::kProcessing;
            Replica staged{desc, /*refcnt=*/1};
            staged.staged_by = id;
            object->replicas.push_back(staged);
            tasks_.SetTarget(id, desc);
            return desc;
          }
          failure = placed.status();
        }
        return std::nullopt;
      });
  if (answer) return std::move(*answer);
  FailPromotion(*booked, failure.reason() == ErrorReason::kNoSpace
                             ? counters_.promotion_alloc_failed
                             : counters_.promotion_source_lost);
  return failure;
}

Status Master::NotifyPromotionSuccess(NodeId node, TaskId id) {
  std::optional<Task> booked = tasks_.Find(node, id);
  if (!booked || booked->kind != TaskKind::kPromotion) {
    return Status(ErrorReason::kTaskNotFound,
                  "promotion task " + std::to_string(id) + " is not booked");
  }
  if (booked->target.id == 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "promotion task " + std::to_string(id) +
                      " has no staged replica (call PromotionAllocStart)");
  }
  if (booked->doomed) {  // its group's promotion failed meanwhile
    EndDoomedPromotion(*booked);
    return Status::Ok();
  }
  if (!booked->group) {
    return index_.Update(
        booked->key,
        [&](ObjectSlot& object)
            ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) -> Status {
              MT_ASSIGN_OR_RETURN(const Task task, tasks_.Complete(node, id));
              if (CommitPromotionLocked(object, task)) {
                CountPromotionDone(task);
              } else {
                counters_.promotion_source_lost.fetch_add(
                    1, std::memory_order_relaxed);
              }
              promotion_.Release(1);
              return Status::Ok();
            });
  }
  // A member: staged until every member of its group is.
  const std::string& group_id = booked->group->group_id;
  return index_.UpdateGroup(
      group_id,
      [&](GroupSlot& entry)
          ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role) -> Status {
            // Doomed since it was looked up: its group failed while it was
            // written.
            if (std::optional<Task> now = tasks_.Find(node, id);
                now && now->doomed) {
              TakeAndAbandonPromotion(id, now->key);
              return Status::Ok();
            }
            if (!tasks_.MarkStaged(id)) {
              return Status(ErrorReason::kTaskNotFound,
                            "promotion task was reaped");
            }
            if (!entry) return Status::Ok();  // the reaper settles it
            const GroupMeta& group = *entry;
            std::vector<Task> staged;
            const bool unstaged =
                group.AnyMember([&](uint32_t, const GroupMember& member) {
                  std::optional<Task> t = tasks_.FindByKey(TaskKind::kPromotion,
                                                           group.KeyOf(member));
                  if (!t || t->state != TaskState::kStaged) return true;
                  staged.push_back(*t);
                  return false;
                });
            if (unstaged) return Status::Ok();  // not yet
            uint32_t committed = 0;
            entry.ForEachMember(
                [&](ObjectSlot& member)
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
                      for (const Task& t : staged) {
                        if (t.key != member.key() || !tasks_.Take(t.id).ok())
                          continue;
                        if (CommitPromotionLocked(member, t)) {
                          CountPromotionDone(t);
                          ++committed;
                        }
                      }
                    });
            promotion_.Release(static_cast<uint32_t>(staged.size()));
            if (committed != staged.size()) {
              counters_.promotion_source_lost.fetch_add(
                  staged.size() - committed, std::memory_order_relaxed);
            }
            return Status::Ok();
          });
}

Status Master::NotifyPromotionFailure(NodeId node, TaskId id,
                                      const Status& cause) {
  std::optional<Task> booked = tasks_.Find(node, id);
  if (!booked || booked->kind != TaskKind::kPromotion) {
    return Status(ErrorReason::kTaskNotFound,
                  "promotion task " + std::to_string(id) + " is not booked");
  }
  if (booked->doomed) {
    EndDoomedPromotion(*booked);
    return Status::Ok();
  }
  const bool read_failed = cause.reason() == ErrorReason::kObjectNotFound ||
                           cause.code() == StatusCode::kDataLoss;
  FailPromotion(*booked, read_failed ? counters_.promotion_source_lost
                                     : counters_.promotion_transfer_failed);
  return Status::Ok();
}

void Master::EndDoomedPromotion(const Task& task) {
  if (task.group) {  // a member leaves under its group stripe too
    index_.UpdateGroup(task.group->group_id, [&](GroupSlot&) {
      TakeAndAbandonPromotion(task.id, task.key);
    });
    return;
  }
  TakeAndAbandonPromotion(task.id, task.key);
}

void Master::TakeAndAbandonPromotion(TaskId id, const std::string& key) {
  index_.Update(key, [&](ObjectSlot& object)
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
                           Result<Task> taken = tasks_.Take(id);
                           if (!taken.ok()) return;  // settled meanwhile
                           AbandonPromotionLocked(object, *taken);
                           promotion_.Release(1);
                         });
}

void Master::FailPromotion(const Task& task, std::atomic<uint64_t>& failure) {
  if (task.group) {
    const bool group_found =
        index_.UpdateGroup(task.group->group_id, [&](GroupSlot& entry) {
          if (!entry) return false;
          {
            // The whole group's promotion goes: its members' tasks, staged or
            // not. A member whose bytes the node may still be writing keeps its
            // staged DRAM until the node says it is done (doomed, counted now).
            uint32_t ended = 0;
            entry.ForEachMemberKey(
                task.key, [&](ObjectSlot& member) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                              object_stripe_role) {
                  std::optional<Task> t = tasks_.FindByKey(
                      TaskKind::kPromotion, std::string(member.key()));
                  if (!t || !t->group ||
                      t->group->group_id != task.group->group_id) {
                    return;
                  }
                  const bool self = t->id == task.id;
                  if (!self && t->doomed) return;  // ends when its node reports
                  if (!self && t->state == TaskState::kDispatched &&
                      t->target.id != 0) {
                    if (tasks_.MarkDoomed(t->id)) {
                      failure.fetch_add(1, std::memory_order_relaxed);
                    }
                    return;
                  }
                  if (!tasks_.Take(t->id).ok()) return;
                  AbandonPromotionLocked(member, *t);
                  if (!t->doomed)
                    failure.fetch_add(1, std::memory_order_relaxed);
                  ++ended;
                });
            promotion_.Release(ended);
            return true;
          }
        });
    if (group_found) return;
  }
  index_.Update(task.key, [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                              object_stripe_role) {
    if (!tasks_.Take(task.id).ok()) return;  // settled meanwhile
    AbandonPromotionLocked(object, task);
    failure.fetch_add(1, std::memory_order_relaxed);
    promotion_.Release(1);
  });
}

void Master::AbandonPromotionLocked(ObjectSlot& object, const Task& task) {
  UnpinLocked(object, task);
  if (task.target.id == 0) return;
  if (object) {
    if (std::optional<Replica> staged = object->Erase(task.target.id)) {
      staged->refcnt = 0;
      ReleaseReplicaLocked(task.key, *staged,
                           nodes_.IsAlive(staged->desc.node));
      object.EraseIfEmpty();
      return;
    }
  }
  // The object went while staged: the replica was detached, pinned by us.
  if (std::optional<ReplicaDescriptor> freed =
          detached_.Unpin(task.target.id)) {
    nodes_.FreeMemory(freed->node, freed->offset, freed->size);
  }
}

bool Master::CommitPromotionLocked(ObjectSlot& object, const Task& task) {
  Replica* target = !object ? nullptr : object->Find(task.target.id);
  Replica* source = !object ? nullptr : object->Find(task.source.id);
  if (target == nullptr || source == nullptr) {
    AbandonPromotionLocked(object, task);  // removed or lost meanwhile
    return false;
  }
  ObjectMeta& meta = *object;
  target->desc.state = ReplicaState::kComplete;
  target->staged_by = 0;
  target->refcnt = 0;
  if (source->refcnt > 0) --source->refcnt;
  if (promotion_.options().drop_source && source->refcnt == 0 &&
      !meta.Leased(clock_->Now())) {
    const Replica dropped = *source;
    meta.Erase(dropped.desc.id);
    ReleaseReplicaLocked(task.key, dropped, /*node_alive=*/true);
    counters_.promotion_dropped_sources.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

void Master::CountPromotionDone(const Task& task) {
  counters_.promotion_completed.fetch_add(1, std::memory_order_relaxed);
  counters_.promotion_bytes.fetch_add(task.source.size,
                                      std::memory_order_relaxed);
  const Duration took =
      std::max(Duration::zero(), clock_->Now() - task.created);
  counters_.promotion_duration_us.fetch_add(
      static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(took).count()),
      std::memory_order_relaxed);
  size_t bucket = 0;
  while (bucket < kPromotionDurationBounds.size() &&
         took > kPromotionDurationBounds[bucket]) {
    ++bucket;
  }
  counters_.promotion_duration_buckets[bucket].fetch_add(
      1, std::memory_order_relaxed);
}

size_t Master::ReapPromotionTasks() {
  size_t reaped = 0;
  for (const Task& expired : tasks_.ListExpired(
           TaskKind::kPromotion, promotion_.options().task_timeout)) {
    if (expired.doomed) {  // counted when its group failed
      EndDoomedPromotion(expired);
      continue;
    }
    const uint64_t before = counters_.promotion_timeout.load();
    FailPromotion(expired, counters_.promotion_timeout);
    reaped += counters_.promotion_timeout.load() - before;
  }
  return reaped;
}

size_t Master::PromoteProactively() {
  const PromotionOptions o = promotion_.options();
  if (o.proactive_low_watermark <= 0) return 0;
  const TimePoint now = clock_->Now();
  {
    MutexLock lock(&proactive_mu_);
    if (now - last_proactive_ < o.proactive_interval) return 0;
    last_proactive_ = now;
  }
  const TierUsage usage = nodes_.MemoryUsage();
  const double room = o.proactive_low_watermark * usage.capacity;
  if (usage.capacity == 0 || usage.used >= room) return 0;
  // The hottest SSD-only units of a sample, by sketch estimate.
  struct Hot {
    uint32_t estimate;
    std::string unit;
    bool group;
    uint64_t bytes;
  };
  std::vector<Hot> hot;
  SampleObjects(kSamplePerStripe * 4, [&](const std::string& key,
                                          const ObjectMeta& meta) {
    const ReplicaDescriptor* source = SsdOnlySource(meta);
    if (source == nullptr) return;
    // Not what the next rounds would evict again at once: a unit no newer
    // than its node's next victims stays on SSD.
    const std::optional<DramPressure::NodeState> seen =
        pressure_.Get(source->node);
    if (seen && meta.last_access <= seen->victim_cutoff) return;
    const uint32_t estimate = promotion_.Estimate(UnitHash(key, meta));
    if (estimate == 0) return;  // never read: nothing says it is hot
    hot.push_back(
        {estimate, meta.group ? std::string(meta.group->group_id()) : key,
         meta.group != nullptr,
         meta.group ? meta.size * meta.group->group_size() : meta.size});
  });
  std::sort(hot.begin(), hot.end(),
            [](const Hot& a, const Hot& b) { return a.estimate > b.estimate; });
  size_t queued = 0;
  double used = static_cast<double>(usage.used);
  for (const Hot& h : hot) {
    if (queued >= o.proactive_max_per_step || used + h.bytes > room) break;
    Result<std::vector<TaskId>> ids =
        h.group ? QueueGroupPromotion(h.unit, /*forced=*/false)
                : QueueObjectPromotion(h.unit, /*forced=*/false);
    if (!ids.ok()) continue;  // a group seen twice, or changed meanwhile
    counters_.promotion_proactive.fetch_add(1, std::memory_order_relaxed);
    used += static_cast<double>(h.bytes);
    ++queued;
  }
  return queued;
}

}  // namespace mooncake_tier
