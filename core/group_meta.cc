#include "core/group_meta.h"

#include <utility>

namespace mooncake_tier {
namespace {

std::string Quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '\'';
  out += s;
  out += '\'';
  return out;
}

void SetState(GroupMeta& group, GroupState next, TimePoint now) {
  group.state = next;
  group.state_since = now;
}

}  // namespace

std::string_view BreakCauseName(BreakCause cause) {
  switch (cause) {
    case BreakCause::kRemoved:
      return "removed";
    case BreakCause::kNodeLost:
      return "node_lost";
    case BreakCause::kCorrupt:
      return "corrupt";
  }
  return "unknown";
}

Status GroupMeta::Reserve(const GroupSpec& spec, std::string_view key,
                          TimePoint now) {
  const uint32_t index = spec.group_index;
  if (index >= spec.group_size) {
    return Status(ErrorReason::kInvalidGroup,
                  "group " + Quoted(spec.group_id) + " index " +
                      std::to_string(index) + " is not below its group_size " +
                      std::to_string(spec.group_size));
  }
  // A filling group without members holds nothing: it starts afresh, exactly
  // as if the table had dropped it and created it again.
  const bool fresh = state == GroupState::kFilling && members.empty();
  if (!fresh && spec.group_size != expected) {
    return Status(ErrorReason::kInvalidGroup,
                  "group " + Quoted(spec.group_id) + " has group_size " +
                      std::to_string(expected) + ", the put says " +
                      std::to_string(spec.group_size));
  }
  if (state != GroupState::kFilling) {
    return Status(ErrorReason::kGroupNotFilling,
                  "group " + Quoted(spec.group_id) + " is " +
                      std::string(GroupStateName(state)) +
                      " and accepts no members");
  }
  if (auto it = members.find(index); it != members.end()) {
    const GroupMember& holder = it->second;
    if (holder.key == key && holder.state == MemberState::kReserved) {
      return Status::Ok();  // the same put, retried
    }
    return Status(ErrorReason::kObjectExists,
                  "group " + Quoted(spec.group_id) + " index " +
                      std::to_string(index) + " is already taken by key " +
                      Quoted(holder.key));
  }
  if (fresh) {
    expected = spec.group_size;
    created = now;
    state_since = now;
  }
  members.emplace(index, GroupMember{std::string(key), MemberState::kReserved});
  return Status::Ok();
}

bool GroupMeta::MarkPresent(uint32_t index, TimePoint now) {
  auto it = members.find(index);
  if (it == members.end() || it->second.state != MemberState::kReserved) {
    return false;
  }
  it->second.state = MemberState::kPresent;
  ++present;
  if (state == GroupState::kFilling && present == expected) {
    SetState(*this, GroupState::kComplete, now);
    return true;
  }
  return false;
}

void GroupMeta::Unreserve(uint32_t index) {
  auto it = members.find(index);
  if (it != members.end() && it->second.state == MemberState::kReserved) {
    members.erase(it);
  }
}

bool GroupMeta::Lose(uint32_t index, BreakCause cause, TimePoint now) {
  auto it = members.find(index);
  if (it == members.end()) return false;
  if (it->second.state == MemberState::kPresent) --present;
  members.erase(it);
  if (state != GroupState::kFilling && state != GroupState::kComplete) {
    return false;
  }
  SetState(*this, GroupState::kBroken, now);
  break_cause = cause;
  return true;
}

bool GroupMeta::Expire(TimePoint now, Duration fill_timeout) {
  if (state != GroupState::kFilling || members.empty()) return false;
  if (now - created < fill_timeout) return false;
  SetState(*this, GroupState::kExpired, now);
  return true;
}

GroupStatus GroupMeta::ToStatus(std::string_view group_id) const {
  GroupStatus status;
  status.group_id = std::string(group_id);
  status.state = state;
  status.expected = expected;
  status.present = present;
  return status;
}

std::vector<GroupMemberView> GroupMeta::Members() const {
  std::vector<GroupMemberView> out;
  out.reserve(members.size());
  for (const auto& [index, member] : members) {
    out.push_back(GroupMemberView{index, member.key,
                                  member.state == MemberState::kPresent});
  }
  return out;
}

const GroupMember* GroupMeta::Find(uint32_t index) const {
  auto it = members.find(index);
  return it == members.end() ? nullptr : &it->second;
}

}  // namespace mooncake_tier
