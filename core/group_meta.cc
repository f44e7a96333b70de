#include "core/group_meta.h"

#include <algorithm>
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

constexpr uint32_t kMembersReservedUpFront = 64;

// The first slot of `members` whose index is >= `index`. Members usually
// arrive in index order and rarely leave, so the list is mostly dense:
// slot `index` holding `index` (a lookup) and an index past the last one (a
// put appending) are answered without a search.
template <typename List>
auto LowerBound(List& members, uint32_t index) {
  if (index < members.size() && members[index].first == index) {
    return members.begin() + index;
  }
  if (members.empty() || members.back().first < index) return members.end();
  return std::lower_bound(
      members.begin(), members.end(), index,
      [](const auto& slot, uint32_t i) { return slot.first < i; });
}

// The slot of `index`, or members.end().
template <typename List>
auto Slot(List& members, uint32_t index) {
  auto it = LowerBound(members, index);
  return it != members.end() && it->first == index ? it : members.end();
}

// Every state change after the start goes through here, so the record
// the members read stays in step with `state`.
// Drops `slot` from the member list; packs the key buffer once it holds
// more dead bytes than live ones (bounded: a group whose puts are revoked
// and retried again and again does not grow it for ever).
void EraseMember(GroupMeta& group,
                 decltype(GroupMeta::members)::iterator slot) {
  group.members.erase(slot);
  if (group.members.empty()) {
    group.member_keys.clear();
    return;
  }
  size_t live = 0;
  for (const auto& [index, member] : group.members) live += member.key_size;
  if (group.member_keys.size() <= 2 * live + 256) return;
  std::string packed;
  packed.reserve(live);
  for (auto& [index, member] : group.members) {
    const std::string_view stored = group.StoredKey(member);
    member.key_offset = static_cast<uint32_t>(packed.size());
    packed += stored;
  }
  group.member_keys = std::move(packed);
}

void SetState(GroupMeta& group, GroupState next, TimePoint now) {
  group.state = next;
  group.state_since = now;
  if (group.record != nullptr) {
    group.record->SetComplete(next == GroupState::kComplete);
  }
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
                          TimePoint now, size_t id_hash,
                          Reservation* reservation) {
  const uint32_t index = spec.group_index;
  if (index >= spec.group_size) {
    return Status(ErrorReason::kInvalidGroup,
                  "group " + Quoted(spec.group_id) + " index " +
                      std::to_string(index) + " is not below its group_size " +
                      std::to_string(spec.group_size));
  }
  // A group without members holds nothing: whatever its state, it starts
  // afresh, exactly as if the table had dropped it and created it again (an
  // engine re-puts a block whose group expired or lost every member).
  const bool fresh = members.empty();
  if (!fresh && spec.group_size != expected) {
    return Status(ErrorReason::kInvalidGroup,
                  "group " + Quoted(spec.group_id) + " has group_size " +
                      std::to_string(expected) + ", the put says " +
                      std::to_string(spec.group_size));
  }
  auto slot = LowerBound(members, index);
  if (slot != members.end() && slot->first == index) {
    const GroupMember& holder = slot->second;
    // The same put retried keeps its reservation, whatever happened to the
    // group meanwhile.
    if (KeyIs(holder, key) && !record->IsPresent(index)) {
      if (reservation != nullptr) *reservation = {&slot->second, true};
      return Status::Ok();
    }
    return Status(ErrorReason::kObjectExists,
                  "group " + Quoted(spec.group_id) + " index " +
                      std::to_string(index) + " is already taken by key " +
                      Quoted(KeyOf(holder)));
  }
  if (state != GroupState::kFilling && !fresh) {
    return Status(ErrorReason::kGroupNotFilling,
                  "group " + Quoted(spec.group_id) + " is " +
                      std::string(GroupStateName(state)) +
                      " and accepts no members");
  }
  // The group was found by its id: record->group_id() == spec.group_id.
  const bool id_prefixed = key.starts_with(spec.group_id);
  const std::string_view stored =
      id_prefixed ? key.substr(spec.group_id.size()) : key;
  if (fresh) {
    expected = spec.group_size;
    state = GroupState::kFilling;
    break_cause.reset();
    created = now;
    state_since = now;
    // A new incarnation: objects of an earlier one keep their own record.
    record = id_hash != 0
                 ? GroupRecord::Make(HashedKey(spec.group_id, id_hash),
                                     spec.group_size)
                 : GroupRecord::Make(spec.group_id, spec.group_size);
    // Room for every member at once, bounded so a huge group_size from
    // outside input reserves nothing unreasonable.
    // (Empty, so `slot` is end() again after the reserve.)
    const uint32_t room = std::min<uint32_t>(expected, kMembersReservedUpFront);
    members.reserve(room);
    slot = members.end();
    // Members' keys tend to be alike in length (a block's pieces).
    member_keys.clear();
    member_keys.reserve(room * stored.size());
  }
  GroupMember member;
  member.id_prefixed = id_prefixed;
  member.key_offset = static_cast<uint32_t>(member_keys.size());
  member.key_size = static_cast<uint16_t>(stored.size());
  member_keys += stored;
  slot = members.emplace(slot, index, member);
  if (reservation != nullptr) *reservation = {&slot->second, false};
  return Status::Ok();
}

void GroupMeta::BindPut(GroupMember& member, ReplicaId replica,
                        size_t key_hash, uint64_t bytes) {
  member.replica = replica;
  member.key_hash = key_hash;
  dram_bytes += bytes - member.dram_bytes;  // a retried put: same bytes
  member.dram_bytes = bytes;
}

bool GroupMeta::MarkPresent(uint32_t index, TimePoint now) {
  if (Slot(members, index) == members.end() || record->IsPresent(index)) {
    return false;
  }
  return record->CountPresent(index) && CompleteWithLast(index, now);
}

bool GroupMeta::CompleteWithLast(uint32_t index, TimePoint now) {
  record->SetPresent(index);
  // A group that lost a member meanwhile is broken (or expired) for good:
  // the last put makes its member present and nothing more.
  if (state != GroupState::kFilling) return false;
  record->SetAllPresent();
  SetState(*this, GroupState::kComplete, now);
  return true;
}

void GroupMeta::Unreserve(uint32_t index) {
  auto it = Slot(members, index);
  if (it != members.end() && !record->IsPresent(index)) {
    dram_bytes -= it->second.dram_bytes;
    EraseMember(*this, it);
  }
}

bool GroupMeta::Lose(uint32_t index, BreakCause cause, TimePoint now) {
  auto it = Slot(members, index);
  if (it == members.end()) return false;
  record->ClearPresent(index);
  dram_bytes -= it->second.dram_bytes;
  EraseMember(*this, it);
  if (state != GroupState::kFilling && state != GroupState::kComplete) {
    return false;
  }
  SetState(*this, GroupState::kBroken, now);
  break_cause = cause;
  return true;
}

void GroupMeta::DropAllMembers() {
  members.clear();
  member_keys.clear();
  dram_bytes = 0;
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
  status.present = present();
  return status;
}

std::vector<GroupMemberView> GroupMeta::Members() const {
  std::vector<GroupMemberView> out;
  out.reserve(members.size());
  for (const auto& [index, member] : members) {
    out.push_back(GroupMemberView{index, KeyOf(member), IsPresent(index)});
  }
  return out;
}

std::string GroupMeta::KeyOf(const GroupMember& member) const {
  std::string key;
  key.reserve((member.id_prefixed ? record->group_id().size() : 0) +
              member.key_size);
  AppendKeyOf(member, key);
  return key;
}

bool GroupMeta::KeyIs(const GroupMember& member, std::string_view key) const {
  const std::string_view stored = StoredKey(member);
  if (!member.id_prefixed) return key == stored;
  const std::string_view id = record->group_id();
  return key.size() == id.size() + stored.size() && key.starts_with(id) &&
         key.ends_with(stored);
}

const GroupMember* GroupMeta::Find(uint32_t index) const {
  auto it = Slot(members, index);
  return it == members.end() ? nullptr : &it->second;
}

}  // namespace mooncake_tier
