#pragma once

// Puts: the part of the master that places new objects (docs/design/core.md
// "Puts, leases, removal", tiering.md for a put into full DRAM). A put
// starts with DRAM reserved and a processing replica, and ends complete
// (visible), revoked, or reaped after the put timeout. Group members
// reserve their index under the group's stripe and count themselves
// present at their end; the last one completes the group (puts_groups.cc,
// docs/design/groups.md).
//
// Thread safety: thread-safe. PutStart may block while it waits for room
// (never holding a lock).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "base/clock.h"
#include "core/master_state.h"
#include "core/offloader.h"
#include "core/tiering.h"
#include "mooncake_tier/status.h"
#include "protocol/messages.h"

namespace mooncake_tier {

class Puts {
 public:
  Puts(MasterState* state, Tiering* tiering, Offloader* offloader);
  Puts(const Puts&) = delete;
  Puts& operator=(const Puts&) = delete;

  // See Master: PutStart, PutEnd, PutRevoke, ReapStalledPuts.
  std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests, TimePoint wait_until);
  std::vector<Status> PutEnd(const ClientId& client,
                             std::span<const std::string> keys);
  std::vector<Status> PutRevoke(const ClientId& client,
                                std::span<const std::string> keys);
  size_t ReapStalledPuts();

 private:
  // Why `request` cannot be put at all (OK when it may be tried).
  // `group_id_valid`, if given, is ValidateGroupId of the request's group
  // id, checked once for a run of members sharing it.
  Status ValidatePutStart(const PutStartRequest& request,
                          const Status* group_id_valid = nullptr) const;
  // Book a put start's outcome in the counters.
  void CountPutStart(const Result<ReplicaDescriptor>& placed) {
    if (placed.ok()) {
      s_.counters.put_started.fetch_add(1, std::memory_order_relaxed);
    } else {
      CountPutRefused(placed.status());
    }
  }
  void CountPutRefused(const Status& refused);
  // One try at every request, in order; sets waiting[i] for a request that
  // found no room (its result is then a NO_SPACE not yet counted).
  std::vector<Result<ReplicaDescriptor>> PutStartPass(
      std::span<const PutStartRequest> requests, std::vector<uint8_t>& waiting);
  void RecordPutWait(Duration waited);
  // What is left of a grant `elapsed` after it was made, in milliseconds
  // (ReplicaDescriptor::write_within_ms).
  uint32_t WriteWithinMs(Duration elapsed) const;
  // A granted `placed` (errors pass) whose pass began `waited` after the
  // call arrived: its window, counted from the grant, now counts from the
  // arrival. Rounds down, so the window never outlasts the grant's.
  static void ExtendGrant(Result<ReplicaDescriptor>& placed, Duration waited);
  // A put of an object that is no group member. *no_room: it found no
  // room even after MakeRoom.
  Result<ReplicaDescriptor> PutStartOne(const PutStartRequest& request,
                                        bool* no_room);
  // Consecutive members of one group (`run`, all carrying the same group
  // id), appended to `out` in order: one visit of the group stripe for the
  // run, left only for MakeRoom when a member finds no space. no_room[i]
  // as PutStartOne's.
  void PutStartGroupRun(std::span<const PutStartRequest> run,
                        std::vector<Result<ReplicaDescriptor>>& out,
                        std::span<uint8_t> no_room);
  // The object half of a put start: NO_SPACE without evicting. `key` is
  // request.key with its hash; `now` the time of the call; `group` the
  // record of the group the member joins (null: not a member).
  Result<ReplicaDescriptor> PutStartObject(const PutStartRequest& request,
                                           const HashedKey& key, TimePoint now,
                                           GroupRef group = nullptr);
  // Reserves the member's index, then starts the object. `group` is the
  // slot of the request's group id, looked up once for a run of members:
  // the call may create or erase its entry.
  Result<ReplicaDescriptor> PutStartMemberLocked(GroupSlot& group,
                                                 const PutStartRequest& request,
                                                 const HashedKey& key,
                                                 TimePoint now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role);
  // A group member whose put this call completed.
  struct CompletedMember {
    GroupRef group;
    uint32_t index = 0;
    TimePoint completed;
  };
  using CompletedMembers = absl::InlinedVector<CompletedMember, 8>;
  // The object half of PutEnd, under the key's stripe alone: completes the
  // staged DRAM replica, and a group member counts itself present in its
  // group's record. It appends the member to *members when its put is the
  // group's last (GroupRecord::CountPresent); the caller then completes
  // those groups with CompleteGroups.
  // A committed placement its node lists in its DRAM directory: PutEnd
  // answers once the node recorded it.
  struct Recorded {
    size_t index;  // in the PutEnd batch
    NodeId node;
    uint64_t seq;
  };
  using RecordedPlacements = absl::InlinedVector<Recorded, 8>;
  Status CompletePut(const ClientId& client, const std::string& key,
                     CompletedMembers* members,
                     std::optional<Recorded>* recorded);
  // Waits for every node of `recorded` to record its placements; a put
  // whose node did not gets that node's error.
  void WaitRecorded(const RecordedPlacements& recorded,
                    std::vector<Status>& out);
  // The group half of PutEnd, under each group's stripe: the last member
  // becomes present if its index is still held (by that put: see
  // CompleteGroups), and a filling group complete, which makes every member
  // readable (one store into the group's record).
  void CompleteGroups(const CompletedMembers& last_members);
  Status PutRevokeOne(const ClientId& client, const std::string& key);
  // Frees a staged put of `key` (still carrying `group`). With a null
  // client, only if it is stalled past the put timeout. On success
  // *revoked_bytes (when given) is the DRAM the put had staged.
  Status RevokeStaged(const std::string& key,
                      const std::optional<GroupSpec>& group,
                      const ClientId* client,
                      std::optional<uint64_t>* revoked_bytes);
  Status RevokeGrouped(const std::string& key, const GroupSpec& group,
                       const ClientId* client);

  MasterState& s_;
  Tiering& tiering_;
  Offloader& offloader_;
};

}  // namespace mooncake_tier
