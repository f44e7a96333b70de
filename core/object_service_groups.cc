// ObjectService (core/object_service.h): groups as operators and sweeps
// see them. Every path that changes a group takes its group stripe first,
// then the stripes of the member objects (docs/design/groups.md).

#include "core/object_service.h"

namespace mooncake_tier {
namespace {

Status GroupMissing(const std::string& id) {
  return Status(ErrorReason::kGroupNotFound, "no group '" + id + "'");
}

}  // namespace

Status ObjectService::RemoveMembersLocked(GroupSlot& group, bool force) {
  const TimePoint now = s_.clock->Now();
  Status blocked;
  group.ForEachMember([&](ObjectSlot& member) {
    if (!blocked.ok()) return;
    if (member->PutInFlight()) {
      blocked = Status(
          ErrorReason::kObjectBusy,
          "a put of member '" + std::string(member.key()) + "' is in flight");
    } else if (!force && member->Leased(now)) {
      blocked = Status(ErrorReason::kObjectLeased,
                       "a reader holds a lease on member '" +
                           std::string(member.key()) + "'" +
                           member->LeaseEndsNote(now));
    }
  });
  if (!blocked.ok()) return blocked;
  group.ForEachMember([this](ObjectSlot& member) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                          object_stripe_role) {
    s_.DropObjectLocked(member);
    s_.counters.removes.fetch_add(1, std::memory_order_relaxed);
  });
  return Status::Ok();
}

std::vector<Status> ObjectService::RemoveGroup(
    std::span<const std::string> group_ids, RemoveOptions options) {
  const DramDirectoryLog::Marks before = s_.directory.Mark();
  std::vector<Status> out;
  out.reserve(group_ids.size());
  for (const std::string& id : group_ids) {
    out.push_back(RemoveGroupOne(id, options));
  }
  AwaitDrops(before, out);
  return out;
}

Status ObjectService::RemoveGroupOne(const std::string& group_id,
                                     RemoveOptions options,
                                     const std::string* member,
                                     uint32_t member_index) {
  return s_.index.UpdateGroup(
      group_id,
      [&](GroupSlot& group)
          ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role) -> Status {
            if (!group) return GroupMissing(group_id);
            if (member != nullptr) {
              // Removing through a member: only the group that member
              // belongs to, not a newer group that took the same id since
              // it was looked up.
              const GroupMember* holder = group->Find(member_index);
              if (holder == nullptr || !group->KeyIs(*holder, *member)) {
                return GroupMissing(group_id);
              }
            }
            MT_RETURN_IF_ERROR(RemoveMembersLocked(group, options.force));
            s_.filling_group_bytes.fetch_sub(
                static_cast<int64_t>(group->FillingDramBytes()),
                std::memory_order_relaxed);
            group.Erase();
            s_.group_counters.groups_collected.fetch_add(
                1, std::memory_order_relaxed);
            return Status::Ok();
          });
}

std::vector<Result<GroupDescription>> ObjectService::GetGroup(
    std::span<const std::string> group_ids) const {
  std::vector<Result<GroupDescription>> out;
  out.reserve(group_ids.size());
  for (const std::string& id : group_ids) {
    GroupDescription d;
    const bool found = s_.index.ReadGroup(id, [&](const GroupMeta* group) {
      if (group == nullptr) return false;
      std::vector<GroupMemberView> members;
      d.status = group->ToStatus(id, &members);
      d.break_cause = group->break_cause;
      d.members.reserve(members.size());
      for (GroupMemberView& m : members) {
        d.members.push_back({m.index, std::move(m.key), m.present, {}});
      }
      return true;
    });
    if (!found) {
      out.emplace_back(GroupMissing(id));
      continue;
    }
    // Member tiers after the group stripe is released (object stripes alone).
    for (GroupDescription::Member& m : d.members) {
      s_.index.Read(m.key, [&](const ObjectMeta* meta) {
        if (meta == nullptr) return;
        for (Tier tier : {Tier::kMemory, Tier::kLocalDisk}) {
          if (meta->HasComplete(tier)) m.tiers.push_back(tier);
        }
      });
    }
    out.emplace_back(std::move(d));
  }
  return out;
}

void ObjectService::LoseMembers(
    const std::vector<std::pair<GroupSpec, std::string>>& lost,
    BreakCause cause) {
  const TimePoint now = s_.clock->Now();
  for (const auto& member_lost : lost) {
    const GroupSpec& spec = member_lost.first;
    const std::string& key = member_lost.second;
    s_.index.UpdateGroup(spec.group_id, [&](GroupSlot& group) {
      if (!group) return;
      const GroupMember* member = group->Find(spec.group_index);
      if (member == nullptr || !group->KeyIs(*member, key)) return;
      FillingDelta filling(&s_.filling_group_bytes, group.get());
      // Breaking the group makes its members unreadable (through the
      // record).
      if (group->Lose(spec.group_index, cause, now)) {
        s_.group_counters.Broken(cause).fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
}

size_t ObjectService::SweepGroups() {
  const TimePoint now = s_.clock->Now();
  size_t swept = 0;
  s_.index.ForEachGroup([&](GroupSlot& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                            group_stripe_role) {
    GroupMeta& group = *entry;
    FillingDelta filling(&s_.filling_group_bytes, &group);
    if (group.Expire(now, s_.knobs.group_fill_timeout())) {
      s_.group_counters.groups_expired.fetch_add(1, std::memory_order_relaxed);
      ++swept;
    }
    const bool ended = group.state == GroupState::kBroken ||
                       group.state == GroupState::kExpired;
    if (!ended) return;
    // Expired groups lose their members at once; broken groups keep the
    // survivors for group_broken_ttl (an operator may still look).
    const bool collect = now - group.state_since >= s_.knobs.group_broken_ttl();
    if (group.state == GroupState::kBroken && !collect) return;
    if (!RemoveMembersLocked(entry, /*force=*/true).ok()) {
      return;  // a member's put is still in flight: next sweep
    }
    group.DropAllMembers();  // the record stays; its members are gone
    if (collect) {
      filling.Dropped();
      entry.Erase();
      s_.group_counters.groups_collected.fetch_add(1,
                                                   std::memory_order_relaxed);
      ++swept;
    }
  });
  return swept;
}

}  // namespace mooncake_tier
