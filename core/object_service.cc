// ObjectService (core/object_service.h): reads, leases, existence probes
// and removal of objects.

#include "core/object_service.h"

#include <algorithm>

#include "core/validation.h"

namespace mooncake_tier {

ObjectService::ObjectService(MasterState* state, Promoter* promoter)
    : s_(*state),
      promoter_(*promoter),
      location_grant_(std::chrono::floor<std::chrono::milliseconds>(
          state->config.EffectiveLocationGrant())),
      location_grant_ms_(static_cast<uint32_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(location_grant_)
              .count())) {}

std::vector<Result<ObjectReplicas>> ObjectService::GetReplicaList(
    std::span<const std::string> keys) {
  return ForEachInBatch(
      keys, [this](const std::string& key) { return GetReplicaListOne(key); });
}

std::vector<Result<ExistsInfo>> ObjectService::Exists(
    std::span<const std::string> keys) {
  return ForEachInBatch(
      keys, [this](const std::string& key) { return ExistsOne(key); });
}

std::vector<Status> ObjectService::Remove(std::span<const std::string> keys,
                                          RemoveOptions options) {
  const DramDirectoryLog::Marks before = s_.directory.Mark();
  std::vector<Status> out = ForEachInBatch(
      keys, [&](const std::string& key) { return RemoveOne(key, options); });
  AwaitDrops(before, out);
  return out;
}

void ObjectService::AwaitDrops(const DramDirectoryLog::Marks& before,
                               std::vector<Status>& out) {
  // A removal is answered once the nodes dropped what it freed from their
  // DRAM directories: a master restarted after the answer does not bring
  // the object back (ha.md).
  const Status dropped =
      s_.directory.WaitChangedSince(before, s_.config.directory_record_timeout);
  if (dropped.ok()) return;
  for (Status& s : out) {
    if (s.ok()) {
      s = Status(dropped.reason(),
                 "removed, but " + dropped.message() +
                     " (the removal may not survive a master restart)");
    }
  }
}

Result<ObjectReplicas> ObjectService::GetReplicaListOne(
    const std::string& key) {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  std::optional<PromotionCandidate> candidate;
  Result<ObjectReplicas> out = ReadReplicas(key, &candidate);
  // After the stripe is released: the gates may look at other stripes and
  // a group's promotion takes its group stripe first.
  promoter_.NoteRead(key, out, candidate);
  return out;
}

Result<ObjectReplicas> ObjectService::ReadReplicas(
    const std::string& key, std::optional<PromotionCandidate>* candidate) {
  return s_.index.Update(
      key, [&](ObjectSlot& object) -> Result<ObjectReplicas> {
        if (!object) {
          s_.counters.get_miss.fetch_add(1, std::memory_order_relaxed);
          return Status(ErrorReason::kObjectNotFound,
                        "no object with this key");
        }
        ObjectMeta& meta = *object;
        if (meta.group && !meta.GroupReadable() &&
            s_.config.group_visibility == GroupVisibility::kAllOrNothing &&
            meta.HasComplete()) {
          s_.counters.get_group_incomplete.fetch_add(1,
                                                     std::memory_order_relaxed);
          return Status(
              ErrorReason::kGroupIncomplete,
              "group '" + std::string(meta.group->group_id()) +
                  "' is not complete; its members are not readable yet");
        }
        ObjectReplicas out;
        out.size = meta.size;
        out.group = meta.group_spec();
        for (Tier tier : {Tier::kMemory, Tier::kLocalDisk}) {
          for (const Replica& r : meta.replicas) {
            if (r.desc.tier == tier &&
                r.desc.state == ReplicaState::kComplete) {
              out.replicas.push_back(r.desc);
            }
          }
        }
        if (out.replicas.empty()) {
          s_.counters.get_miss.fetch_add(1, std::memory_order_relaxed);
          return Status(ErrorReason::kObjectNotReady,
                        "the object's put has not completed");
        }
        const TimePoint now = s_.clock->Now();
        GrantLeaseLocked(meta, now);
        meta.last_access = now;
        out.lease_deadline = meta.lease_deadline;
        out.lease_id = meta.lease_id;
        const bool ssd_only = out.replicas.front().tier == Tier::kLocalDisk;
        if (!ssd_only && location_grant_.count() > 0) {
          // The DRAM copy's range stays this object's until the grant runs
          // out, even if the copy goes first (MasterState::ReleaseReplica).
          meta.read_grant_until =
              std::max(meta.read_grant_until, now + location_grant_);
          out.location_valid_ms = location_grant_ms_;
          s_.counters.location_grants.fetch_add(1, std::memory_order_relaxed);
        }
        (ssd_only ? s_.counters.get_local_disk_hit : s_.counters.get_memory_hit)
            .fetch_add(1, std::memory_order_relaxed);
        if (!ssd_only) NotePromotionReadLocked(meta);
        if (ssd_only) {
          candidate->emplace(PromotionCandidate{
              key, meta.group_spec(), meta.size, out.replicas.front().node});
        }
        return out;
      });
}

void ObjectService::NotePromotionReadLocked(ObjectMeta& meta) {
  if (!meta.promoted_unread) return;
  meta.promoted_unread = false;
  s_.counters.promotion_useful.fetch_add(1, std::memory_order_relaxed);
}

void ObjectService::GrantLeaseLocked(ObjectMeta& meta, TimePoint now) {
  if (meta.lease_deadline <= now) {
    // A new lease period: readers of an ended one release nothing of it.
    if (meta.leases > 0) {
      s_.counters.leases_expired.fetch_add(1, std::memory_order_relaxed);
    }
    meta.leases = 0;
    meta.lease_id = next_lease_id_.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  if (meta.leases < UINT32_MAX) ++meta.leases;
  meta.lease_deadline =
      std::max(meta.lease_deadline, now + s_.config.lease_ttl);
}

size_t ObjectService::ReleaseLeases(std::span<const LeaseRelease> releases) {
  size_t released = 0;
  uint64_t cached_reads = 0;
  const TimePoint now = s_.clock->Now();
  for (const LeaseRelease& release : releases) {
    if (release.lease_id == 0) {
      cached_reads += NoteCachedRead(release.key, now) ? 1 : 0;
      continue;
    }
    s_.index.Update(release.key, [&](ObjectSlot& object) {
      if (!object) return;
      ObjectMeta& meta = *object;
      if (meta.lease_id != release.lease_id || !meta.Leased(now)) return;
      if (--meta.leases == 0) meta.lease_deadline = now;  // the period ends
      ++released;
    });
  }
  if (released > 0) {
    s_.counters.leases_released.fetch_add(released, std::memory_order_relaxed);
    s_.space.Notify();  // a leased victim may be evictable now
  }
  if (cached_reads > 0) {
    s_.counters.cached_reads_reported.fetch_add(cached_reads,
                                                std::memory_order_relaxed);
  }
  return released;
}

bool ObjectService::NoteCachedRead(const std::string& key, TimePoint now) {
  if (!ValidateKey(key).ok()) return false;
  std::optional<GroupSpec> group;
  const bool found = s_.index.Update(key, [&](ObjectSlot& object) {
    if (!object) return false;
    // Reported a moment after the read: never older than a real access.
    object->last_access = std::max(object->last_access, now);
    NotePromotionReadLocked(*object);  // cached locations are DRAM's
    group = object->group_spec();
    return true;
  });
  if (!found) return false;
  // The promotion gate sees it as it sees a DRAM hit from the master.
  ObjectReplicas read;
  read.group = std::move(group);
  promoter_.NoteRead(key, read, std::nullopt);
  return true;
}

Result<PrefixInfo> ObjectService::ProbePrefix(
    std::span<const std::string> keys) {
  for (size_t i = 0; i < keys.size(); ++i) {
    const Status valid = ValidateKey(keys[i]);
    if (!valid.ok()) {
      return Status(valid.reason(), "key " + std::to_string(i) +
                                        " of the prefix: " + valid.message());
    }
  }
  // No keys is a client's health check: answered, not counted.
  if (!keys.empty()) {
    s_.counters.prefix_probes.fetch_add(1, std::memory_order_relaxed);
  }
  PrefixInfo prefix;
  for (const std::string& key : keys) {
    std::optional<uint64_t> size;
    bool in_memory = false;
    s_.index.Read(key, [&](const ObjectMeta* meta) {
      // Readable as a get would find it: a complete copy and, for a group
      // member, a complete group (else the get answers GROUP_INCOMPLETE).
      if (meta != nullptr && meta->HasComplete() &&
          (meta->group == nullptr || meta->GroupReadable())) {
        size = meta->size;
        in_memory = meta->HasComplete(Tier::kMemory);
      }
      return GroupRef();
    });
    if (!size) break;
    ++prefix.length;
    prefix.bytes += *size;
    if (in_memory) prefix.memory_bytes += *size;
  }
  return prefix;
}

Result<ExistsInfo> ObjectService::ExistsOne(const std::string& key) {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  s_.counters.exists_calls.fetch_add(1, std::memory_order_relaxed);
  ExistsInfo info;
  const GroupRef group = s_.index.Read(key, [&](const ObjectMeta* meta) {
    if (meta == nullptr) return GroupRef();
    info.exists = meta->HasComplete();
    info.size = meta->size;
    if (meta->GroupReadable()) {
      // Readable means complete: every member present. No second lookup,
      // and no copy of the id: the answer shares the record's.
      info.group = meta->group->CompleteStatus();
      return GroupRef();
    }
    return meta->group;
  });
  // Read after the object's stripe is released (groups rank first); the two
  // halves may be a moment apart, which a probe tolerates.
  if (group) info.group = s_.index.FindGroup(group->hashed_id());
  return info;
}

Status ObjectService::RemoveOne(const std::string& key, RemoveOptions options) {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  std::optional<GroupSpec> group = s_.GroupOf(key);
  if (!group) return RemoveObject(key, std::nullopt, options);
  if (s_.config.group_remove_policy == GroupRemovePolicy::kGroup) {
    Status removed =
        RemoveGroupOne(group->group_id, options, &key, group->group_index);
    // A member whose group is no longer booked goes alone.
    if (removed.reason() != ErrorReason::kGroupNotFound) return removed;
  }
  MT_RETURN_IF_ERROR(RemoveObject(key, group, options));
  LoseMembers({{*group, key}}, BreakCause::kRemoved);
  return Status::Ok();
}

Status ObjectService::RemoveObject(const std::string& key,
                                   const std::optional<GroupSpec>& group,
                                   RemoveOptions options) {
  return s_.index.Update(
      key,
      [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
          object_stripe_role) -> Status {
        if (!object || !object->HasGroup(group)) {
          return Status(ErrorReason::kObjectNotFound,
                        "no object with this key");
        }
        const ObjectMeta& meta = *object;
        if (meta.PutInFlight()) {
          return Status(ErrorReason::kObjectBusy,
                        "a put of this key is in flight; revoke it or wait for "
                        "the put timeout");
        }
        const TimePoint now = s_.clock->Now();
        if (!options.force && meta.Leased(now)) {
          return Status(ErrorReason::kObjectLeased,
                        "a reader holds a lease on this object" +
                            meta.LeaseEndsNote(now) + "; retry then or force");
        }
        s_.DropObjectLocked(object);
        s_.counters.removes.fetch_add(1, std::memory_order_relaxed);
        return Status::Ok();
      });
}

}  // namespace mooncake_tier
