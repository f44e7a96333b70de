#pragma once

// The object index: every object (key -> ObjectMeta) and every group
// (id -> GroupMeta) of the master, behind one component that owns their
// locks. Nothing outside it names a stripe or takes a stripe lock: callers
// pass a key (or a group id) and a function, and the index runs the
// function on the locked state.
//
//   Update(key, fn)        fn(ObjectSlot&): the key's object, or its empty
//                          place, with the key's stripe held.
//   Read(key, fn)          fn(const ObjectMeta*), the same read-only.
//   UpdateGroup(id, fn)    fn(GroupSlot&): the group, or its empty place,
//                          with the group's stripe held. The slot reaches
//                          the members (ForEachMember, ForEachMemberKey),
//                          locking their stripes under the group's.
//   ForEachObject(fn), ForEachGroup(fn), ReadEachObject(fn),
//   ReadEachGroup(fn), ForEachPendingPut(fn), SampleObjects(...)
//                          scans, one stripe at a time.
//
// Lock order, the one rule of the index: a group stripe before object
// stripes, at most one group stripe, and object stripes only in ascending
// stripe order (which only a group's member walk takes several of). So:
// a function given an ObjectSlot must not call Update, Read or
// UpdateGroup; a function given a GroupSlot must not call UpdateGroup but
// may call Update (a member's stripe under its group's).
//
// The rule is checked twice:
// - statically: every group stripe is taken together with the capability
//   `group_stripe_role`, every object stripe with `object_stripe_role`,
//   declared ABSL_ACQUIRED_AFTER it (clang -Wthread-safety-beta checks the
//   order where both are taken in one body); every entry point excludes
//   the roles a caller must not hold, so clang rejects a call into the
//   index from code known to hold a stripe: the Master helpers that work
//   on a slot, and the callbacks that declare the role (those that call
//   such helpers must). A callback that declares nothing, or one reached
//   through a FunctionRef (the member walks), is not checked this way;
// - at run time, everywhere: each thread counts the stripes it holds, and
//   every entry point that takes one against the rule (an object stripe
//   while holding one, a group stripe while holding any) aborts with a
//   message instead of deadlocking later.
//
// The node registry, the task table and the detached replicas rank after
// every stripe: a callback may call them.
//
// Thread safety: thread-safe. A slot and the references it hands out are
// valid only inside the callback that received it.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "core/group_meta.h"
#include "core/group_table.h"
#include "core/hashed_key.h"
#include "core/object_table.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

// A capability standing for "a stripe of this kind is held" (no state: the
// analysis tracks it, the stripe's own mutex does the locking).
class ABSL_LOCKABLE StripeRole {
 public:
  StripeRole() = default;
  StripeRole(const StripeRole&) = delete;
  StripeRole& operator=(const StripeRole&) = delete;
};

extern StripeRole group_stripe_role;
extern StripeRole object_stripe_role ABSL_ACQUIRED_AFTER(group_stripe_role);

namespace index_internal {

// The stripes the calling thread holds, for the run-time order check.
struct HeldStripes {
  uint32_t groups = 0;
  uint32_t objects = 0;
};
inline thread_local HeldStripes held_stripes;

// Aborts: `what` names the lock taken against the order.
[[noreturn]] void LockOrderViolation(const char* what);

// For the entry points that lock group stripes through GroupTable (each
// in turn): the calling thread must hold no stripe.
inline void CheckNoStripeHeld() {
  if (held_stripes.objects != 0) {
    LockOrderViolation("a group stripe while holding an object stripe");
  }
  if (held_stripes.groups != 0) {
    LockOrderViolation("a group stripe while holding a group stripe");
  }
}

// Takes one object stripe and the object role.
class ABSL_SCOPED_LOCKABLE ObjectStripeLock {
 public:
  explicit ObjectStripeLock(Mutex* mu)
      ABSL_EXCLUSIVE_LOCK_FUNCTION(mu, object_stripe_role)
      : mu_(mu) {
    if (held_stripes.objects != 0) {
      LockOrderViolation("an object stripe while holding an object stripe");
    }
    mu_->Lock();
    held_stripes.objects = 1;
  }
  ~ObjectStripeLock() ABSL_UNLOCK_FUNCTION() {
    held_stripes.objects = 0;
    mu_->Unlock();
  }
  ObjectStripeLock(const ObjectStripeLock&) = delete;
  ObjectStripeLock& operator=(const ObjectStripeLock&) = delete;

 private:
  Mutex* const mu_;
};

// Takes one group stripe and the group role.
class ABSL_SCOPED_LOCKABLE GroupStripeLock {
 public:
  explicit GroupStripeLock(Mutex* mu)
      ABSL_EXCLUSIVE_LOCK_FUNCTION(mu, group_stripe_role)
      : mu_(mu) {
    CheckNoStripeHeld();
    mu_->Lock();
    held_stripes.groups = 1;
  }
  ~GroupStripeLock() ABSL_UNLOCK_FUNCTION() {
    held_stripes.groups = 0;
    mu_->Unlock();
  }
  GroupStripeLock(const GroupStripeLock&) = delete;
  GroupStripeLock& operator=(const GroupStripeLock&) = delete;

 private:
  Mutex* const mu_;
};

}  // namespace index_internal

class ObjectIndex;

// One key's place in the index, with its stripe held: the object, or
// nothing (then Insert may put one there).
class ObjectSlot {
 public:
  // The key: the index's copy while the object exists, else the caller's
  // (a scan's slot has none: read the key before erasing).
  std::string_view key() const {
    return found() ? std::string_view(it_->first) : key_;
  }
  explicit operator bool() const { return found(); }
  // REQUIRES: the slot holds an object.
  ObjectMeta& operator*() const { return it_->second; }
  ObjectMeta* operator->() const { return &it_->second; }
  // The object, or null.
  ObjectMeta* get() const { return found() ? &it_->second : nullptr; }

  // Makes an empty object at this key, in place, and returns it for the
  // caller to fill. REQUIRES: the slot is empty.
  ObjectMeta& Insert() {
    stripe_->mu.AssertHeld();
    it_ = stripe_->objects.try_emplace(std::string(key_)).first;
    return it_->second;
  }
  // Removes the object and its put mark; the slot is then empty.
  void Erase();
  // Erase() when the object holds no replica; true if it did.
  bool EraseIfEmpty();

  // The put-timeout sweep's bookkeeping: when the put in flight started.
  // REQUIRES (Mark): the slot holds an object.
  void MarkPutPending(TimePoint started) {
    stripe_->mu.AssertHeld();
    stripe_->pending_puts.emplace(it_->first, started);
  }
  void ClearPutPending() {
    stripe_->mu.AssertHeld();
    const std::string_view k = key();
    stripe_->pending_puts.erase(absl::string_view(k.data(), k.size()));
  }
  std::optional<TimePoint> PutPendingSince() const;

 private:
  friend class ObjectIndex;
  friend class GroupSlot;
  using Map = decltype(ObjectTable::Shard::objects);
  ObjectSlot(ObjectTable::Shard* stripe, std::string_view key, Map::iterator it)
      : stripe_(stripe), key_(key), it_(it) {}
  bool found() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return it_ != stripe_->objects.end();
  }

  ObjectTable::Shard* const stripe_;
  std::string_view key_;
  Map::iterator it_;
};

// One group id's place in the index, with its stripe held: the group, or
// nothing (then Create may start one). Through it the group's members are
// reached with their stripes taken in the index's order.
class GroupSlot {
 public:
  // The id: the group record's copy while the entry exists, else the
  // caller's (with its hash either way). After Erase in a scan it views
  // the erased entry's record: read it before erasing.
  HashedKey id() const {
    return found() ? HashedKey(it_->first.id, it_->first.hash) : id_;
  }
  explicit operator bool() const { return found(); }
  // REQUIRES: the slot holds a group.
  GroupMeta& operator*() const { return it_->second; }
  GroupMeta* operator->() const { return &it_->second; }
  GroupMeta* get() const { return found() ? &it_->second : nullptr; }

  // Makes an empty entry for the id (REQUIRES: the slot is empty). A new
  // entry views the caller's id until Reserve keys it by its record's:
  // reserve before the callback returns, or Erase.
  GroupMeta& Create();
  // GroupMeta::Reserve, then keys the entry by the id in the group's
  // record (which a reservation starting a new incarnation replaces).
  // Every reservation goes through here. REQUIRES: the slot holds a group.
  Status Reserve(const GroupSpec& spec, std::string_view key, TimePoint now,
                 GroupMeta::Reservation* reservation = nullptr) {
    Status status = it_->second.Reserve(spec, key, now, id_.hash, reservation);
    if (status.ok()) it_->first.id = it_->second.record->group_id();
    return status;
  }
  // Removes the group entry (not its member objects); the slot is then
  // empty.
  void Erase();

  // Calls fn(member) for each member object that still belongs to this
  // incarnation of the group (the key holds an object carrying the group's
  // record at that index), with every member's stripe held (ascending,
  // each once) for the whole walk. fn may change or erase its object.
  // REQUIRES: the slot holds a group.
  using MemberFn = absl::FunctionRef<void(ObjectSlot&)>;
  void ForEachMember(MemberFn fn) const;
  // The same over the member keys whether or not their objects exist, plus
  // `extra` (a key that may have left the member list).
  void ForEachMemberKey(std::string_view extra, MemberFn fn) const;

 private:
  friend class ObjectIndex;
  using Map = GroupTable::GroupMap;
  GroupSlot(ObjectIndex* index, GroupTable::Shard* stripe, const HashedKey& id,
            Map::iterator it)
      : index_(index), stripe_(stripe), id_(id), it_(it) {}
  bool found() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return it_ != stripe_->groups.end();
  }

  ObjectIndex* const index_;
  GroupTable::Shard* const stripe_;
  HashedKey id_;
  Map::iterator it_;
};

// Objects and pending puts, counted stripe by stripe.
struct ObjectCounts {
  uint64_t objects = 0;
  uint64_t pending_puts = 0;
};

class ObjectIndex {
 public:
  // REQUIRES: both counts are powers of two.
  ObjectIndex(uint32_t object_stripes, uint32_t group_stripes);
  ObjectIndex(const ObjectIndex&) = delete;
  ObjectIndex& operator=(const ObjectIndex&) = delete;

  // ---- One key ----

  // Runs fn(ObjectSlot&) with the key's stripe held; returns what fn
  // returns.
  template <typename Fn>
  decltype(auto) Update(const HashedKey& key, Fn&& fn)
      ABSL_LOCKS_EXCLUDED(object_stripe_role) {
    ObjectTable::Shard& stripe = objects_.ShardFor(key);
    index_internal::ObjectStripeLock lock(&stripe.mu);
    ObjectSlot slot(&stripe, key.key,
                    stripe.objects.find(key.view(), key.hash));
    return std::forward<Fn>(fn)(slot);
  }
  template <typename Fn>
  decltype(auto) Update(std::string_view key, Fn&& fn)
      ABSL_LOCKS_EXCLUDED(object_stripe_role) {
    return Update(HashedKey(key), std::forward<Fn>(fn));
  }
  // Runs fn(const ObjectMeta*) (null: no such object) with the key's
  // stripe held.
  template <typename Fn>
  decltype(auto) Read(const HashedKey& key, Fn&& fn) const
      ABSL_LOCKS_EXCLUDED(object_stripe_role) {
    const ObjectTable::Shard& stripe = objects_.ShardFor(key);
    index_internal::ObjectStripeLock lock(&stripe.mu);
    auto it = stripe.objects.find(key.view(), key.hash);
    return std::forward<Fn>(fn)(static_cast<const ObjectMeta*>(
        it == stripe.objects.end() ? nullptr : &it->second));
  }
  template <typename Fn>
  decltype(auto) Read(std::string_view key, Fn&& fn) const
      ABSL_LOCKS_EXCLUDED(object_stripe_role) {
    return Read(HashedKey(key), std::forward<Fn>(fn));
  }

  // ---- One group ----

  // Runs fn(GroupSlot&) with the group's stripe held; returns what fn
  // returns.
  template <typename Fn>
  decltype(auto) UpdateGroup(const HashedKey& id, Fn&& fn)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role) {
    GroupTable::Shard& stripe = groups_.ShardFor(id);
    index_internal::GroupStripeLock lock(&stripe.mu);
    GroupSlot slot(this, &stripe, id, stripe.groups.find(id.view(), id.hash));
    return std::forward<Fn>(fn)(slot);
  }
  template <typename Fn>
  decltype(auto) UpdateGroup(std::string_view id, Fn&& fn)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role) {
    return UpdateGroup(HashedKey(id), std::forward<Fn>(fn));
  }
  // Runs fn(const GroupMeta*) (null: no such group) with its stripe held.
  template <typename Fn>
  decltype(auto) ReadGroup(const HashedKey& id, Fn&& fn) const
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role) {
    const GroupTable::Shard& stripe = groups_.ShardFor(id);
    index_internal::GroupStripeLock lock(&stripe.mu);
    auto it = stripe.groups.find(id.view(), id.hash);
    return std::forward<Fn>(fn)(static_cast<const GroupMeta*>(
        it == stripe.groups.end() ? nullptr : &it->second));
  }
  template <typename Fn>
  decltype(auto) ReadGroup(std::string_view id, Fn&& fn) const
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role) {
    return ReadGroup(HashedKey(id), std::forward<Fn>(fn));
  }

  // ---- Scans: one stripe at a time, never two ----

  // Calls fn(ObjectSlot&) for every object; fn may change or erase it (not
  // insert). fn returns void, or bool: false ends the scan.
  template <typename Fn>
  void ForEachObject(Fn&& fn) ABSL_LOCKS_EXCLUDED(object_stripe_role);
  // Calls fn(std::string_view key, const ObjectMeta&) for every object.
  template <typename Fn>
  void ReadEachObject(Fn&& fn) const ABSL_LOCKS_EXCLUDED(object_stripe_role);
  // Calls fn(key, started, object) for every put in flight (object: null
  // if the mark outlived its object).
  using PendingPutFn = absl::FunctionRef<void(
      const std::string& key, TimePoint started, const ObjectMeta* object)>;
  void ForEachPendingPut(PendingPutFn fn) const
      ABSL_LOCKS_EXCLUDED(object_stripe_role);
  // A bounded sample: fn(key, meta) for up to `per_stripe` objects of each
  // of the next `stripes` stripes; successive samples cover the stripes in
  // turn.
  using SampleFn =
      absl::FunctionRef<void(const std::string& key, const ObjectMeta&)>;
  void SampleObjects(uint32_t stripes, uint32_t per_stripe, SampleFn fn)
      ABSL_LOCKS_EXCLUDED(object_stripe_role);
  ObjectCounts CountObjects() const ABSL_LOCKS_EXCLUDED(object_stripe_role);

  // Calls fn(GroupSlot&) for every group; fn may change the group, erase
  // it (GroupSlot::Erase) and reach its members. fn returns void, or bool:
  // false ends the scan.
  template <typename Fn>
  void ForEachGroup(Fn&& fn)
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role);
  // Calls fn(std::string_view id, const GroupMeta&) for every group.
  template <typename Fn>
  void ReadEachGroup(Fn&& fn) const
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role);

  // ---- Group lookups for operators (each stripe under its own lock) ----

  std::optional<GroupStatus> FindGroup(const HashedKey& id) const
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role) {
    index_internal::CheckNoStripeHeld();
    return groups_.Find(id);
  }
  GroupStateCounts CountGroupsByState() const
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role) {
    index_internal::CheckNoStripeHeld();
    return groups_.CountsByState();
  }
  // GroupTable::ListPage: a page of groups in id order.
  GroupPage ListGroups(std::optional<GroupState> filter, size_t limit,
                       std::string_view cursor) const
      ABSL_LOCKS_EXCLUDED(group_stripe_role, object_stripe_role) {
    index_internal::CheckNoStripeHeld();
    return groups_.ListPage(filter, limit, cursor);
  }

 private:
  friend class GroupSlot;
  // Calls fn(slot); false when fn returned false (the scan ends).
  template <typename Fn>
  static bool Continue(Fn& fn, ObjectSlot& slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role);
  template <typename Fn>
  static bool ContinueGroup(Fn& fn, GroupSlot& slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role);

  // The locking half of GroupSlot's member walks: takes the stripes of
  // `keys` (ascending, each once), calls fn(i) for each key in order, and
  // releases them.
  void WithMemberStripes(absl::Span<const HashedKey> keys,
                         absl::FunctionRef<void(size_t, ObjectSlot&)> fn);

  ObjectTable objects_;
  GroupTable groups_;
  // Where the next SampleObjects starts.
  std::atomic<uint32_t> sample_cursor_{0};
};

// ---- Template bodies ----

template <typename Fn>
bool ObjectIndex::Continue(Fn& fn, ObjectSlot& slot) {
  if constexpr (std::is_same_v<std::invoke_result_t<Fn&, ObjectSlot&>, bool>) {
    return fn(slot);
  } else {
    fn(slot);
    return true;
  }
}

template <typename Fn>
bool ObjectIndex::ContinueGroup(Fn& fn, GroupSlot& slot) {
  if constexpr (std::is_same_v<std::invoke_result_t<Fn&, GroupSlot&>, bool>) {
    return fn(slot);
  } else {
    fn(slot);
    return true;
  }
}

template <typename Fn>
void ObjectIndex::ForEachObject(Fn&& fn) {
  for (uint32_t s = 0; s < objects_.shard_count(); ++s) {
    ObjectTable::Shard& stripe = objects_.shard(s);
    index_internal::ObjectStripeLock lock(&stripe.mu);
    for (auto it = stripe.objects.begin(); it != stripe.objects.end();) {
      // The next entry first: fn may erase this one (which moves no other).
      ObjectSlot slot(&stripe, std::string_view(), it++);
      if (!Continue(fn, slot)) return;
    }
  }
}

template <typename Fn>
void ObjectIndex::ReadEachObject(Fn&& fn) const {
  for (uint32_t s = 0; s < objects_.shard_count(); ++s) {
    const ObjectTable::Shard& stripe = objects_.shard(s);
    index_internal::ObjectStripeLock lock(&stripe.mu);
    for (const auto& [key, meta] : stripe.objects) {
      fn(std::string_view(key), meta);
    }
  }
}

template <typename Fn>
void ObjectIndex::ForEachGroup(Fn&& fn) {
  for (uint32_t g = 0; g < groups_.shard_count(); ++g) {
    GroupTable::Shard& stripe = groups_.shard(g);
    index_internal::GroupStripeLock lock(&stripe.mu);
    for (auto it = stripe.groups.begin(); it != stripe.groups.end();) {
      const HashedKey id(it->first.id, it->first.hash);
      GroupSlot slot(this, &stripe, id, it++);
      if (!ContinueGroup(fn, slot)) return;
    }
  }
}

template <typename Fn>
void ObjectIndex::ReadEachGroup(Fn&& fn) const {
  for (uint32_t g = 0; g < groups_.shard_count(); ++g) {
    const GroupTable::Shard& stripe = groups_.shard(g);
    index_internal::GroupStripeLock lock(&stripe.mu);
    for (const auto& [id, meta] : stripe.groups) fn(id.id, meta);
  }
}

}  // namespace mooncake_tier
