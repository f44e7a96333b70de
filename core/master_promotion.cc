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
  const PromotionOptions o = lifecycle_.gate().options();
  if (!o.on_hit) return;
  counters_.promotion_attempts.fetch_add(1, std::memory_order_relaxed);
  const uint32_t estimate = lifecycle_.gate().Touch(UnitHash(c.key, c.group));
  const uint64_t bytes = c.group ? c.size * c.group->group_size : c.size;
  std::vector<AdmissionVictim> victims;
  if (o.policy == PromotionPolicy::kTinyLfu &&
      estimate >= o.admission_threshold) {
    victims = VictimEstimates(bytes);
  }
  if (!lifecycle_.gate().Admit(o, estimate, bytes, victims)) {
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
    out.push_back({lifecycle_.gate().Estimate(v.unit), v.size});
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
  task.forced = forced;
  // The table refuses a second task for the key (OBJECT_BUSY: dedup).
  MT_ASSIGN_OR_RETURN(const TaskId id,
                      lifecycle_.Queue(*source, std::move(task), UINT32_MAX));
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
        if (lifecycle_.HasTask(TaskKind::kPromotion, key)) {
          return Status(ErrorReason::kObjectBusy,
                        "a promotion is already queued");
        }
        if (!lifecycle_.gate().Reserve(1, lifecycle_.gate().options().queue_limit)) {
          return Status(ErrorReason::kQueueFull, "promotion queue is full");
        }
        Result<TaskId> id = QueuePromotionLocked(object, forced);
        if (!id.ok()) {
          lifecycle_.gate().Release(1);  // the task holds it otherwise
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
              return lifecycle_.HasTask(TaskKind::kPromotion,
                                        group.KeyOf(member));
            })) {
          return Status(ErrorReason::kObjectBusy,
                        "a promotion is already queued");
        }
        const uint32_t n = group.member_count;
        if (!lifecycle_.gate().Reserve(n, lifecycle_.gate().options().queue_limit)) {
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
        // All or nothing: take back the members already queued (each gives
        // back its slot), and the slots never used.
        entry.ForEachMember(
            [&](ObjectSlot& member)
                ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
                  std::optional<Task> task = lifecycle_.Booked(
                      TaskKind::kPromotion, member.key());
                  if (!task ||
                      std::find(ids.begin(), ids.end(), task->id) == ids.end())
                    return;
                  lifecycle_.Cancel(member, task->id);
                });
        lifecycle_.gate().Release(n - static_cast<uint32_t>(ids.size()));
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

// ---- The promotion policy (the lifecycle calls it under the object's
// stripe) ----

Result<ReplicaDescriptor> Master::PromotionTasks::Stage(ObjectSlot& object,
                                                        const Task& task) {
  if (!object || object->Find(task.source.id) == nullptr) {
    return Status(ErrorReason::kObjectNotFound,
                  "'" + task.key + "' or its SSD copy is gone");
  }
  MT_ASSIGN_OR_RETURN(ReplicaDescriptor desc,
                      m_.StagePromotionSpace(task.node, task.source.size));
  desc.id = m_.NextReplicaId();
  desc.state = ReplicaState::kProcessing;
  Replica staged{desc, /*refcnt=*/1};
  staged.staged_by = task.id;
  object->replicas.push_back(staged);
  return desc;
}

void Master::PromotionTasks::Release(ObjectSlot& object, const Task& task) {
  m_.lifecycle_.Unpin(object, task);
  if (task.target.id == 0) return;
  if (object) {
    if (std::optional<Replica> staged = object->Erase(task.target.id)) {
      staged->refcnt = 0;
      m_.ReleaseReplicaLocked(task.key, *staged,
                              m_.nodes_.IsAlive(staged->desc.node));
      object.EraseIfEmpty();
      return;
    }
  }
  // The object went while staged: the replica was detached, pinned by us.
  m_.lifecycle_.UnpinDetached(task.target.id);
}

void Master::PromotionTasks::Commit(ObjectSlot& object, const Task& task) {
  Replica* target = !object ? nullptr : object->Find(task.target.id);
  Replica* source = !object ? nullptr : object->Find(task.source.id);
  if (target == nullptr || source == nullptr) {
    Abandon(object, task, TaskEnd::kSourceLost, Status::Ok());
    return;  // removed or lost meanwhile
  }
  ObjectMeta& meta = *object;
  target->desc.state = ReplicaState::kComplete;
  target->staged_by = 0;
  target->refcnt = 0;
  if (source->refcnt > 0) --source->refcnt;
  if (m_.lifecycle_.gate().options().drop_source && source->refcnt == 0 &&
      !meta.Leased(m_.clock_->Now())) {
    const Replica dropped = *source;
    meta.Erase(dropped.desc.id);
    m_.ReleaseReplicaLocked(task.key, dropped, /*node_alive=*/true);
    m_.counters_.promotion_dropped_sources.fetch_add(
        1, std::memory_order_relaxed);
  }
  CountDone(task);
}

void Master::PromotionTasks::Abandon(ObjectSlot& object, const Task& task,
                                     TaskEnd end, const Status& cause) {
  Release(object, task);
  Count(end, cause);
}

void Master::PromotionTasks::Doomed(const Task&, TaskEnd end,
                                    const Status& cause) {
  Count(end, cause);
}

void Master::PromotionTasks::Count(TaskEnd end, const Status& cause) {
  MasterCounters& c = m_.counters_;
  std::atomic<uint64_t>* counter = nullptr;
  switch (end) {
    case TaskEnd::kFailed:
      // An SSD read that failed means the source is lost; anything else
      // is the transfer.
      counter = cause.reason() == ErrorReason::kObjectNotFound ||
                        cause.code() == StatusCode::kDataLoss
                    ? &c.promotion_source_lost
                    : &c.promotion_transfer_failed;
      break;
    case TaskEnd::kTimedOut:
      counter = &c.promotion_timeout;
      break;
    case TaskEnd::kNodeLost:
      counter = &c.promotion_node_lost;
      break;
    case TaskEnd::kNoRoom:
      counter = &c.promotion_alloc_failed;
      break;
    case TaskEnd::kSourceLost:
      counter = &c.promotion_source_lost;
      break;
    case TaskEnd::kDoomedEnd:  // counted when it was doomed
    case TaskEnd::kCancelled:  // never ran
      return;
  }
  counter->fetch_add(1, std::memory_order_relaxed);
}

void Master::PromotionTasks::CountDone(const Task& task) {
  MasterCounters& c = m_.counters_;
  c.promotion_completed.fetch_add(1, std::memory_order_relaxed);
  c.promotion_bytes.fetch_add(task.source.size, std::memory_order_relaxed);
  const Duration took =
      std::max(Duration::zero(), m_.clock_->Now() - task.created);
  c.promotion_duration_us.fetch_add(
      static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(took).count()),
      std::memory_order_relaxed);
  size_t bucket = 0;
  while (bucket < kPromotionDurationBounds.size() &&
         took > kPromotionDurationBounds[bucket]) {
    ++bucket;
  }
  c.promotion_duration_buckets[bucket].fetch_add(1, std::memory_order_relaxed);
}

size_t Master::ReapPromotionTasks() {
  return lifecycle_.Reap(TaskKind::kPromotion,
                         lifecycle_.gate().options().task_timeout);
}

size_t Master::PromoteProactively() {
  const PromotionOptions o = lifecycle_.gate().options();
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
    const uint32_t estimate = lifecycle_.gate().Estimate(UnitHash(key, meta));
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
