#pragma once

// Offload: the part of the master that copies DRAM objects to their node's
// SSD, as a kind of the task lifecycle (core/task_lifecycle.h). It queues a
// task (pinning the DRAM copy), and its policy commits (adds the SSD
// replica; for a move, drops the DRAM copy) or abandons (unpins; deletes a
// copy the node may hold that no replica points at). Writeback, eviction
// under on_evict and an operator's forced eviction all queue through here.
//
// A node whose SSD refused a write for room pauses offloads to it, 0.5 s
// doubling up to 2 s while it keeps refusing, so offloads back off while
// SSD eviction makes room instead of failing in a loop.
//
// Thread safety: thread-safe; the *Locked calls need the stripe they name.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/master_state.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

// What happens to the DRAM copy after an offload.
enum class OffloadIntent : uint8_t {
  kCopy,       // stays (write_through, writeback)
  kMove,       // dropped when the offload succeeds (on_evict)
  kGroupMove,  // dropped with its group's once every member is on SSD
};

class Offloader {
 public:
  // Called with no stripe held when an offload of an operator's group
  // eviction lands (the eviction may then finish).
  using ForcedLanded = std::function<void(const std::string& group_id)>;
  // Registers the offload policy with state->lifecycle.
  Offloader(MasterState* state, ForcedLanded forced_landed);
  Offloader(const Offloader&) = delete;
  Offloader& operator=(const Offloader&) = delete;

  // Queues an offload of `replica`'s bytes to its node's SSD, pinning it.
  // `forced`: by an operator's group eviction (Task::forced). QUEUE_FULL
  // (the queue's limit, or the node's SSD full) or NODE_NOT_FOUND when it
  // cannot be queued.
  Result<TaskId> QueueLocked(std::string_view key, ObjectMeta& meta,
                             Replica& replica, OffloadIntent intent,
                             bool forced = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  // Queues offloads for the members of `group` without an SSD copy; false
  // (nothing queued) when a member's node has no SSD tier or waits. With
  // `forced` (an operator's eviction) the tasks are marked so that the
  // last to land finishes the eviction, their ids go to *queued, and the
  // first that cannot be queued is returned in *failed (the others stay
  // queued: their copies are harmless and a retry queues only what is
  // missing).
  bool QueueGroupLocked(GroupSlot& group, OffloadIntent intent,
                        bool forced = false,
                        std::vector<TaskId>* queued = nullptr,
                        Status* failed = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role);

  // Offloads to `node` wait: its SSD is full.
  bool PausedFor(NodeId node) const {
    return s_.nodes.OffloadsPaused(node, s_.clock->Now());
  }
  // Whether a member of `group` without an SSD copy sits on a node whose
  // offloads wait.
  bool GroupPausedLocked(const GroupSlot& group) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role);
  // `node`'s SSD refused a write for room: pauses offloads to it unless
  // they already wait (counted in offload_pauses).
  void PauseFor(NodeId node);

  // Reaps offloads older than the task timeout. Returns tasks reaped.
  size_t Reap();

  // How long offloads to a node whose SSD refused a write for room wait,
  // at first and at most (doubling while it keeps refusing).
  static constexpr Duration kPause = std::chrono::milliseconds(500);
  static constexpr Duration kMaxPause = std::chrono::seconds(2);

 private:
  // The lifecycle's policy for offloads, forced eviction's included.
  class Tasks final : public TaskPolicy {
   public:
    explicit Tasks(Offloader* offloader) : o_(*offloader), s_(offloader->s_) {}
    void Commit(ObjectSlot& object, const Task& task) override
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
    void Abandon(ObjectSlot& object, const Task& task, TaskEnd end,
                 const Status& cause) override
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
    // A forced group eviction's offload reported: the eviction finishes
    // if it was the last (the ForcedLanded callback checks).
    void Committed(const Task& task) override;

   private:
    // Unpins and, when the node may hold a copy no replica points at
    // (`delete_copy`), tells it to drop it.
    void Settle(ObjectSlot& object, const Task& task, bool delete_copy)
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
    Offloader& o_;
    MasterState& s_;
  };

  MasterState& s_;
  const ForcedLanded forced_landed_;
  Tasks tasks_{this};
};

}  // namespace mooncake_tier
