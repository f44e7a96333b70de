#pragma once

// What the member objects of a group share with it: the group's id and size,
// which members' puts have completed, and whether the group is complete.
// Each member's ObjectMeta points to its group's record, so
//   - a member carries no copy of the group id (one copy per group, not one
//     per member),
//   - a member's put completing is counted here under the member's own
//     object stripe: only the put that completes the group takes the group
//     stripe (CountPresent), and
//   - the group completing (or breaking) is one store into the record under
//     the group stripe, not a pass over every member's object stripe.
//
// One record per group incarnation: GroupMeta makes a new one whenever the
// group starts afresh (its first reservation, or the first after every
// member left), so an object left over from an earlier incarnation never
// reads the state of a later one, and "this object belongs to this group"
// is a pointer comparison.
//
// A record, its present bits (one per index), its id's bytes and the
// group's member slots (extra()) are one allocation, owned through
// GroupRef, an intrusive reference count: the group table and every member
// object hold a reference; whichever lets go last frees it. The same count
// lets an existence probe share the record's "complete" answer
// (CompleteStatus: the id, complete, size of size) with its caller: a
// reference, not a copy of the id per answer. That answer is
// made by the first probe that needs it, not by the put: a record costs no
// more than its id until a probe asks.
//
// Thread safety: group_id(), group_size() and id_hash() never change;
// CompleteStatus() may be called concurrently (the first calls race to
// make the answer; one wins, the others drop theirs). The complete flag is
// written (SetComplete) only by GroupMeta, under the stripe lock of the
// GroupTable shard that holds the group, and read (IsComplete) with no lock
// at all. The present count and bits are atomics: CountPresent runs under
// the member object's stripe (PutEnd) or the group stripe (a restore); the
// other present calls run under the group stripe (docs/design/groups.md,
// "Completion without the group stripe"). GroupRef and the
// SharedGroupStatus of CompleteStatus() are values: copies of one record may
// be made and dropped concurrently on any threads.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "core/hashed_key.h"
#include "mooncake_tier/types.h"
#include "protocol/group_status_owner.h"

namespace mooncake_tier {

class GroupRef;

class GroupRecord final : public GroupStatusOwner {
 public:
  // A new record (complete: false) for group `id` of `size` members.
  static GroupRef Make(std::string_view id, uint32_t size);
  // The same with the id already hashed (id.hash == HashKey(id.key)), and
  // `extra_bytes` of zeroed space after the id for the group's own
  // bookkeeping (extra()), in the same allocation.
  static GroupRef Make(const HashedKey& id, uint32_t size,
                       size_t extra_bytes = 0);

  GroupRecord(const GroupRecord&) = delete;
  GroupRecord& operator=(const GroupRecord&) = delete;

  std::string_view group_id() const {
    return std::string_view(
        reinterpret_cast<const char*>(Words() + WordCount(group_size_)),
        id_size_);
  }
  uint32_t group_size() const { return group_size_; }
  size_t id_hash() const { return id_hash_; }  // HashKey(group_id())
  // The id as the group table looks it up: hashed once, at Make.
  HashedKey hashed_id() const { return HashedKey(group_id(), id_hash_); }

  // The space Make set aside after the id: 8-byte aligned, zeroed at Make,
  // for trivially destructible objects only (nothing destroys them). It
  // belongs to the group's GroupMeta, which uses it only under its stripe
  // lock (the member slots, group_meta.h).
  void* extra() const {
    return reinterpret_cast<char*>(Words() + WordCount(group_size_)) +
           RoundUp8(id_size_);
  }

  // What an existence probe reports for a member while IsComplete(): the
  // group complete with every member present. Shares this record (one
  // reference); made once, by the first call.
  SharedGroupStatus CompleteStatus() const;

  // Counts the completed put of member `index`. Returns true iff it is the
  // put that makes every member's put complete (group_size of them): its
  // present bit is then left clear for the caller to set with the group's
  // completion, under the group stripe (GroupMeta::CompleteWithLast), so
  // that nothing under the group stripe sees every member present while
  // the group is still filling. Any other put's bit is set at once.
  // REQUIRES: index < group_size(); at most one call per index while the
  // index is this record's member (a member counted once stays counted:
  // losing it breaks the group for good, and a group that starts afresh
  // has a new record).
  bool CountPresent(uint32_t index);
  // Whether member `index`'s put is counted present.
  bool IsPresent(uint32_t index) const {
    return (Word(index).load(std::memory_order_acquire) & Bit(index)) != 0;
  }
  // Members counted present (the present bits set).
  uint32_t PresentCount() const;
  // Sets `index`'s present bit (the last member, as the group completes or
  // in a group that can no longer complete).
  void SetPresent(uint32_t index) {
    Word(index).fetch_or(Bit(index), std::memory_order_acq_rel);
  }
  // Every index present: the group completed. A non-last member whose bit
  // is still on its way (CountPresent counts before it sets) is already
  // done.
  void SetAllPresent();
  // Clears `index`'s present bit (the member was lost). The count is not
  // decremented: it only finds the last put, and a group that lost a member
  // is broken and never completes.
  void ClearPresent(uint32_t index) {
    Word(index).fetch_and(~Bit(index), std::memory_order_acq_rel);
  }

  // The group is complete: under all_or_nothing its members are readable.
  // (Acquire: pairs with the release store of SetComplete.)
  bool IsComplete() const { return complete_.load(std::memory_order_acquire); }
  // REQUIRES: the caller is the group's GroupMeta, under its stripe lock.
  void SetComplete(bool complete) {
    complete_.store(complete, std::memory_order_release);
  }

  // GroupStatusOwner: the record's reference count.
  void Ref() const noexcept override {
    refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void Unref() const noexcept override;

 private:
  GroupRecord(std::string_view id, uint32_t size, size_t id_hash);
  ~GroupRecord();

  static size_t WordCount(uint32_t size) { return (size + 63) / 64; }
  static size_t RoundUp8(size_t n) { return (n + 7) & ~size_t{7}; }
  static uint64_t Bit(uint32_t index) { return uint64_t{1} << (index % 64); }
  // The present bits follow the record; the id's bytes follow them.
  std::atomic<uint64_t>* Words() const {
    return reinterpret_cast<std::atomic<uint64_t>*>(
        const_cast<GroupRecord*>(this + 1));
  }
  std::atomic<uint64_t>& Word(uint32_t index) const {
    return Words()[index / 64];
  }

  mutable std::atomic<uint32_t> refs_{0};
  const uint32_t group_size_;
  const size_t id_hash_;
  // CompleteStatus()'s answer once made (owned; freed with the record).
  mutable std::atomic<const GroupStatus*> complete_status_{nullptr};
  const uint32_t id_size_;
  // Completed member puts counted by CountPresent (never decremented).
  std::atomic<uint32_t> counted_{0};
  std::atomic<bool> complete_{false};
  // The present bits (WordCount(group_size_) words), then the id's bytes,
  // then (from the next multiple of 8) the extra space.
};

// An owning reference to a GroupRecord (null or one record).
class GroupRef {
 public:
  GroupRef() = default;
  GroupRef(std::nullptr_t) {}  // NOLINT: null converts implicitly
  GroupRef(const GroupRef& other) : record_(other.record_) { Acquire(); }
  GroupRef(GroupRef&& other) noexcept
      : record_(std::exchange(other.record_, nullptr)) {}
  GroupRef& operator=(GroupRef other) noexcept {
    std::swap(record_, other.record_);
    return *this;
  }
  ~GroupRef() { Release(); }

  GroupRecord* get() const { return record_; }
  GroupRecord* operator->() const { return record_; }
  GroupRecord& operator*() const { return *record_; }
  explicit operator bool() const { return record_ != nullptr; }

  friend bool operator==(const GroupRef& a, const GroupRef& b) {
    return a.record_ == b.record_;
  }
  friend bool operator==(const GroupRef& a, std::nullptr_t) {
    return a.record_ == nullptr;
  }

 private:
  friend class GroupRecord;
  explicit GroupRef(GroupRecord* record) : record_(record) { Acquire(); }
  void Acquire() {
    if (record_ != nullptr) record_->Ref();
  }
  void Release() {
    if (record_ != nullptr) std::exchange(record_, nullptr)->Unref();
  }

  GroupRecord* record_ = nullptr;
};

}  // namespace mooncake_tier
