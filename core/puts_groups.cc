// Puts (core/puts.h) of group members: a member reserves its index under
// its group's stripe, and the last member's end completes the group
// (docs/design/groups.md).

#include "core/puts.h"

namespace mooncake_tier {

Result<ReplicaDescriptor> Puts::PutStartMemberLocked(
    GroupSlot& entry, const PutStartRequest& request, const HashedKey& key,
    TimePoint now) {
  const GroupSpec& spec = *request.options.group;
  const bool created = !entry;
  if (!created) {
    // Most member puts: a free index of a group that is filling. It stays
    // filling (and not empty) whatever the object's start does, so no
    // FillingDelta, cap check or erase: the bytes are the group's delta.
    GroupMeta& group = *entry;
    if (GroupMember* slot = group.TryReserveFree(spec, request.key)) {
      Result<ReplicaDescriptor> placed =
          PutStartObject(request, key, now, group.record);
      if (placed.ok()) {
        group.BindPut({slot, false}, key.hash, request.size);
        s_.filling_group_bytes.fetch_add(static_cast<int64_t>(request.size),
                                         std::memory_order_relaxed);
      } else {
        group.Unreserve(spec.group_index, request.key, 0);
      }
      return placed;
    }
  }
  if (created || entry->Empty()) {
    // A new group: admitted only while filling groups leave DRAM room.
    const uint64_t capacity = s_.nodes.MemoryCapacity();
    const int64_t filling =
        s_.filling_group_bytes.load(std::memory_order_relaxed);
    if (filling + static_cast<int64_t>(request.size) >
        s_.config.group_filling_max_ratio * static_cast<double>(capacity)) {
      s_.group_counters.groups_refused_filling_full.fetch_add(
          1, std::memory_order_relaxed);
      return Status(ErrorReason::kFillingGroupsFull,
                    "groups still filling hold " + std::to_string(filling) +
                        " bytes of DRAM, the cap (group_filling_max_ratio); "
                        "complete or revoke them, or retry later");
    }
  }
  GroupMeta& group = created ? entry.Create() : *entry;
  FillingDelta filling(&s_.filling_group_bytes, &group);
  GroupMeta::Reservation reservation;
  Status reserved = entry.Reserve(spec, request.key, now, &reservation);
  // The object joins the group's current incarnation (Reserve may just
  // have started it). Starting it leaves the member list alone: the slot
  // stays valid.
  Result<ReplicaDescriptor> placed =
      reserved.ok() ? PutStartObject(request, key, now, group.record)
                    : Result<ReplicaDescriptor>(reserved);
  if (placed.ok()) {
    group.BindPut(reservation, key.hash, request.size);
  } else if (reserved.ok() && !reservation.retried) {
    // A reservation this key already held (a retried put) stays even
    // though this attempt failed. This one never got to BindPut.
    group.Unreserve(spec.group_index, request.key, 0);
  }
  if (group.Empty()) {
    filling.Dropped();
    entry.Erase();
  } else if (created && placed.ok()) {
    s_.group_counters.groups_created.fetch_add(1, std::memory_order_relaxed);
  }
  return placed;
}

void Puts::CompleteGroups(const CompletedMembers& last_members) {
  for (const CompletedMember& last : last_members) {
    const GroupRecord& record = *last.group;
    s_.index.UpdateGroup(record.hashed_id(), [&](GroupSlot& entry) {
      // Gone, or started afresh: the incarnation this member joined was
      // removed or expired and collected meanwhile, which removed its
      // members too (or will, at the next sweep).
      if (!entry || entry->record.get() != &record) return;
      GroupMeta& group = *entry;
      // Within one incarnation the index is still held by this very put,
      // or by nothing: a counted put cannot be revoked, and a member lost
      // meanwhile broke the group, which then takes no member until it has
      // none left and starts afresh with a new record.
      if (group.Find(last.index) == nullptr) return;
      FillingDelta filling(&s_.filling_group_bytes, &group);
      // The group completing makes every member readable (through the
      // record): no pass over their stripes.
      if (group.CompleteWithLast(last.index, last.completed)) {
        s_.group_counters.groups_completed.fetch_add(1,
                                                     std::memory_order_relaxed);
      }
    });
  }
}

Status Puts::RevokeGrouped(const std::string& key, const GroupSpec& spec,
                           const ClientId* client) {
  return s_.index.UpdateGroup(spec.group_id, [&](GroupSlot& entry) -> Status {
    std::optional<uint64_t> revoked_bytes;
    MT_RETURN_IF_ERROR(RevokeStaged(key, spec, client, &revoked_bytes));
    if (revoked_bytes && entry) {
      // The index may be put again; the group keeps filling.
      FillingDelta filling(&s_.filling_group_bytes, entry.get());
      entry->Unreserve(spec.group_index, key, *revoked_bytes);
      if (entry->Empty()) {
        filling.Dropped();
        entry.Erase();
      }
    }
    return Status::Ok();
  });
}

}  // namespace mooncake_tier
