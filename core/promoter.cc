// Promotion on hit: the Promoter (core/promoter.h).

#include "core/promoter.h"

#include <algorithm>

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

// Whether a read-free DRAM copy could be evicted now (a victim candidate).
bool MemoryEvictable(const ObjectMeta& meta, TimePoint now) {
  return !meta.hard_pin && meta.HasComplete(Tier::kMemory) &&
         !meta.PutInFlight() && !meta.AnyPinned() && !meta.Leased(now);
}

}  // namespace

Promoter::Promoter(MasterState* state) : s_(*state) {
  s_.lifecycle.SetPolicy(TaskKind::kPromotion, &tasks_);
}

void Promoter::NoteRead(std::string_view key,
                        const Result<ObjectReplicas>& read,
                        const std::optional<PromotionCandidate>& candidate) {
  PromotionGate& gate = s_.lifecycle.gate();
  if (candidate) {
    MaybePromote(*candidate);
  } else if (read.ok() && gate.counts_every_read()) {
    gate.Touch(
        HashKey(read->group ? std::string_view(read->group->group_id) : key));
  }
}

void Promoter::MaybePromote(const PromotionCandidate& c) {
  const PromotionOptions o = s_.lifecycle.gate().options();
  if (!o.on_hit) return;
  s_.counters.promotion_attempts.fetch_add(1, std::memory_order_relaxed);
  const uint32_t estimate = s_.lifecycle.gate().Touch(UnitHash(c.key, c.group));
  const uint64_t bytes = c.group ? c.size * c.group->group_size : c.size;
  std::vector<AdmissionVictim> victims;
  if (o.policy == PromotionPolicy::kTinyLfu &&
      estimate >= o.admission_threshold) {
    victims = VictimEstimates(bytes);
  }
  if (!s_.lifecycle.gate().Admit(o, estimate, bytes, victims)) {
    s_.counters.promotion_admission_gated.fetch_add(1,
                                                    std::memory_order_relaxed);
    return;
  }
  if (Target(c.holder, bytes) == kNoNode) {
    s_.counters.promotion_watermark_gated.fetch_add(1,
                                                    std::memory_order_relaxed);
    return;
  }
  Result<std::vector<TaskId>> queued =
      c.group ? QueueGroup(c.group->group_id, /*forced=*/false)
              : QueueObject(c.key, /*forced=*/false);
  if (queued.ok()) return;
  switch (queued.status().reason()) {
    case ErrorReason::kObjectBusy:  // already queued: not a failure
      s_.counters.promotion_deduped.fetch_add(1, std::memory_order_relaxed);
      break;
    case ErrorReason::kQueueFull:
      s_.counters.promotion_queue_full.fetch_add(1, std::memory_order_relaxed);
      break;
    default:  // changed since the read (removed, promoted, being put)
      break;
  }
}

std::vector<AdmissionVictim> Promoter::VictimEstimates(uint64_t bytes) {
  const TierUsage usage = s_.nodes.MemoryUsage();
  const RuntimeKnobs::Watermarks marks = s_.knobs.memory();
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
  const TimePoint now = s_.clock->Now();
  s_.index.SampleObjects(
      kSampleStripes, kSamplePerStripe,
      [&](const std::string& key, const ObjectMeta& meta) {
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
    out.push_back({s_.lifecycle.gate().Estimate(v.unit), v.size});
    covered += v.size;
  }
  return out;
}

Result<TaskId> Promoter::QueueLocked(ObjectSlot& object, bool forced) {
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
        s_.nodes.IsAlive(r.desc.node)) {
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
                      s_.lifecycle.Queue(*source, std::move(task), UINT32_MAX));
  s_.counters.promotion_queued.fetch_add(1, std::memory_order_relaxed);
  if (forced)
    s_.counters.promotion_forced.fetch_add(1, std::memory_order_relaxed);
  return id;
}

Result<std::vector<TaskId>> Promoter::QueueObject(const std::string& key,
                                                  bool forced) {
  return s_.index.Update(
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
        if (s_.lifecycle.HasTask(TaskKind::kPromotion, key)) {
          return Status(ErrorReason::kObjectBusy,
                        "a promotion is already queued");
        }
        PromotionGate& gate = s_.lifecycle.gate();
        if (!gate.Reserve(1, gate.options().queue_limit)) {
          return Status(ErrorReason::kQueueFull, "promotion queue is full");
        }
        Result<TaskId> id = QueueLocked(object, forced);
        if (!id.ok()) {
          s_.lifecycle.gate().Release(1);  // the task holds it otherwise
          return id.status();
        }
        return std::vector<TaskId>{*id};
      });
}

Result<std::vector<TaskId>> Promoter::QueueGroup(const std::string& group_id,
                                                 bool forced) {
  return s_.index.UpdateGroup(
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
              return s_.lifecycle.HasTask(TaskKind::kPromotion,
                                          group.KeyOf(member));
            })) {
          return Status(ErrorReason::kObjectBusy,
                        "a promotion is already queued");
        }
        const uint32_t n = group.member_count;
        PromotionGate& gate = s_.lifecycle.gate();
        if (!gate.Reserve(n, gate.options().queue_limit)) {
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
                  Result<TaskId> id = QueueLocked(member, forced);
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
                  std::optional<Task> task =
                      s_.lifecycle.Booked(TaskKind::kPromotion, member.key());
                  if (!task ||
                      std::find(ids.begin(), ids.end(), task->id) == ids.end())
                    return;
                  s_.lifecycle.Cancel(member, task->id);
                });
        s_.lifecycle.gate().Release(n - static_cast<uint32_t>(ids.size()));
        return failed;
      });
}

Result<std::vector<TaskId>> Promoter::PromoteObject(const std::string& key) {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  const std::optional<GroupSpec> group =
      s_.index.Read(key, [](const ObjectMeta* meta) {
        return meta == nullptr ? std::nullopt : meta->group_spec();
      });
  if (group) {
    return QueueGroup(group->group_id, /*forced=*/true);
  }
  return QueueObject(key, /*forced=*/true);
}

Result<std::vector<TaskId>> Promoter::PromoteGroup(
    const std::string& group_id) {
  return QueueGroup(group_id, /*forced=*/true);
}

bool Promoter::RoomOn(NodeId node, uint64_t bytes) const {
  const TierUsage usage = s_.nodes.MemoryUsageOf(node);
  const RuntimeKnobs::Watermarks marks = s_.knobs.memory();
  const double cap = static_cast<double>(usage.capacity);
  const double used = static_cast<double>(usage.used);
  // At or above the high watermark the tier is evicting: promoting into it
  // would only move the pressure around.
  if (usage.capacity == 0 || usage.used + bytes > usage.capacity ||
      used >= marks.high * cap) {
    return false;  // no room for it at all, or evicting
  }
  const std::optional<DramPressure::NodeState> seen = s_.pressure.Get(node);
  if (used + static_cast<double>(bytes) >= marks.high * cap) {
    // The copy would take the node over its mark, and the next round would
    // evict down to its target. Only when clean units (dropped without any
    // I/O, the least recently used first, which the unit just read is not)
    // cover all of that: a tier full of clean, cold units swaps them for
    // hot ones. Refused, such a tier, below its mark and touched by no put,
    // would never evict and never promote again. With dirty units that
    // eviction would cost writeback, and the room is the writers'.
    const double evicts =
        used + static_cast<double>(bytes) - (marks.high - marks.ratio) * cap;
    return seen && static_cast<double>(seen->bytes.clean) >= evicts;
  }
  // Writers need free or clean DRAM at hand (what a put takes at once). A
  // promoted copy is clean itself, so it only takes free room; but while
  // writeback lags and DRAM is mostly dirty, that room is what the writers
  // have left: then no promotion.
  if (!seen) return true;
  const uint64_t at_hand = seen->bytes.free() + seen->bytes.clean;
  const auto reserve = static_cast<uint64_t>(marks.ratio * cap);
  return at_hand >= bytes + reserve;
}

NodeId Promoter::Target(NodeId node, uint64_t bytes) const {
  if (node != kNoNode && RoomOn(node, bytes)) return node;
  NodeId best = kNoNode;
  uint64_t most_free = 0;
  for (const NodeView& view : s_.nodes.List()) {
    const uint64_t free = view.spec.dram_size - view.dram_used;
    if (view.state == NodeState::kAlive && free > most_free &&
        RoomOn(view.id, bytes)) {
      best = view.id;
      most_free = free;
    }
  }
  return best;
}

Result<ReplicaDescriptor> Promoter::StageSpace(NodeId holder, uint64_t size) {
  // The holder's own segment first: its bytes then never cross the network.
  const NodeId target = Target(holder, size);
  if (target == kNoNode) {
    return Status(ErrorReason::kNoSpace,
                  "no node has DRAM for a promotion below its eviction "
                  "target (the room above is kept for puts)");
  }
  MT_ASSIGN_OR_RETURN(const uint64_t offset,
                      s_.nodes.AllocateMemoryOn(target, size));
  ReplicaDescriptor desc;
  desc.tier = Tier::kMemory;
  desc.node = target;
  desc.offset = offset;
  desc.size = size;
  return desc;
}

// ---- The promotion policy (the lifecycle calls it under the object's
// stripe) ----

Result<ReplicaDescriptor> Promoter::Tasks::Stage(ObjectSlot& object,
                                                 const Task& task) {
  if (!object || object->Find(task.source.id) == nullptr) {
    return Status(ErrorReason::kObjectNotFound,
                  "'" + task.key + "' or its SSD copy is gone");
  }
  MT_ASSIGN_OR_RETURN(ReplicaDescriptor desc,
                      p_.StageSpace(task.node, task.source.size));
  desc.id = s_.NextReplicaId();
  desc.state = ReplicaState::kProcessing;
  Replica staged{desc, /*refcnt=*/1};
  staged.staged_by = task.id;
  object->replicas.push_back(staged);
  return desc;
}

void Promoter::Tasks::Release(ObjectSlot& object, const Task& task) {
  s_.lifecycle.Unpin(object, task);
  if (task.target.id == 0) return;
  if (object) {
    if (std::optional<Replica> staged = object->Erase(task.target.id)) {
      staged->refcnt = 0;
      s_.ReleaseReplicaLocked(*object, task.key, *staged,
                              s_.nodes.IsAlive(staged->desc.node));
      object.EraseIfEmpty();
      return;
    }
  }
  // The object went while staged: the replica was detached, pinned by us.
  s_.lifecycle.UnpinDetached(task.target.id);
}

void Promoter::Tasks::Commit(ObjectSlot& object, const Task& task) {
  Replica* target = !object ? nullptr : object->Find(task.target.id);
  Replica* source = !object ? nullptr : object->Find(task.source.id);
  if (target == nullptr || source == nullptr) {
    Abandon(object, task, TaskEnd::kSourceLost, Status::Ok());
    return;  // removed or lost meanwhile
  }
  ObjectMeta& meta = *object;
  target->desc.state = ReplicaState::kComplete;
  meta.promoted_unread = true;
  // Its node lists the copy (nothing waits for that: no caller was
  // promised it; a copy lost with the master is read from SSD again).
  const ReplicaDescriptor& d = target->desc;
  if (s_.directory.Tracks(d.node)) {
    s_.directory.Add(d.node,
                     DramEntry{task.key, d.offset, d.size, meta.group_spec()});
  }
  target->staged_by = 0;
  target->refcnt = 0;
  if (source->refcnt > 0) --source->refcnt;
  if (s_.lifecycle.gate().options().drop_source && source->refcnt == 0 &&
      !meta.Leased(s_.clock->Now())) {
    const Replica dropped = *source;
    meta.Erase(dropped.desc.id);
    s_.ReleaseReplicaLocked(meta, task.key, dropped, /*node_alive=*/true);
    s_.counters.promotion_dropped_sources.fetch_add(1,
                                                    std::memory_order_relaxed);
  }
  CountDone(task);
}

void Promoter::Tasks::Abandon(ObjectSlot& object, const Task& task, TaskEnd end,
                              const Status& cause) {
  Release(object, task);
  Count(end, cause);
}

void Promoter::Tasks::Doomed(const Task&, TaskEnd end, const Status& cause) {
  Count(end, cause);
}

void Promoter::Tasks::Count(TaskEnd end, const Status& cause) {
  MasterCounters& c = s_.counters;
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

void Promoter::Tasks::CountDone(const Task& task) {
  MasterCounters& c = s_.counters;
  c.promotion_completed.fetch_add(1, std::memory_order_relaxed);
  c.promotion_bytes.fetch_add(task.source.size, std::memory_order_relaxed);
  const Duration took =
      std::max(Duration::zero(), s_.clock->Now() - task.created);
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

size_t Promoter::Reap() {
  return s_.lifecycle.Reap(TaskKind::kPromotion,
                           s_.lifecycle.gate().options().task_timeout);
}

size_t Promoter::PromoteProactively() {
  const PromotionOptions o = s_.lifecycle.gate().options();
  if (o.proactive_low_watermark <= 0) return 0;
  const TimePoint now = s_.clock->Now();
  {
    MutexLock lock(&proactive_mu_);
    if (now - last_proactive_ < o.proactive_interval) return 0;
    last_proactive_ = now;
  }
  const TierUsage usage = s_.nodes.MemoryUsage();
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
  s_.index.SampleObjects(
      kSampleStripes, kSamplePerStripe * 4,
      [&](const std::string& key, const ObjectMeta& meta) {
        const ReplicaDescriptor* source = SsdOnlySource(meta);
        if (source == nullptr) return;
        // Not what the next rounds would evict again at once: a unit no newer
        // than its node's next victims stays on SSD.
        const std::optional<DramPressure::NodeState> seen =
            s_.pressure.Get(source->node);
        if (seen && meta.last_access <= seen->victim_cutoff) return;
        const uint32_t estimate =
            s_.lifecycle.gate().Estimate(UnitHash(key, meta));
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
        h.group ? QueueGroup(h.unit, /*forced=*/false)
                : QueueObject(h.unit, /*forced=*/false);
    if (!ids.ok()) continue;  // a group seen twice, or changed meanwhile
    s_.counters.promotion_proactive.fetch_add(1, std::memory_order_relaxed);
    used += static_cast<double>(h.bytes);
    ++queued;
  }
  return queued;
}

}  // namespace mooncake_tier
