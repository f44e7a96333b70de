#pragma once

// The part of the master that answers for objects once they are stored:
// reads (replica lists and their leases), existence probes, removal, and
// groups as operators and sweeps see them (object_service_groups.cc:
// removal of whole groups, loss of members, expiry and collection).
//
// Thread safety: thread-safe. A read's promotion gates run after its
// stripe is released (Promoter::NoteRead).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/master_state.h"
#include "core/promoter.h"
#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"
#include "protocol/messages.h"

namespace mooncake_tier {

class ObjectService {
 public:
  ObjectService(MasterState* state, Promoter* promoter);
  ObjectService(const ObjectService&) = delete;
  ObjectService& operator=(const ObjectService&) = delete;

  // See Master for each.
  std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys);
  size_t ReleaseLeases(std::span<const LeaseRelease> releases);
  std::vector<Result<ExistsInfo>> Exists(std::span<const std::string> keys);
  Result<PrefixInfo> ProbePrefix(std::span<const std::string> keys);
  std::vector<Status> Remove(std::span<const std::string> keys,
                             RemoveOptions options);
  std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) const;
  std::vector<Status> RemoveGroup(std::span<const std::string> group_ids,
                                  RemoveOptions options);
  size_t SweepGroups();
  // Records that members of groups lost their last replica or were found
  // corrupt: their groups turn broken.
  void LoseMembers(const std::vector<std::pair<GroupSpec, std::string>>& lost,
                   BreakCause cause);

 private:
  // Removes a group and every member. With `member`, only if the member at
  // `member_index` is still that key (GROUP_NOT_FOUND otherwise).
  Status RemoveGroupOne(const std::string& group_id, RemoveOptions options,
                        const std::string* member = nullptr,
                        uint32_t member_index = 0);
  // Removes every member object of `group` (leases and pins as Remove
  // with `force`); returns OBJECT_LEASED / OBJECT_BUSY without changing
  // anything when a member blocks it.
  Status RemoveMembersLocked(GroupSlot& group, bool force)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role);
  Result<ObjectReplicas> GetReplicaListOne(const std::string& key);
  // A reader's share of the object's lease (a new lease period if the
  // last one ended).
  void GrantLeaseLocked(ObjectMeta& meta, TimePoint now);
  // A read from DRAM: the first after a promotion counts it useful.
  void NotePromotionReadLocked(ObjectMeta& meta);
  // The read itself, under the key's stripe; an SSD-only hit sets
  // *candidate.
  Result<ObjectReplicas> ReadReplicas(
      const std::string& key, std::optional<PromotionCandidate>* candidate);
  // A read a client served from its location cache (ReleaseLeases with
  // no lease): recency and the promotion gate see it. False when the key
  // is not (or no longer) stored.
  bool NoteCachedRead(const std::string& key, TimePoint now);
  Result<ExistsInfo> ExistsOne(const std::string& key);
  // After a removal: waits until the nodes dropped from their DRAM
  // directories what it freed (DramDirectoryLog::WaitChangedSince); on
  // failure the removals that succeeded answer its error.
  void AwaitDrops(const DramDirectoryLog::Marks& before,
                  std::vector<Status>& out);
  Status RemoveOne(const std::string& key, RemoveOptions options);
  // Removes the object at `key` if it still carries `group`.
  Status RemoveObject(const std::string& key,
                      const std::optional<GroupSpec>& group,
                      RemoveOptions options);

  MasterState& s_;
  Promoter& promoter_;
  // MasterConfig::EffectiveLocationGrant(), and in whole milliseconds.
  const Duration location_grant_;
  const uint32_t location_grant_ms_;
  // Written by every read that opens a lease period, on every thread: on a
  // cache line of its own, or each grant would evict the two references
  // above, which every call reads (measured: single-key reads on two
  // threads 3% slower than before the parts were split out of Master).
  alignas(64) std::atomic<uint64_t> next_lease_id_{0};
};

}  // namespace mooncake_tier
