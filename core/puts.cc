// Puts (core/puts.h): start, end, revoke and the put timeout.

#include "core/puts.h"

#include <algorithm>
#include <limits>
#include <thread>

#include "core/validation.h"

namespace mooncake_tier {
namespace {

// A put waiting for DRAM looks again at least this often (real time), even
// when nothing woke it: the clock it reads its deadline from may be a
// test's.
constexpr Duration kPutWaitPoll = std::chrono::milliseconds(10);

}  // namespace

Puts::Puts(MasterState* state, Tiering* tiering, Offloader* offloader)
    : s_(*state), tiering_(*tiering), offloader_(*offloader) {}

std::vector<Result<ReplicaDescriptor>> Puts::PutStart(
    std::span<const PutStartRequest> requests, TimePoint wait_until) {
  // A grant's window counts from here, the call's arrival, as its client
  // counts it from its send: the time a put waited below (for the fence,
  // for room) is added to the window of what a later pass granted, so a
  // wait does not use up the time left to write.
  const TimePoint arrived = s_.clock->Now();
  // Every node with room registered again moments ago and may still take
  // late writes of earlier grants (NodeRegistry::Registration): wait that
  // out within the put's own wait, rather than fail or evict for it.
  if (std::optional<TimePoint> fence = s_.nodes.AllFencedUntil()) {
    const TimePoint started = s_.clock->Now();
    const RealDeadline real_end(started, std::min(wait_until, *fence));
    while (s_.clock->Now() < std::min(wait_until, *fence) &&
           !real_end.passed()) {
      std::this_thread::sleep_for(kPutWaitPoll);
    }
  }
  std::vector<uint8_t> waiting(requests.size(), 0);
  uint64_t seen = s_.space.generation();
  // Read before each pass: no grant of the pass is older, so the window
  // handed out never outlasts the grant.
  TimePoint pass_start = s_.clock->Now();
  std::vector<Result<ReplicaDescriptor>> out = PutStartPass(requests, waiting);
  for (Result<ReplicaDescriptor>& placed : out) {
    ExtendGrant(placed, pass_start - arrived);
  }
  // Back-pressure: a put that found DRAM full and no clean victim waits,
  // within its deadline, for writeback (or a reader, a task, another put)
  // to free room, and tries again each time something may have.
  const TimePoint started = s_.clock->Now();
  const RealDeadline real_end(started, wait_until);
  bool waited = false;
  std::vector<size_t> pending;
  std::vector<PutStartRequest> retry;
  while (true) {
    pending.clear();
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (waiting[i]) pending.push_back(i);
    }
    if (pending.empty()) break;
    const TimePoint now = s_.clock->Now();
    if (now >= wait_until || real_end.passed() || !tiering_.RoomMayCome())
      break;
    if (!waited) {
      s_.counters.put_waits.fetch_add(pending.size(),
                                      std::memory_order_relaxed);
      waited = true;
    }
    s_.space.WaitFor(seen, std::min<Duration>(kPutWaitPoll, wait_until - now));
    seen = s_.space.generation();
    retry.clear();
    for (size_t i : pending) retry.push_back(requests[i]);
    std::vector<uint8_t> still(retry.size(), 0);
    pass_start = s_.clock->Now();
    std::vector<Result<ReplicaDescriptor>> again = PutStartPass(retry, still);
    for (size_t j = 0; j < pending.size(); ++j) {
      ExtendGrant(again[j], pass_start - arrived);
      out[pending[j]] = std::move(again[j]);
      waiting[pending[j]] = still[j];
      if (!still[j]) RecordPutWait(s_.clock->Now() - started);
    }
  }
  const Duration waited_for = waited ? s_.clock->Now() - started : Duration{};
  for (size_t i : pending) {
    if (waited) RecordPutWait(waited_for);
    out[i] = tiering_.NoRoomStatus(requests[i].size, waited_for);
    CountPutRefused(out[i].status());
  }
  return out;
}

std::vector<Result<ReplicaDescriptor>> Puts::PutStartPass(
    std::span<const PutStartRequest> requests, std::vector<uint8_t>& waiting) {
  std::vector<Result<ReplicaDescriptor>> out;
  out.reserve(requests.size());
  // Members of one group next to each other (the usual batch: a block's
  // pieces in order) are put in one visit of their group's stripe.
  for (size_t first = 0; first < requests.size();) {
    const std::optional<GroupSpec>& group = requests[first].options.group;
    if (!group) {
      bool no_room = false;
      out.push_back(PutStartOne(requests[first], &no_room));
      waiting[first++] = no_room;
      continue;
    }
    size_t end = first + 1;
    while (end < requests.size() && requests[end].options.group &&
           requests[end].options.group->group_id == group->group_id) {
      ++end;
    }
    PutStartGroupRun(requests.subspan(first, end - first), out,
                     std::span<uint8_t>(waiting).subspan(first, end - first));
    first = end;
  }
  return out;
}

uint32_t Puts::WriteWithinMs(Duration elapsed) const {
  const Duration left = s_.config.EffectiveGrantWindow() - elapsed;
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
  return static_cast<uint32_t>(
      std::clamp<int64_t>(ms, 0, std::numeric_limits<uint32_t>::max()));
}

void Puts::ExtendGrant(Result<ReplicaDescriptor>& placed, Duration waited) {
  if (!placed.ok() || waited <= Duration::zero()) return;
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(waited).count();
  placed->write_within_ms = static_cast<uint32_t>(std::min<int64_t>(
      placed->write_within_ms + ms, std::numeric_limits<uint32_t>::max()));
}

void Puts::RecordPutWait(Duration waited) {
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(waited).count();
  s_.counters.put_wait_us.fetch_add(
      static_cast<uint64_t>(std::max<int64_t>(us, 0)),
      std::memory_order_relaxed);
  size_t bucket = 0;
  while (bucket < kPutWaitBounds.size() && waited > kPutWaitBounds[bucket]) {
    ++bucket;
  }
  s_.counters.put_wait_buckets[bucket].fetch_add(1, std::memory_order_relaxed);
}

std::vector<Status> Puts::PutEnd(const ClientId& client,
                                 std::span<const std::string> keys) {
  // The object half per key (one lookup each; a member is counted present
  // there), then the group half for each group whose last member this
  // batch ended. In between that member's object is complete but its
  // group is still filling, like any member whose PutEnd has not returned.
  CompletedMembers members;
  RecordedPlacements recorded;
  std::optional<Recorded> one;
  size_t index = 0;
  std::vector<Status> out = ForEachInBatch(keys, [&](const std::string& key) {
    one.reset();
    Status s = CompletePut(client, key, &members, &one);
    if (one) {
      one->index = index;
      recorded.push_back(*one);
    }
    ++index;
    return s;
  });
  if (!members.empty()) CompleteGroups(members);
  if (!recorded.empty()) WaitRecorded(recorded, out);
  return out;
}

void Puts::WaitRecorded(const RecordedPlacements& recorded,
                        std::vector<Status>& out) {
  // One wait per node, for its highest number: the node records in order.
  absl::InlinedVector<std::pair<NodeId, uint64_t>, 4> last;
  for (const Recorded& r : recorded) {
    auto it = std::find_if(last.begin(), last.end(),
                           [&](const auto& p) { return p.first == r.node; });
    if (it == last.end()) {
      last.emplace_back(r.node, r.seq);
    } else {
      it->second = std::max(it->second, r.seq);
    }
  }
  for (const auto& [node, seq] : last) {
    const Status s = s_.directory.WaitRecorded(
        node, seq, s_.config.directory_record_timeout);
    if (s.ok()) continue;
    s_.counters.put_unrecorded.fetch_add(1, std::memory_order_relaxed);
    const Status answer(s.reason(),
                        "stored, but " + s.message() +
                            " (the object may not survive a master restart)");
    for (const Recorded& r : recorded) {
      if (r.node == node) out[r.index] = answer;
    }
  }
}

std::vector<Status> Puts::PutRevoke(const ClientId& client,
                                    std::span<const std::string> keys) {
  return ForEachInBatch(
      keys, [&](const std::string& key) { return PutRevokeOne(client, key); });
}

Status Puts::ValidatePutStart(const PutStartRequest& request,
                              const Status* group_id_valid) const {
  MT_RETURN_IF_ERROR(ValidateKey(request.key));
  if (request.size == 0) {
    return Status(ErrorReason::kInvalidSize, "object size must be > 0");
  }
  if (request.options.group) {
    if (group_id_valid != nullptr) {
      // Tested, not copied: only an error is copied into the answer.
      if (!group_id_valid->ok()) return *group_id_valid;
      MT_RETURN_IF_ERROR(ValidateGroupShape(*request.options.group));
    } else {
      MT_RETURN_IF_ERROR(ValidateGroupSpec(*request.options.group));
    }
    if (request.options.group->group_size > s_.config.max_group_size) {
      return Status(ErrorReason::kInvalidGroup,
                    "group_size " +
                        std::to_string(request.options.group->group_size) +
                        " is above max_group_size " +
                        std::to_string(s_.config.max_group_size));
    }
  }
  const uint64_t largest = s_.nodes.LargestSegment();
  if (largest == 0) {
    return Status(ErrorReason::kNoSpace,
                  "no node with a DRAM segment is registered");
  }
  if (request.size > largest) {
    // No eviction could ever make room: do not evict for it.
    return Status(ErrorReason::kNoSpace,
                  "object of " + std::to_string(request.size) +
                      " bytes is larger than any node's DRAM segment");
  }
  return Status::Ok();
}

void Puts::CountPutRefused(const Status& refused) {
  (refused.reason() == ErrorReason::kNoSpace ? s_.counters.put_no_space
                                             : s_.counters.put_rejected)
      .fetch_add(1, std::memory_order_relaxed);
}

Result<ReplicaDescriptor> Puts::PutStartOne(const PutStartRequest& request,
                                            bool* no_room) {
  if (Status valid = ValidatePutStart(request); !valid.ok()) {
    CountPutRefused(valid);
    return valid;
  }
  const HashedKey key(request.key);
  Result<ReplicaDescriptor> placed =
      PutStartObject(request, key, s_.clock->Now());
  // A full tier drops clean victims at once and places again; no lock is
  // held meanwhile.
  if (!placed.ok() && placed.status().reason() == ErrorReason::kNoSpace &&
      tiering_.MakeRoom(request.size)) {
    placed = PutStartObject(request, key, s_.clock->Now());
  }
  if (!placed.ok() && placed.status().reason() == ErrorReason::kNoSpace) {
    *no_room = true;  // counted when the caller gives up waiting
    return placed;
  }
  CountPutStart(placed);
  return placed;
}

void Puts::PutStartGroupRun(std::span<const PutStartRequest> run,
                            std::vector<Result<ReplicaDescriptor>>& out,
                            std::span<uint8_t> no_room) {
  // Every request of the run carries the same group id: checked and hashed
  // once for all of them.
  const std::string& group_id = run.front().options.group->group_id;
  const Status id_valid = ValidateGroupId(group_id);
  const HashedKey id(group_id);
  // As PutStartOne, room is made once for a member that finds none, and no
  // lock is held meanwhile: the run leaves the group stripe for it and
  // comes back to the member that asked.
  bool tried_room = false;  // run[i] already had its try
  for (size_t i = 0; i < run.size();) {
    uint64_t make_room = 0;
    // One lookup for the run's members (one hash for stripe and lookup).
    s_.index.UpdateGroup(
        id,
        [&](GroupSlot& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role) {
          for (; i < run.size(); ++i, tried_room = false) {
            // Checked here rather than before the lock: the checks take no
            // lock and cost less than keeping their answers.
            if (Status valid = ValidatePutStart(run[i], &id_valid);
                !valid.ok()) {
              CountPutRefused(valid);
              out.emplace_back(std::move(valid));
              continue;
            }
            const HashedKey key(run[i].key);
            Result<ReplicaDescriptor> placed =
                PutStartMemberLocked(group, run[i], key, s_.clock->Now());
            const bool full = !placed.ok() &&
                              placed.status().reason() == ErrorReason::kNoSpace;
            if (full && !tried_room) {
              make_room = run[i].size;
              break;
            }
            if (full) {
              no_room[i] = 1;  // counted when the caller gives up waiting
            } else {
              CountPutStart(placed);
            }
            out.push_back(std::move(placed));
          }
        });
    if (make_room != 0) {
      tiering_.MakeRoom(make_room);
      tried_room = true;
    }
  }
}

Result<ReplicaDescriptor> Puts::PutStartObject(const PutStartRequest& request,
                                               const HashedKey& key,
                                               TimePoint now, GroupRef group) {
  return s_.index.Update(
      key, [&](ObjectSlot& object) -> Result<ReplicaDescriptor> {
        if (object) {
          ObjectMeta& meta = *object;
          Replica* staged = meta.StagedPut();
          if (staged != nullptr && !request.client.empty() &&
              meta.put_owner == request.client && meta.size == request.size &&
              meta.HasGroup(request.options.group)) {
            // The same client retrying the same put: what is left of its
            // grant.
            ReplicaDescriptor again = staged->desc;
            again.write_within_ms = WriteWithinMs(now - meta.put_started);
            return again;
          }
          return Status(ErrorReason::kObjectExists,
                        "key already stored or being put");
        }
        MT_ASSIGN_OR_RETURN(ReplicaDescriptor desc,
                            s_.nodes.AllocateMemory(
                                request.size, request.options.preferred_node));
        desc.id = s_.NextReplicaId();
        desc.state = ReplicaState::kProcessing;
        // Built in place: the map's slot is the object.
        ObjectMeta& meta = object.Insert();
        meta.size = request.size;
        meta.replicas.push_back(Replica{desc, 0});
        if (group != nullptr) {
          meta.group = std::move(group);
          meta.group_index = request.options.group->group_index;
        }
        meta.put_owner = request.client;
        meta.put_started = now;
        meta.last_access = now;
        meta.hard_pin = request.options.hard_pin;
        object.MarkPutPending(now);
        desc.write_within_ms = WriteWithinMs(Duration::zero());
        return desc;
      });
}

Status Puts::CompletePut(const ClientId& client, const std::string& key,
                         CompletedMembers* members,
                         std::optional<Recorded>* recorded) {
  return s_.index.Update(
      key,
      [&](ObjectSlot& object)
          ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) -> Status {
            if (!object) {
              return Status(ErrorReason::kObjectNotFound,
                            "no put in flight for key (revoked or timed out?)");
            }
            ObjectMeta& meta = *object;
            Replica* staged = meta.StagedPut();
            if (staged == nullptr) {
              if (meta.HasComplete(Tier::kMemory))
                return Status::Ok();  // repeated end
              return Status(ErrorReason::kObjectNotFound,
                            "no put in flight for key");
            }
            if (!client.empty() && !meta.put_owner.empty() &&
                meta.put_owner != client) {
              return Status(ErrorReason::kObjectBusy,
                            "the put in flight belongs to another client");
            }
            staged->desc.state = ReplicaState::kComplete;
            const ReplicaDescriptor& d = staged->desc;
            if (s_.directory.Tracks(d.node)) {
              if (const uint64_t seq = s_.directory.Add(
                      d.node,
                      DramEntry{key, d.offset, d.size, meta.group_spec()})) {
                *recorded = Recorded{0, d.node, seq};
              }
            }
            meta.put_owner.clear();
            const TimePoint now = s_.clock->Now();
            meta.last_access = now;
            object.ClearPutPending();
            s_.counters.put_completed.fetch_add(1, std::memory_order_relaxed);
            // A member counts itself present here, under its own stripe; only
            // the put that every other member's has preceded goes on to the
            // group stripe, to complete the group.
            if (meta.group && meta.group->CountPresent(meta.group_index)) {
              members->push_back(
                  CompletedMember{meta.group, meta.group_index, now});
            }
            if (s_.config.offload_mode == OffloadMode::kWriteThrough &&
                s_.NodeHasSsd(staged->desc.node)) {
              // Written back at once. Not queued (QUEUE_FULL, counted): a
              // memory round writes it back later, as every dirty unit under
              // write_through.
              offloader_.QueueLocked(key, meta, *staged, OffloadIntent::kCopy)
                  .status()
                  .IgnoreError();
            }
            return Status::Ok();
          });
}

Status Puts::PutRevokeOne(const ClientId& client, const std::string& key) {
  std::optional<GroupSpec> group = s_.GroupOf(key);
  if (!group) return RevokeStaged(key, std::nullopt, &client, nullptr);
  return RevokeGrouped(key, *group, &client);
}

Status Puts::RevokeStaged(const std::string& key,
                          const std::optional<GroupSpec>& group,
                          const ClientId* client,
                          std::optional<uint64_t>* revoked_bytes) {
  return s_.index.Update(
      key,
      [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
          object_stripe_role) -> Status {
        Replica* staged =
            !object || !object->HasGroup(group) ? nullptr : object->StagedPut();
        if (staged == nullptr) {
          return Status(ErrorReason::kObjectNotFound,
                        "no put in flight for key");
        }
        ObjectMeta& meta = *object;
        if (client == nullptr) {
          // The put timeout: only a put that is still stalled.
          const std::optional<TimePoint> pending = object.PutPendingSince();
          if (!pending || s_.clock->Now() - *pending < s_.config.put_timeout) {
            return Status(ErrorReason::kObjectBusy,
                          "the put is no longer stalled");
          }
        } else if (!client->empty() && !meta.put_owner.empty() &&
                   meta.put_owner != *client) {
          return Status(ErrorReason::kObjectBusy,
                        "the put in flight belongs to another client");
        }
        const Replica replica = *staged;
        meta.Erase(replica.desc.id);
        s_.ReleaseReplicaLocked(meta, key, replica, /*node_alive=*/true);
        meta.put_owner.clear();
        object.ClearPutPending();
        if (meta.replicas.empty()) {
          object.Erase();
        } else if (meta.group != nullptr) {
          // The object outlives its put (it had another copy) but no longer
          // holds its index: it leaves the group's incarnation, so the group
          // completing never makes it readable.
          meta.group = GroupRecord::Make(meta.group->group_id(),
                                         meta.group->group_size());
        }
        (client == nullptr ? s_.counters.put_timed_out
                           : s_.counters.put_revoked)
            .fetch_add(1, std::memory_order_relaxed);
        if (revoked_bytes != nullptr) *revoked_bytes = replica.desc.size;
        return Status::Ok();
      });
}

size_t Puts::ReapStalledPuts() {
  // Collect first: a grouped member's revocation takes its group stripe,
  // which ranks before the object stripes.
  const TimePoint now = s_.clock->Now();
  std::vector<std::pair<std::string, std::optional<GroupSpec>>> stalled;
  s_.index.ForEachPendingPut(
      [&](const std::string& key, TimePoint started, const ObjectMeta* object) {
        if (now - started < s_.config.put_timeout) return;
        stalled.emplace_back(
            key, object == nullptr ? std::nullopt : object->group_spec());
      });
  size_t reaped = 0;
  for (const auto& [key, group] : stalled) {
    const Status s = group ? RevokeGrouped(key, *group, nullptr)
                           : RevokeStaged(key, std::nullopt, nullptr, nullptr);
    if (s.ok()) ++reaped;
  }
  return reaped;
}

}  // namespace mooncake_tier
