// Master: groups. Every path that changes a group takes its group stripe
// first, then the stripes of the member objects (docs/design/groups.md).

#include <algorithm>

#include "core/master.h"
#include "core/validation.h"

namespace mooncake_tier {
namespace {

Status GroupMissing(const std::string& id) {
  return Status(ErrorReason::kGroupNotFound, "no group '" + id + "'");
}

}  // namespace

Result<ReplicaDescriptor> Master::PutStartMemberLocked(
    GroupTable::Shard& gshard, GroupTable::GroupMap::iterator& it,
    const HashedKey& id, const PutStartRequest& request, const HashedKey& key,
    TimePoint now) {
  const GroupSpec& spec = *request.options.group;
  const bool created = it == gshard.groups.end();
  if (!created) {
    // Most member puts: a free index of a group that is filling. It stays
    // filling (and not empty) whatever the object's start does, so no
    // FillingDelta, cap check or erase: the bytes are the group's delta.
    GroupMeta& group = it->second;
    if (GroupMember* slot = group.TryReserveFree(spec, request.key)) {
      Result<ReplicaDescriptor> placed =
          PutStartObject(request, key, now, group.record);
      if (placed.ok()) {
        group.BindPut({slot, false}, key.hash, request.size);
        filling_group_bytes_.fetch_add(static_cast<int64_t>(request.size),
                                       std::memory_order_relaxed);
      } else {
        group.Unreserve(spec.group_index, request.key, 0);
      }
      return placed;
    }
  }
  if (created || it->second.Empty()) {
    // A new group: admitted only while filling groups leave DRAM room.
    const uint64_t capacity = nodes_.MemoryCapacity();
    const int64_t filling = filling_group_bytes_.load(std::memory_order_relaxed);
    if (filling + static_cast<int64_t>(request.size) >
        config_.group_filling_max_ratio * static_cast<double>(capacity)) {
      group_counters_.groups_refused_filling_full.fetch_add(
          1, std::memory_order_relaxed);
      return Status(ErrorReason::kFillingGroupsFull,
                    "groups still filling hold " + std::to_string(filling) +
                        " bytes of DRAM, the cap (group_filling_max_ratio); "
                        "complete or revoke them, or retry later");
    }
  }
  if (created) it = gshard.groups.try_emplace(GroupKey(id)).first;
  GroupMeta& group = it->second;
  FillingDelta filling(&filling_group_bytes_, &group);
  GroupMeta::Reservation reservation;
  Status reserved =
      GroupTable::Reserve(it, spec, request.key, now, id.hash, &reservation);
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
    gshard.groups.erase(it);
    it = gshard.groups.end();
  } else if (created && placed.ok()) {
    group_counters_.groups_created.fetch_add(1, std::memory_order_relaxed);
  }
  return placed;
}

void Master::CompleteGroups(const CompletedMembers& last_members) {
  for (const CompletedMember& last : last_members) {
    const GroupRecord& record = *last.group;
    const HashedKey id = record.hashed_id();
    GroupTable::Shard& gshard = groups_.ShardFor(id);
    MutexLock group_lock(&gshard.mu);
    auto it = gshard.groups.find(id.view(), id.hash);
    // Gone, or started afresh: the incarnation this member joined was
    // removed or expired and collected meanwhile, which removed its members
    // too (or will, at the next sweep).
    if (it == gshard.groups.end() || it->second.record.get() != &record) {
      continue;
    }
    GroupMeta& group = it->second;
    // Within one incarnation the index is still held by this very put, or
    // by nothing: a counted put cannot be revoked, and a member lost
    // meanwhile broke the group, which then takes no member until it has
    // none left and starts afresh with a new record.
    if (group.Find(last.index) == nullptr) continue;
    FillingDelta filling(&filling_group_bytes_, &group);
    // The group completing makes every member readable (through the
    // record): no pass over their stripes.
    if (group.CompleteWithLast(last.index, last.completed)) {
      group_counters_.groups_completed.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

Status Master::RevokeGrouped(const std::string& key, const GroupSpec& spec,
                             const ClientId* client) {
  GroupTable::Shard& gshard = groups_.ShardFor(spec.group_id);
  MutexLock group_lock(&gshard.mu);
  std::optional<uint64_t> revoked_bytes;
  MT_RETURN_IF_ERROR(RevokeStaged(key, spec, client, &revoked_bytes));
  auto it = gshard.groups.find(spec.group_id);
  if (revoked_bytes && it != gshard.groups.end()) {
    // The index may be put again; the group keeps filling.
    FillingDelta filling(&filling_group_bytes_, &it->second);
    it->second.Unreserve(spec.group_index, key, *revoked_bytes);
    if (it->second.Empty()) {
      filling.Dropped();
      gshard.groups.erase(it);
    }
  }
  return Status::Ok();
}

void Master::ForEachMemberKeyLocked(const GroupMeta& group,
                                    const std::string& extra, MemberKeyFn fn)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  std::vector<std::string> keys;
  group.ForEachMember([&](uint32_t, const GroupMember& member) {
    keys.push_back(group.KeyOf(member));
  });
  if (std::find(keys.begin(), keys.end(), extra) == keys.end()) {
    keys.push_back(extra);
  }
  std::vector<uint32_t> stripes;
  for (std::string_view k : keys) stripes.push_back(objects_.ShardIndex(k));
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  for (uint32_t s : stripes) objects_.shard(s).mu.Lock();
  for (std::string_view k : keys) fn(objects_.ShardFor(k), k);
  for (auto s = stripes.rbegin(); s != stripes.rend(); ++s) {
    objects_.shard(*s).mu.Unlock();
  }
}

void Master::ForEachMemberLocked(const GroupMeta& group, MemberFn fn)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // Member stripes in ascending index, each once: the documented order.
  // Every key end to end in one buffer (eviction rounds walk every complete
  // group: no allocation per member for groups of usual size), then views
  // into it once it no longer moves, with the hashes the puts recorded.
  absl::InlinedVector<char, 1024> names;
  absl::InlinedVector<size_t, 16> ends;
  group.ForEachMember([&](uint32_t, const GroupMember& member) {
    group.AppendKeyOf(member, names);
    ends.push_back(names.size());
  });
  absl::InlinedVector<HashedKey, 16> keys;
  absl::InlinedVector<uint32_t, 16> stripes;
  size_t begin = 0;
  size_t next_end = 0;
  group.ForEachMember([&](uint32_t, const GroupMember& member) {
    const std::string_view key(names.data() + begin, ends[next_end] - begin);
    begin = ends[next_end++];
    keys.push_back(member.key_hash != 0 ? HashedKey(key, member.key_hash)
                                        : HashedKey(key));
    stripes.push_back(objects_.ShardIndex(keys.back()));
  });
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  for (uint32_t s : stripes) objects_.shard(s).mu.Lock();
  size_t next = 0;
  // (The stripes taken above are what the analysis cannot follow.)
  group.ForEachMember([&](uint32_t index, const GroupMember&)
                          ABSL_NO_THREAD_SAFETY_ANALYSIS {
    const HashedKey& key = keys[next++];
    Shard& shard = objects_.ShardFor(key);
    auto it = shard.objects.find(key.view(), key.hash);
    // The key's object must still be this incarnation's member at this
    // index (records are per incarnation: a pointer comparison). Otherwise
    // it is gone, or the key now holds another object.
    if (it != shard.objects.end() && it->second.group == group.record &&
        it->second.group_index == index) {
      fn(shard, it);
    }
  });
  for (auto s = stripes.rbegin(); s != stripes.rend(); ++s) {
    objects_.shard(*s).mu.Unlock();
  }
}

Status Master::RemoveMembersLocked(GroupMeta& group, bool force) {
  const TimePoint now = clock_->Now();
  Status blocked;
  ForEachMemberLocked(group, [&](Shard&, ObjectMap::iterator it) {
    if (!blocked.ok()) return;
    if (it->second.PutInFlight()) {
      blocked = Status(ErrorReason::kObjectBusy,
                       "a put of member '" + it->first + "' is in flight");
    } else if (!force && it->second.Leased(now)) {
      blocked = Status(ErrorReason::kObjectLeased,
                       "a reader holds a lease on member '" + it->first + "'");
    }
  });
  if (!blocked.ok()) return blocked;
  ForEachMemberLocked(group, [this](Shard& shard, ObjectMap::iterator it)
                             ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu) {
    DropObjectLocked(shard, it);
    counters_.removes.fetch_add(1, std::memory_order_relaxed);
  });
  return Status::Ok();
}

std::vector<Status> Master::RemoveGroup(std::span<const std::string> group_ids,
                                        RemoveOptions options) {
  std::vector<Status> out;
  out.reserve(group_ids.size());
  for (const std::string& id : group_ids) out.push_back(RemoveGroupOne(id, options));
  return out;
}

Status Master::RemoveGroupOne(const std::string& group_id,
                              RemoveOptions options, const std::string* member,
                              uint32_t member_index) {
  GroupTable::Shard& gshard = groups_.ShardFor(group_id);
  MutexLock group_lock(&gshard.mu);
  auto it = gshard.groups.find(group_id);
  if (it == gshard.groups.end()) return GroupMissing(group_id);
  if (member != nullptr) {
    // Removing through a member: only the group that member belongs to,
    // not a newer group that took the same id since it was looked up.
    const GroupMember* holder = it->second.Find(member_index);
    if (holder == nullptr || !it->second.KeyIs(*holder, *member)) {
      return GroupMissing(group_id);
    }
  }
  MT_RETURN_IF_ERROR(RemoveMembersLocked(it->second, options.force));
  filling_group_bytes_.fetch_sub(
      static_cast<int64_t>(it->second.FillingDramBytes()),
      std::memory_order_relaxed);
  gshard.groups.erase(it);
  group_counters_.groups_collected.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

std::vector<Result<GroupDescription>> Master::GetGroup(
    std::span<const std::string> group_ids) const {
  std::vector<Result<GroupDescription>> out;
  out.reserve(group_ids.size());
  for (const std::string& id : group_ids) {
    GroupDescription d;
    {
      const GroupTable::Shard& gshard = groups_.ShardFor(id);
      MutexLock group_lock(&gshard.mu);
      auto it = gshard.groups.find(id);
      if (it == gshard.groups.end()) {
        out.emplace_back(GroupMissing(id));
        continue;
      }
      std::vector<GroupMemberView> members;
      d.status = it->second.ToStatus(id, &members);
      d.break_cause = it->second.break_cause;
      d.members.reserve(members.size());
      for (GroupMemberView& m : members) {
        d.members.push_back({m.index, std::move(m.key), m.present, {}});
      }
    }
    // Member tiers after the group stripe is released (object stripes alone).
    for (GroupDescription::Member& m : d.members) {
      const Shard& shard = objects_.ShardFor(m.key);
      MutexLock lock(&shard.mu);
      auto it = shard.objects.find(absl::string_view(m.key.data(), m.key.size()));
      if (it == shard.objects.end()) continue;
      for (Tier tier : {Tier::kMemory, Tier::kLocalDisk}) {
        if (it->second.HasComplete(tier)) m.tiers.push_back(tier);
      }
    }
    out.emplace_back(std::move(d));
  }
  return out;
}

void Master::LoseMembers(
    const std::vector<std::pair<GroupSpec, std::string>>& lost,
    BreakCause cause) {
  const TimePoint now = clock_->Now();
  for (const auto& [spec, key] : lost) {
    GroupTable::Shard& gshard = groups_.ShardFor(spec.group_id);
    MutexLock group_lock(&gshard.mu);
    auto it = gshard.groups.find(spec.group_id);
    if (it == gshard.groups.end()) continue;
    const GroupMember* member = it->second.Find(spec.group_index);
    if (member == nullptr || !it->second.KeyIs(*member, key)) continue;
    FillingDelta filling(&filling_group_bytes_, &it->second);
    // Breaking the group makes its members unreadable (through the record).
    if (it->second.Lose(spec.group_index, cause, now)) {
      group_counters_.Broken(cause).fetch_add(1, std::memory_order_relaxed);
    }
  }
}

size_t Master::SweepGroups() {
  const TimePoint now = clock_->Now();
  size_t swept = 0;
  for (uint32_t g = 0; g < groups_.shard_count(); ++g) {
    GroupTable::Shard& gshard = groups_.shard(g);
    MutexLock group_lock(&gshard.mu);
    for (auto it = gshard.groups.begin(); it != gshard.groups.end();) {
      auto current = it++;
      GroupMeta& group = current->second;
      FillingDelta filling(&filling_group_bytes_, &group);
      if (group.Expire(now, knobs_.group_fill_timeout())) {
        group_counters_.groups_expired.fetch_add(1, std::memory_order_relaxed);
        ++swept;
      }
      const bool ended = group.state == GroupState::kBroken ||
                         group.state == GroupState::kExpired;
      if (!ended) continue;
      // Expired groups lose their members at once; broken groups keep the
      // survivors for group_broken_ttl (an operator may still look).
      const bool collect = now - group.state_since >= knobs_.group_broken_ttl();
      if (group.state == GroupState::kBroken && !collect) continue;
      if (!RemoveMembersLocked(group, /*force=*/true).ok()) {
        continue;  // a member's put is still in flight: next sweep
      }
      group.DropAllMembers();  // the record stays; its members are gone
      if (collect) {
        filling.Dropped();
        gshard.groups.erase(current);
        group_counters_.groups_collected.fetch_add(1, std::memory_order_relaxed);
        ++swept;
      }
    }
  }
  return swept;
}

}  // namespace mooncake_tier
