// Master: eviction asked for by an operator (the admin API's .../evict).
// It uses the eviction rounds' own steps (EvictMemoryLocked's drop,
// InspectGroupLocked, EvictGroupLocked, QueueGroupOffloadLocked) so a
// forced eviction follows the same rules: groups leave DRAM whole, and
// with offload on nothing leaves DRAM that is not on SSD yet. Unlike a
// round it names why it cannot act, and it ignores recency.

#include "core/forced_evictor.h"

#include "core/validation.h"

namespace mooncake_tier {

ForcedEvictor::ForcedEvictor(MasterState* state, Tiering* tiering,
                             Offloader* offloader)
    : s_(*state), tiering_(*tiering), offloader_(*offloader) {}

Status ForcedEvictor::ForcedEvictable(std::string_view name,
                                      const ObjectMeta& meta,
                                      TimePoint now) const {
  const std::string key(name);
  if (meta.PutInFlight()) {
    return Status(ErrorReason::kObjectBusy,
                  "a put of '" + key + "' is in flight");
  }
  if (meta.AnyPinned()) {
    return Status(ErrorReason::kObjectBusy,
                  "an offload or a promotion of '" + key +
                      "' is in flight; retry when it ends");
  }
  if (!meta.HasComplete(Tier::kMemory)) {
    return Status(ErrorReason::kNotApplicable,
                  "'" + key + "' has no DRAM copy");
  }
  if (meta.hard_pin) {
    return Status(ErrorReason::kNotApplicable,
                  "'" + key + "' is hard-pinned in DRAM");
  }
  if (meta.Leased(now)) {
    return Status(ErrorReason::kObjectLeased,
                  "a reader holds a lease on '" + key + "'" +
                      meta.LeaseEndsNote(now) + "; retry then");
  }
  return Status::Ok();
}

Result<ForcedEviction> ForcedEvictor::EvictObject(const std::string& key) {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  if (std::optional<GroupSpec> group = s_.GroupOf(key)) {
    return EvictGroup(group->group_id);
  }
  return s_.index.Update(
      key,
      [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
          object_stripe_role) -> Result<ForcedEviction> {
        if (!object) {
          return Status(ErrorReason::kObjectNotFound,
                        "no object '" + key + "'");
        }
        ObjectMeta& meta = *object;
        if (meta.group) {  // re-put as a member since GroupOf
          return Status(ErrorReason::kObjectBusy,
                        "'" + key + "' changed meanwhile; retry");
        }
        MT_RETURN_IF_ERROR(ForcedEvictable(key, meta, s_.clock->Now()));
        ForcedEviction out;
        Replica* memory = meta.FindTier(Tier::kMemory, ReplicaState::kComplete);
        if (s_.config.offload_mode != OffloadMode::kOff &&
            !meta.HasComplete(Tier::kLocalDisk) &&
            s_.NodeHasSsd(memory->desc.node)) {
          // SSD first; the DRAM copy goes when the node reports success.
          MT_ASSIGN_OR_RETURN(
              TaskId task,
              offloader_.QueueLocked(key, meta, *memory, OffloadIntent::kMove));
          out.offloads.push_back(task);
          return out;
        }
        out.bytes_freed = tiering_.DropMemoryCopyLocked(object);
        return out;
      });
}

Result<ForcedEviction> ForcedEvictor::EvictGroup(const std::string& group_id) {
  return s_.index.UpdateGroup(
      group_id,
      [&](GroupSlot& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
          group_stripe_role) -> Result<ForcedEviction> {
        if (!entry) {
          return Status(ErrorReason::kGroupNotFound,
                        "no group '" + group_id + "'");
        }
        GroupMeta& group = *entry;
        if (group.state == GroupState::kFilling) {
          // No half group may leave DRAM, and the other half is not there yet.
          return Status(ErrorReason::kNotApplicable,
                        "group '" + group_id + "' is still filling");
        }
        const TimePoint now = s_.clock->Now();
        // Every member that has a DRAM copy must be free to lose it; members
        // only on SSD stay as they are, unless a task is moving one (a
        // promotion would bring it back alone).
        Status blocked;
        entry.ForEachMember([&](ObjectSlot& member) {
          const ObjectMeta& meta = *member;
          if (!blocked.ok()) return;
          if (!meta.PutInFlight() && !meta.AnyPinned() &&
              !meta.HasComplete(Tier::kMemory)) {
            return;
          }
          blocked = ForcedEvictable(member.key(), meta, now);
        });
        MT_RETURN_IF_ERROR(blocked);
        const Tiering::GroupUnit unit =
            tiering_.InspectGroupLocked(entry, Tier::kMemory, kNoNode, now);
        if (unit.bytes == 0) {
          return Status(ErrorReason::kNotApplicable,
                        "no member of group '" + group_id + "' is in DRAM");
        }
        ForcedEviction out;
        if (!unit.all_on_disk && s_.Offloads() &&
            offloader_.GroupPausedLocked(entry)) {
          return Status(
              ErrorReason::kQueueFull,
              "a member's node has its SSD full: offloads wait while SSD "
              "eviction makes room; retry later");
        }
        if (!unit.all_on_disk && s_.config.offload_mode != OffloadMode::kOff) {
          Status failed;
          if (offloader_.QueueGroupLocked(entry, OffloadIntent::kGroupMove,
                                          /*forced=*/true, &out.offloads,
                                          &failed)) {
            MT_RETURN_IF_ERROR(failed);
            return out;
          }
          // A member's node has no SSD tier: the group cannot move, so it goes
          // whole, as an eviction round would do.
        }
        out.bytes_freed = unit.bytes;
        if (tiering_.EvictGroupLocked(entry, Tier::kMemory, unit)) {
          entry.Erase();  // no copy left anywhere: it left the store
        }
        return out;
      });
}

void ForcedEvictor::FinishForcedGroupEviction(const std::string& group_id) {
  s_.index.UpdateGroup(
      group_id,
      [&](GroupSlot& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role) {
        if (!entry) return;
        const Tiering::GroupUnit unit = tiering_.InspectGroupLocked(
            entry, Tier::kMemory, kNoNode, s_.clock->Now());
        // Another member's offload is still in flight (its source is pinned), a
        // reader holds a lease, or a member failed to reach SSD: the DRAM
        // copies stay; the last landing, the next round or another forced
        // eviction takes them.
        if (!unit.evictable || !unit.all_on_disk) return;
        tiering_.EvictGroupLocked(entry, Tier::kMemory, unit);
      });
}

}  // namespace mooncake_tier
