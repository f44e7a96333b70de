#pragma once

// What the member objects of a group share with it: the group's id and size,
// and whether the group is complete. Each member's ObjectMeta points to its
// group's record, so
//   - a member carries no copy of the group id (one copy per group, not one
//     per member), and
//   - the group completing (or breaking) is one store into the record under
//     the group stripe, not a pass over every member's object stripe.
//
// One record per group incarnation: GroupMeta makes a new one whenever the
// group starts afresh (its first reservation, or the first after every
// member left), so an object left over from an earlier incarnation never
// reads the state of a later one, and "this object belongs to this group"
// is a pointer comparison.
//
// A record and its id's bytes are one allocation (the id follows the
// record), owned through GroupRef, an intrusive reference count: the group
// table and every member object hold a reference; whichever lets go last
// frees it. The same count lets an existence probe share the record's
// "complete" answer (CompleteStatus: the id, complete, size of size) with
// its caller: a reference, not a copy of the id per answer. That answer is
// made by the first probe that needs it, not by the put: a record costs no
// more than its id until a probe asks.
//
// Thread safety: group_id(), group_size() and id_hash() never change;
// CompleteStatus() may be called concurrently (the first calls race to
// make the answer; one wins, the others drop theirs). The complete flag is
// written (SetComplete) only by GroupMeta, under the stripe lock of the
// GroupTable shard that holds the group, and read (IsComplete) with no lock
// at all. GroupRef and the SharedGroupStatus of CompleteStatus() are
// values: copies of one record may be made and dropped concurrently on any
// threads.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "core/hashed_key.h"
#include "mooncake_tier/types.h"

namespace mooncake_tier {

class GroupRef;

class GroupRecord final : public GroupStatusOwner {
 public:
  // A new record (complete: false) for group `id` of `size` members.
  static GroupRef Make(std::string_view id, uint32_t size);
  // The same with the id already hashed (id.hash == HashKey(id.key)).
  static GroupRef Make(const HashedKey& id, uint32_t size);

  GroupRecord(const GroupRecord&) = delete;
  GroupRecord& operator=(const GroupRecord&) = delete;

  std::string_view group_id() const {
    return std::string_view(reinterpret_cast<const char*>(this + 1), id_size_);
  }
  uint32_t group_size() const { return group_size_; }
  size_t id_hash() const { return id_hash_; }  // HashKey(group_id())
  // The id as the group table looks it up: hashed once, at Make.
  HashedKey hashed_id() const { return HashedKey(group_id(), id_hash_); }

  // What an existence probe reports for a member while IsComplete(): the
  // group complete with every member present. Shares this record (one
  // reference); made once, by the first call.
  SharedGroupStatus CompleteStatus() const;

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

  mutable std::atomic<uint32_t> refs_{0};
  const uint32_t group_size_;
  const size_t id_hash_;
  // CompleteStatus()'s answer once made (owned; freed with the record).
  mutable std::atomic<const GroupStatus*> complete_status_{nullptr};
  const uint32_t id_size_;
  std::atomic<bool> complete_{false};
  // The id's bytes follow.
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
