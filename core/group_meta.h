#pragma once

// One group's bookkeeping: which member index is held by which key, whether
// that member's put has completed, and the group's state. The state machine
// of docs/design/groups.md lives here; GroupTable holds one GroupMeta per
// group id.
//
//            Reserve/MarkPresent (last member present)
//   filling ------------------------------------------> complete
//     |  \                                                  |
//     |   `--- Lose ----------> broken <------- Lose -------'
//     |
//     `--- Expire (older than the fill timeout) ---> expired
//
// broken and expired are final while members remain: they accept no new
// members and a later Lose leaves them as they are. A group left without
// members starts afresh at its next Reserve; the table may drop it.
//
// Thread safety: none of its own. Every call, const or not, requires the
// lock of the GroupTable stripe that holds the group.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "core/group_record.h"
#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"
#include "protocol/types.h"

namespace mooncake_tier {

// One member index's slot (16 bytes): a group costs its members' slots,
// and a put pays for them in memory (docs/design/groups.md, "Cost").
// Whether the member's put has completed is not here but in the group's
// record (GroupRecord::IsPresent): a completing put counts itself under its
// own object stripe. Neither are the DRAM bytes of its put: the group keeps
// their sum while it fills, and whoever drops a reserved member says how
// many bytes it held.
struct GroupMember {
  // HashKey(key) when known (0: not recorded). Eviction rounds inspect
  // every complete group's members, so walking them must not hash every
  // key again.
  size_t key_hash = 0;
  // Where the member's stored key bytes sit in GroupMeta::member_keys
  // (GroupMeta::StoredKey). Keys are at most kMaxKeyBytes (1024) long.
  uint32_t key_offset = 0;
  uint16_t key_size = 0;
  // The key starts with the group id, and only the rest of it is stored:
  // KV-cache engines name a block's pieces after the block ("<hash>_0_k",
  // "<hash>_0_v" in group "<hash>"), so this keeps a group's key buffer to
  // a few bytes per member instead of a copy of every key.
  bool id_prefixed = false;
  // The slot holds a member (dense slots exist for every index below the
  // bound, members or not).
  bool held = false;
};

static_assert(kMaxKeyBytes <= UINT16_MAX, "GroupMember::key_size is 16 bits");
static_assert(sizeof(GroupMember) == 16, "GroupMember is meant to stay packed");

// A member as reported to callers (GetGroup, the admin API).
struct GroupMemberView {
  uint32_t index = 0;
  std::string key;
  bool present = false;
  friend bool operator==(const GroupMemberView&,
                         const GroupMemberView&) = default;
};

// The fields are public for reading; change them only through the methods,
// which move `state` only along the edges drawn above. A member is reserved
// (its put in flight) until its record's present bit is set.
//
// Members live in slots indexed by group_index. The first kDenseMembers
// indexes have a slot each in the record's allocation (GroupRecord::extra():
// a group of 8 costs 128 bytes of slots next to its record, and no
// allocation of its own); indexes beyond (groups larger than that, rare)
// live in `sparse`, a list sorted by index, so that a huge group_size from
// outside input allocates nothing up front. Listings come out in index
// order.
struct GroupMeta {
  static constexpr uint32_t kDenseMembers = 64;
  using SparseMembers = std::vector<std::pair<uint32_t, GroupMember>>;

  // Members with an index >= kDenseMembers, sorted by index; null while
  // there are none.
  std::unique_ptr<SparseMembers> sparse;
  // The members' keys (or what follows the group id in them) end to end:
  // one buffer per group rather than one string per member. Keys of members
  // that left stay until the dead bytes outweigh the live ones; then the
  // buffer is packed again.
  std::string member_keys;
  uint32_t expected = 0;      // group_size; 0 until the first reservation
  uint32_t member_count = 0;  // members held (reserved or present)
  GroupState state = GroupState::kFilling;
  std::optional<BreakCause> break_cause;  // set iff state == kBroken
  TimePoint created;      // first reservation; the fill timeout counts from it
  TimePoint state_since;  // last state change (or `created`)
  // DRAM staged by the reserved and present members' puts while the group
  // is filling (the filling cap counts it); reset when the group starts
  // afresh, and meaningless once it stops filling.
  uint64_t dram_bytes = 0;
  // What the member objects of this incarnation share (group_record.h),
  // with this incarnation's dense member slots in its allocation: made
  // afresh by the Reserve that starts the group, kept in step with `state`
  // (record->IsComplete() iff state == kComplete). Null until the first
  // successful Reserve.
  GroupRef record;

  // Reserves `spec.group_index` for `key`, whose put is starting.
  // REQUIRES: spec.group_id is the group's id (record->group_id() once the
  // group has members): keys that start with it are stored without it.
  //   INVALID_GROUP      index >= group_size, or a group_size other than
  //                      the group's (the message names both sizes);
  //   GROUP_NOT_FILLING  the group is complete, broken or expired and still
  //                      has members;
  //   OBJECT_EXISTS      the index is reserved or present under another
  //                      key, or already present under this one.
  // Reserving an index this key already holds, not yet present, is OK and
  // changes nothing (a retried PutStart), whatever the group's state. On error
  // nothing changes.
  // A group without members, in any state, is as good as new: its next
  // Reserve makes it filling and sets `expected` and `created` afresh, with
  // a new `record`.
  // `id_hash`, when not 0, is HashKey(spec.group_id), which a new record
  // then need not compute again.
  // REQUIRES: the caller validated spec (ValidateGroupSpec) and key, and
  // ensures a key holds at most one index (the object table refuses a
  // second put of a key).
  // On success, `*reservation` (when given) says which slot the index holds
  // and whether this was a retried PutStart (the key held it already).
  struct Reservation {
    // Valid until the member list next changes.
    GroupMember* member = nullptr;
    bool retried = false;
  };
  Status Reserve(const GroupSpec& spec, std::string_view key, TimePoint now,
                 size_t id_hash = 0, Reservation* reservation = nullptr);

  // Reserve's common case, inline for the put path: a filling group that
  // has members and agrees on spec.group_size, and a free slot among the
  // dense ones at spec.group_index. Reserves it for `key` and returns it
  // (as Reserve would, retried = false), or returns null, changing
  // nothing, when the case is any other: then Reserve decides. Same
  // REQUIRES as Reserve.
  GroupMember* TryReserveFree(const GroupSpec& spec, std::string_view key) {
    if (member_count == 0 || state != GroupState::kFilling ||
        spec.group_size != expected ||
        spec.group_index >= DenseCount(expected)) {
      return nullptr;
    }
    GroupMember& slot = DenseSlots()[spec.group_index];
    if (slot.held) return nullptr;
    slot = NewMember(spec.group_id, key);
    ++member_count;
    return &slot;
  }

  // Records the reserved member's key hash and the DRAM its put staged
  // (counted once: a retried put stages the same bytes again).
  // `reservation` is Reserve's answer for that put, with the member list
  // unchanged since.
  void BindPut(const Reservation& reservation, size_t key_hash,
               uint64_t bytes) {
    reservation.member->key_hash = key_hash;
    if (!reservation.retried) dram_bytes += bytes;
  }

  // DRAM held by this group while it is filling (it cannot be evicted
  // then); 0 in any other state.
  uint64_t FillingDramBytes() const {
    return state == GroupState::kFilling ? dram_bytes : 0;
  }

  // The member's put completed: it becomes present (through the record's
  // CountPresent, here under the group stripe: a restore). Returns true iff
  // this made the group complete. False, changing nothing, for an index
  // that is not reserved (already present, or not a member). A member
  // completing in a broken or expired group becomes present; the state
  // stays.
  bool MarkPresent(uint32_t index, TimePoint now);

  // The put of member `index` was counted last by record->CountPresent
  // (every member's put has completed), outside the group stripe: the
  // member becomes present and a filling group complete. Returns true iff
  // the group became complete. REQUIRES: `index` is a member of this
  // incarnation, held by that put.
  bool CompleteWithLast(uint32_t index, TimePoint now);

  // Members whose put has completed. (A group without members has nothing
  // present, whatever its record from an earlier incarnation says.)
  uint32_t present() const {
    return member_count == 0 ? 0 : record->PresentCount();
  }
  bool IsPresent(uint32_t index) const {
    return member_count != 0 && record->IsPresent(index);
  }

  // The put of `key` into member `index`, which staged `dram_bytes` (0 if
  // it never got as far as BindPut), was revoked or timed out: the index
  // becomes free again and the state does not change. No-op for a present
  // member, an index that is not a member, or one held by another key (use
  // Lose for a present member).
  void Unreserve(uint32_t index, std::string_view key, uint64_t dram_bytes);

  // The member at `index` is gone (removed, lost with its node, corrupt):
  // it is dropped, and a filling or complete group becomes broken with
  // `cause`. A broken or expired group keeps its state and cause. Returns
  // true iff this call broke the group; false, changing nothing, if `index`
  // is not a member.
  bool Lose(uint32_t index, BreakCause cause, TimePoint now);

  // Every member is gone (the caller removed their objects); the state
  // stays, for the record, until the table drops the group.
  void DropAllMembers();

  // A filling group with members whose first reservation is at least
  // `fill_timeout` old becomes expired; returns true iff it did. The caller
  // then removes the members. An empty filling group never expires: it
  // holds nothing, and the table may drop it.
  bool Expire(TimePoint now, Duration fill_timeout);

  // The group's status. With `members`, also lists every member (ascending
  // by index) into it, and counts `present` from the same reading of the
  // present bits as the members' flags: members count themselves under
  // their own stripes, and the two must agree.
  GroupStatus ToStatus(std::string_view group_id,
                       std::vector<GroupMemberView>* members = nullptr) const;
  // Every member, ascending by index.
  std::vector<GroupMemberView> Members() const;
  // Calls fn(index, member) for every member, ascending by index, until
  // fn returns true; returns whether one did. `fn` must not change the
  // member list.
  template <typename Pred>
  bool AnyMember(Pred&& fn) const {
    return AnyMemberOf(*this, fn);
  }
  // The same walk over `group`'s slots, changeable when `group` is: fn gets
  // a GroupMember& or a const GroupMember& as Group is const or not.
  template <typename Group, typename Pred>
  static bool AnyMemberOf(Group& group, Pred& fn) {
    if (group.member_count == 0) return false;
    auto* slots = group.DenseSlots();
    for (uint32_t i = 0, n = DenseCount(group.expected); i < n; ++i) {
      if (slots[i].held && fn(i, slots[i])) return true;
    }
    if (group.sparse != nullptr) {
      // The list's constness follows the group's (a unique_ptr's does not).
      std::conditional_t<std::is_const_v<Group>, const SparseMembers&,
                         SparseMembers&>
          list = *group.sparse;
      for (auto& [index, member] : list) {
        if (fn(index, member)) return true;
      }
    }
    return false;
  }
  // Calls fn(index, member) for every member, ascending by index. `fn` must
  // not change the member list.
  template <typename Fn>
  void ForEachMember(Fn&& fn) const {
    AnyMember([&](uint32_t index, const GroupMember& member) {
      fn(index, member);
      return false;
    });
  }
  // The member at `index`, or null. (Inline for the dense slots: every
  // member put looks its index up.)
  const GroupMember* Find(uint32_t index) const { return SlotOf(*this, index); }
  GroupMember* Find(uint32_t index) { return SlotOf(*this, index); }
  // A member's key.
  std::string KeyOf(const GroupMember& member) const;
  // Appends the member's key to `out` (no allocation when `out` has room).
  template <typename Buffer>
  void AppendKeyOf(const GroupMember& member, Buffer& out) const {
    if (member.id_prefixed) {
      const std::string_view id = record->group_id();
      out.insert(out.end(), id.begin(), id.end());
    }
    const std::string_view stored = StoredKey(member);
    out.insert(out.end(), stored.begin(), stored.end());
  }
  // Whether `key` is the member's key (no copy made).
  bool KeyIs(const GroupMember& member, std::string_view key) const;
  // The bytes of the member's key kept in member_keys: all of it, or what
  // follows the group id (GroupMember::id_prefixed). Valid until the
  // member list next changes.
  std::string_view StoredKey(const GroupMember& member) const {
    return std::string_view(member_keys)
        .substr(member.key_offset, member.key_size);
  }
  // No member left (reserved or present): the table may drop the group.
  bool Empty() const { return member_count == 0; }

  // Slots in the record for a group of `size`: indexes below this.
  static uint32_t DenseCount(uint32_t size) {
    return size < kDenseMembers ? size : kDenseMembers;
  }
  // The record's dense slots. REQUIRES: record != nullptr.
  GroupMember* DenseSlots() {
    return static_cast<GroupMember*>(record->extra());
  }
  const GroupMember* DenseSlots() const {
    return static_cast<const GroupMember*>(record->extra());
  }

 private:
  // A held slot's contents for `key`, a member of group `group_id`, its
  // stored bytes appended to member_keys (only what follows the id when
  // the key starts with it). The caller puts it in the member's slot and
  // counts it.
  GroupMember NewMember(std::string_view group_id, std::string_view key) {
    GroupMember member;
    member.id_prefixed = key.starts_with(group_id);
    const std::string_view stored =
        member.id_prefixed ? key.substr(group_id.size()) : key;
    member.held = true;
    member.key_offset = static_cast<uint32_t>(member_keys.size());
    member.key_size = static_cast<uint16_t>(stored.size());
    member_keys += stored;
    return member;
  }

  // A member slot's pointer, const when Group is.
  template <typename Group>
  using SlotPtr = std::conditional_t<std::is_const_v<Group>, const GroupMember*,
                                     GroupMember*>;
  // The slot of member `index`, or null; const when `group` is.
  template <typename Group>
  static SlotPtr<Group> SlotOf(Group& group, uint32_t index) {
    if (group.member_count == 0) return nullptr;
    if (index < DenseCount(group.expected)) {
      auto* slot = &group.DenseSlots()[index];
      return slot->held ? slot : nullptr;
    }
    return SparseSlotOf(group, index);
  }
  // The same for an index of the sparse list (group_meta.cc; made for
  // GroupMeta and const GroupMeta).
  template <typename Group>
  static SlotPtr<Group> SparseSlotOf(Group& group, uint32_t index);
};

}  // namespace mooncake_tier
