#include "core/group_meta.h"

#include <algorithm>
#include <type_traits>
#include <utility>

namespace mooncake_tier {
namespace {

using SparseMembers = GroupMeta::SparseMembers;

std::string Quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '\'';
  out += s;
  out += '\'';
  return out;
}

// Calls fn(member) for every member slot of `group`, changeable.
template <typename Fn>
void ForEachSlot(GroupMeta& group, Fn&& fn) {
  auto each = [&](uint32_t, GroupMember& member) {
    fn(member);
    return false;
  };
  GroupMeta::AnyMemberOf(group, each);
}

// Where `index` is, or would go, in the sparse list (sorted by index).
SparseMembers::iterator SparseAt(SparseMembers& sparse, uint32_t index) {
  return std::lower_bound(
      sparse.begin(), sparse.end(), index,
      [](const auto& slot, uint32_t i) { return slot.first < i; });
}

// Drops member `index` (held) from its slot; packs the key buffer once it
// holds more dead bytes than live ones (bounded: a group whose puts are
// revoked and retried again and again does not grow it for ever).
void EraseMember(GroupMeta& group, uint32_t index) {
  if (index < GroupMeta::DenseCount(group.expected)) {
    group.DenseSlots()[index] = GroupMember{};
  } else {
    SparseMembers& sparse = *group.sparse;
    sparse.erase(SparseAt(sparse, index));
    if (sparse.empty()) group.sparse.reset();
  }
  if (--group.member_count == 0) {
    group.member_keys.clear();
    return;
  }
  size_t live = 0;
  ForEachSlot(group, [&](const GroupMember& m) { live += m.key_size; });
  if (group.member_keys.size() <= 2 * live + 256) return;
  std::string packed;
  packed.reserve(live);
  ForEachSlot(group, [&](GroupMember& member) {
    const std::string_view stored = group.StoredKey(member);
    member.key_offset = static_cast<uint32_t>(packed.size());
    packed += stored;
  });
  group.member_keys = std::move(packed);
}

// Every state change after the start goes through here, so the record
// the members read stays in step with `state`.
void SetState(GroupMeta& group, GroupState next, TimePoint now) {
  group.state = next;
  group.state_since = now;
  if (group.record != nullptr) {
    group.record->SetComplete(next == GroupState::kComplete);
  }
}

// Reserve's refusals. Out of line and cold, like every error: a member
// put that is accepted runs none of this message building.
[[gnu::cold]] Status IndexOutOfRange(const GroupSpec& spec) {
  return Status(ErrorReason::kInvalidGroup,
                "group " + Quoted(spec.group_id) + " index " +
                    std::to_string(spec.group_index) +
                    " is not below its group_size " +
                    std::to_string(spec.group_size));
}

[[gnu::cold]] Status SizeDisagrees(const GroupSpec& spec, uint32_t expected) {
  return Status(ErrorReason::kInvalidGroup,
                "group " + Quoted(spec.group_id) + " has group_size " +
                    std::to_string(expected) + ", the put says " +
                    std::to_string(spec.group_size));
}

[[gnu::cold]] Status IndexTaken(const GroupSpec& spec,
                                const std::string& holder) {
  return Status(ErrorReason::kObjectExists,
                "group " + Quoted(spec.group_id) + " index " +
                    std::to_string(spec.group_index) +
                    " is already taken by key " + Quoted(holder));
}

[[gnu::cold]] Status NotFilling(const GroupSpec& spec, GroupState state) {
  return Status(ErrorReason::kGroupNotFilling,
                "group " + Quoted(spec.group_id) + " is " +
                    std::string(GroupStateName(state)) +
                    " and accepts no members");
}

}  // namespace

Status GroupMeta::Reserve(const GroupSpec& spec, std::string_view key,
                          TimePoint now, size_t id_hash,
                          Reservation* reservation) {
  const uint32_t index = spec.group_index;
  if (index >= spec.group_size) return IndexOutOfRange(spec);
  // A group without members holds nothing: whatever its state, it starts
  // afresh, exactly as if the table had dropped it and created it again (an
  // engine re-puts a block whose group expired or lost every member).
  const bool fresh = member_count == 0;
  if (!fresh && spec.group_size != expected) {
    return SizeDisagrees(spec, expected);
  }
  if (GroupMember* holder = fresh ? nullptr : Find(index)) {
    // The same put retried keeps its reservation, whatever happened to the
    // group meanwhile.
    if (KeyIs(*holder, key) && !record->IsPresent(index)) {
      if (reservation != nullptr) *reservation = {holder, true};
      return Status::Ok();
    }
    return IndexTaken(spec, KeyOf(*holder));
  }
  if (state != GroupState::kFilling && !fresh) return NotFilling(spec, state);
  if (fresh) {
    expected = spec.group_size;
    state = GroupState::kFilling;
    break_cause.reset();
    created = now;
    state_since = now;
    dram_bytes = 0;
    sparse.reset();
    // A new incarnation: objects of an earlier one keep their own record.
    // Its allocation holds the dense member slots, zeroed (none held).
    const HashedKey id = id_hash != 0 ? HashedKey(spec.group_id, id_hash)
                                      : HashedKey(spec.group_id);
    record = GroupRecord::Make(id, spec.group_size,
                               DenseCount(expected) * sizeof(GroupMember));
    member_keys.clear();
  }
  // The group was found by its id: record->group_id() == spec.group_id.
  const GroupMember member = NewMember(spec.group_id, key);
  // Members' keys tend to be alike in length (a block's pieces).
  if (fresh) member_keys.reserve(DenseCount(expected) * member.key_size);
  GroupMember* slot;
  if (index < DenseCount(expected)) {
    slot = &DenseSlots()[index];
    *slot = member;
  } else {
    if (sparse == nullptr) sparse = std::make_unique<SparseMembers>();
    slot = &sparse->emplace(SparseAt(*sparse, index), index, member)->second;
  }
  ++member_count;
  if (reservation != nullptr) *reservation = {slot, false};
  return Status::Ok();
}

bool GroupMeta::MarkPresent(uint32_t index, TimePoint now) {
  if (Find(index) == nullptr || record->IsPresent(index)) {
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

void GroupMeta::Unreserve(uint32_t index, std::string_view key,
                          uint64_t bytes) {
  const GroupMember* member = Find(index);
  if (member != nullptr && !record->IsPresent(index) && KeyIs(*member, key)) {
    dram_bytes -= bytes;
    EraseMember(*this, index);
  }
}

bool GroupMeta::Lose(uint32_t index, BreakCause cause, TimePoint now) {
  if (Find(index) == nullptr) return false;
  record->ClearPresent(index);
  EraseMember(*this, index);
  // dram_bytes is left as it is: the group stops filling here (or had
  // stopped before), and only a filling group's bytes count.
  if (state != GroupState::kFilling && state != GroupState::kComplete) {
    return false;
  }
  SetState(*this, GroupState::kBroken, now);
  break_cause = cause;
  return true;
}

void GroupMeta::DropAllMembers() {
  if (member_count != 0) {
    std::fill_n(DenseSlots(), DenseCount(expected), GroupMember{});
  }
  sparse.reset();
  member_count = 0;
  member_keys.clear();
  dram_bytes = 0;
}

bool GroupMeta::Expire(TimePoint now, Duration fill_timeout) {
  if (state != GroupState::kFilling || member_count == 0) return false;
  if (now - created < fill_timeout) return false;
  SetState(*this, GroupState::kExpired, now);
  return true;
}

GroupStatus GroupMeta::ToStatus(std::string_view group_id,
                                std::vector<GroupMemberView>* members) const {
  GroupStatus status;
  status.group_id = std::string(group_id);
  status.state = state;
  status.expected = expected;
  if (members == nullptr) {
    status.present = present();
    return status;
  }
  *members = Members();
  for (const GroupMemberView& m : *members) status.present += m.present;
  return status;
}

std::vector<GroupMemberView> GroupMeta::Members() const {
  std::vector<GroupMemberView> out;
  out.reserve(member_count);
  ForEachMember([&](uint32_t index, const GroupMember& member) {
    out.push_back(GroupMemberView{index, KeyOf(member), IsPresent(index)});
  });
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

template <typename Group>
GroupMeta::SlotPtr<Group> GroupMeta::SparseSlotOf(Group& group,
                                                  uint32_t index) {
  if (group.sparse == nullptr) return nullptr;
  auto it = SparseAt(*group.sparse, index);
  return it != group.sparse->end() && it->first == index ? &it->second
                                                         : nullptr;
}
template GroupMeta::SlotPtr<GroupMeta> GroupMeta::SparseSlotOf(GroupMeta&,
                                                               uint32_t);
template GroupMeta::SlotPtr<const GroupMeta> GroupMeta::SparseSlotOf(
    const GroupMeta&, uint32_t);

}  // namespace mooncake_tier
