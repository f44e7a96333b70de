#pragma once

// Promotion on hit (ARCHITECTURE.md section 6, docs/design/promotion.md):
// the part of the master that brings SSD-only objects back into DRAM. A
// read that finds an object, or a member of a complete group, only on SSD
// feeds the sketch; admitted units get a task per object for the node that
// holds the SSD copy, which stays pinned until the task ends. The node
// stages a DRAM replica (TaskLifecycle::Stage, with this part's policy),
// writes the bytes and reports; a group's members commit together once all
// are staged, and one failure abandons the whole group's promotion.
//
// Every promotion task leaves the task table under its object's stripe (a
// group member's under its group stripe too), so its exit is ordered with
// any other change to the object, as offloads are.
//
// Thread safety: thread-safe. Entry points take no lock on entry (they
// take the group's stripe before the object's, through the index).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "core/master_state.h"
#include "core/promotion_admission.h"
#include "mooncake_tier/status.h"
#include "protocol/messages.h"

namespace mooncake_tier {

// A read found `key` (or its group) only on SSD.
struct PromotionCandidate {
  std::string key;
  std::optional<GroupSpec> group;
  uint64_t size = 0;
  NodeId holder = kNoNode;  // the node of the SSD copy read
};

class Promoter {
 public:
  // Registers the promotion policy with state->lifecycle.
  explicit Promoter(MasterState* state);
  Promoter(const Promoter&) = delete;
  Promoter& operator=(const Promoter&) = delete;

  // A read of `key` answered `read`; `candidate` when it found the unit
  // only on SSD. Runs the gates and queues (or only counts the read, when
  // the sketch counts every read). REQUIRES: no stripe held.
  void NoteRead(std::string_view key, const Result<ObjectReplicas>& read,
                const std::optional<PromotionCandidate>& candidate);

  // Operator: promotes an SSD-only object (a member's whole group), or a
  // whole group, now. See Master::PromoteObject.
  Result<std::vector<TaskId>> PromoteObject(const std::string& key);
  Result<std::vector<TaskId>> PromoteGroup(const std::string& group_id);

  // Reaps promotions older than the task timeout. Returns tasks reaped.
  size_t Reap();
  // While DRAM is below the proactive low watermark, promotes the hottest
  // SSD-only objects among a bounded sample. Returns promotions queued.
  size_t PromoteProactively();

 private:
  // The lifecycle's policy for promotions: staged into DRAM this part
  // picks, committed a group at a time; abandon frees the staged space.
  class Tasks final : public TaskPolicy {
   public:
    explicit Tasks(Promoter* promoter) : p_(*promoter), s_(promoter->s_) {}
    bool stages() const override { return true; }
    bool grouped() const override { return true; }
    Result<ReplicaDescriptor> Stage(ObjectSlot& object,
                                    const Task& task) override
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
    void Commit(ObjectSlot& object, const Task& task) override
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
    void Abandon(ObjectSlot& object, const Task& task, TaskEnd end,
                 const Status& cause) override
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
    void Doomed(const Task& task, TaskEnd end, const Status& cause) override;

   private:
    // Frees the staged replica (if any) and unpins the source.
    void Release(ObjectSlot& object, const Task& task)
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
    void Count(TaskEnd end, const Status& cause);
    void CountDone(const Task& task);
    Promoter& p_;
    MasterState& s_;
  };

  // Runs the gates for a read that found a unit only on SSD, and queues.
  void MaybePromote(const PromotionCandidate& candidate);
  // What a promotion of `bytes` would displace from DRAM, as sketch
  // estimates (tinylfu); empty when DRAM has room for it.
  std::vector<AdmissionVictim> VictimEstimates(uint64_t bytes);
  // Pins the SSD copy of an SSD-only object and queues its task; why not
  // otherwise (NOT_APPLICABLE, OBJECT_BUSY, QUEUE_FULL...).
  Result<TaskId> QueueLocked(ObjectSlot& object, bool forced)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  Result<std::vector<TaskId>> QueueObject(const std::string& key, bool forced);
  Result<std::vector<TaskId>> QueueGroup(const std::string& group_id,
                                         bool forced);
  // Whether a promoted copy of `bytes` may be staged on `node`: the node
  // is below its high watermark (not evicting); a copy that takes it over
  // the mark only when clean units cover the eviction that follows; else
  // the DRAM writers can take at once (free or clean, as the last round
  // saw it) stays at least a round's worth of eviction (eviction_ratio)
  // beyond it. Promotion never takes the room writers need.
  bool RoomOn(NodeId node, uint64_t bytes) const;
  // `node` if it has promotion room, else the node with the most free DRAM
  // that has; kNoNode when none has.
  NodeId Target(NodeId node, uint64_t bytes) const;
  // DRAM for a promotion's staged copy: on `holder` if it has promotion
  // room, else on a node that has; NO_SPACE when none has.
  Result<ReplicaDescriptor> StageSpace(NodeId holder, uint64_t size);

  MasterState& s_;
  Tasks tasks_{this};
  Mutex proactive_mu_;
  TimePoint last_proactive_ ABSL_GUARDED_BY(proactive_mu_);
};

}  // namespace mooncake_tier
