#include "core/object_index.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace mooncake_tier {

StripeRole group_stripe_role;
StripeRole object_stripe_role;

namespace index_internal {

void LockOrderViolation(const char* what) {
  std::fprintf(stderr,
               "mooncake-tier: lock order violated in the object index: took "
               "%s (order: one group stripe, then object stripes in "
               "ascending order; see core/object_index.h)\n",
               what);
  std::abort();
}

}  // namespace index_internal

// ---- ObjectSlot ----

void ObjectSlot::Erase() {
  stripe_->mu.AssertHeld();
  stripe_->pending_puts.erase(it_->first);
  stripe_->objects.erase(it_);
  it_ = stripe_->objects.end();
}

bool ObjectSlot::EraseIfEmpty() {
  if (!it_->second.replicas.empty()) return false;
  Erase();
  return true;
}

std::optional<TimePoint> ObjectSlot::PutPendingSince() const {
  stripe_->mu.AssertHeld();
  const std::string_view k = key();
  auto it = stripe_->pending_puts.find(absl::string_view(k.data(), k.size()));
  if (it == stripe_->pending_puts.end()) return std::nullopt;
  return it->second;
}

// ---- GroupSlot ----

GroupMeta& GroupSlot::Create() {
  stripe_->mu.AssertHeld();
  it_ = stripe_->groups.try_emplace(GroupKey(id_)).first;
  return it_->second;
}

void GroupSlot::Erase() {
  stripe_->mu.AssertHeld();
  stripe_->groups.erase(it_);
  it_ = stripe_->groups.end();
}

void GroupSlot::ForEachMember(MemberFn fn) const {
  const GroupMeta& group = it_->second;
  // Every key end to end in one buffer (eviction rounds walk every complete
  // group: no allocation per member for groups of usual size), then views
  // into it once it no longer moves, with the hashes the puts recorded.
  absl::InlinedVector<char, 1024> names;
  absl::InlinedVector<size_t, 16> ends;
  absl::InlinedVector<uint32_t, 16> indexes;
  group.ForEachMember([&](uint32_t index, const GroupMember& member) {
    group.AppendKeyOf(member, names);
    ends.push_back(names.size());
    indexes.push_back(index);
  });
  absl::InlinedVector<HashedKey, 16> keys;
  size_t begin = 0;
  size_t next_end = 0;
  group.ForEachMember([&](uint32_t, const GroupMember& member) {
    const std::string_view key(names.data() + begin, ends[next_end] - begin);
    begin = ends[next_end++];
    keys.push_back(member.key_hash != 0 ? HashedKey(key, member.key_hash)
                                        : HashedKey(key));
  });
  index_->WithMemberStripes(keys, [&](size_t i, ObjectSlot& slot) {
    // The key's object must still be this incarnation's member at this
    // index (records are per incarnation: a pointer comparison). Otherwise
    // it is gone, or the key now holds another object.
    if (slot && slot->group == group.record &&
        slot->group_index == indexes[i]) {
      fn(slot);
    }
  });
}

void GroupSlot::ForEachMemberKey(std::string_view extra, MemberFn fn) const {
  const GroupMeta& group = it_->second;
  std::vector<std::string> names;
  group.ForEachMember([&](uint32_t, const GroupMember& member) {
    names.push_back(group.KeyOf(member));
  });
  if (std::find(names.begin(), names.end(), extra) == names.end()) {
    names.emplace_back(extra);
  }
  absl::InlinedVector<HashedKey, 16> keys;
  for (const std::string& name : names) keys.emplace_back(name);
  index_->WithMemberStripes(keys, [&](size_t, ObjectSlot& slot) { fn(slot); });
}

// ---- ObjectIndex ----

ObjectIndex::ObjectIndex(uint32_t object_stripes, uint32_t group_stripes)
    : objects_(object_stripes), groups_(group_stripes) {}

void ObjectIndex::WithMemberStripes(absl::Span<const HashedKey> keys,
                                    absl::FunctionRef<void(size_t, ObjectSlot&)>
                                        fn) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // (Several stripes at once, chosen at run time: what the analysis cannot
  // follow. The order is checked here instead.)
  index_internal::HeldStripes& held = index_internal::held_stripes;
  if (held.objects != 0) {
    index_internal::LockOrderViolation(
        "a group's member stripes while holding an object stripe");
  }
  absl::InlinedVector<uint32_t, 16> stripes;
  for (const HashedKey& key : keys) stripes.push_back(objects_.ShardIndex(key));
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  for (uint32_t s : stripes) objects_.shard(s).mu.Lock();
  held.objects = static_cast<uint32_t>(stripes.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const HashedKey& key = keys[i];
    ObjectTable::Shard& stripe = objects_.ShardFor(key);
    ObjectSlot slot(&stripe, key.key,
                    stripe.objects.find(key.view(), key.hash));
    fn(i, slot);
  }
  held.objects = 0;
  for (auto s = stripes.rbegin(); s != stripes.rend(); ++s) {
    objects_.shard(*s).mu.Unlock();
  }
}

void ObjectIndex::ForEachPendingPut(PendingPutFn fn) const {
  for (uint32_t s = 0; s < objects_.shard_count(); ++s) {
    const ObjectTable::Shard& stripe = objects_.shard(s);
    index_internal::ObjectStripeLock lock(&stripe.mu);
    for (const auto& [key, started] : stripe.pending_puts) {
      auto it = stripe.objects.find(key);
      fn(key, started, it == stripe.objects.end() ? nullptr : &it->second);
    }
  }
}

void ObjectIndex::SampleObjects(uint32_t stripes, uint32_t per_stripe,
                                SampleFn fn) {
  const uint32_t start = sample_cursor_.fetch_add(stripes);
  for (uint32_t i = 0; i < stripes; ++i) {
    ObjectTable::Shard& stripe =
        objects_.shard((start + i) % objects_.shard_count());
    index_internal::ObjectStripeLock lock(&stripe.mu);
    uint32_t seen = 0;
    for (const auto& [key, meta] : stripe.objects) {
      if (++seen > per_stripe) break;
      fn(key, meta);
    }
  }
}

ObjectCounts ObjectIndex::CountObjects() const {
  ObjectCounts counts;
  for (uint32_t s = 0; s < objects_.shard_count(); ++s) {
    const ObjectTable::Shard& stripe = objects_.shard(s);
    index_internal::ObjectStripeLock lock(&stripe.mu);
    counts.objects += stripe.objects.size();
    counts.pending_puts += stripe.pending_puts.size();
  }
  return counts;
}

}  // namespace mooncake_tier
