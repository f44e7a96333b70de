#include "core/object_table.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "absl/hash/hash.h"

namespace mooncake_tier {

Replica* ObjectMeta::Find(ReplicaId id) {
  for (Replica& r : replicas) {
    if (r.desc.id == id) return &r;
  }
  return nullptr;
}

Replica* ObjectMeta::FindTier(Tier tier, ReplicaState state) {
  for (Replica& r : replicas) {
    if (r.desc.tier == tier && r.desc.state == state) return &r;
  }
  return nullptr;
}

Replica* ObjectMeta::FindDisk(NodeId node) {
  for (Replica& r : replicas) {
    if (r.desc.tier == Tier::kLocalDisk && r.desc.node == node) return &r;
  }
  return nullptr;
}

bool ObjectMeta::HasComplete(Tier tier) const {
  for (const Replica& r : replicas) {
    if (r.desc.tier == tier && r.desc.state == ReplicaState::kComplete) {
      return true;
    }
  }
  return false;
}

bool ObjectMeta::HasComplete() const {
  for (const Replica& r : replicas) {
    if (r.desc.state == ReplicaState::kComplete) return true;
  }
  return false;
}

std::string ObjectMeta::LeaseEndsNote(TimePoint now) const {
  const int64_t ms = std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::milliseconds>(lease_deadline -
                                                               now)
             .count());
  // Tenths of a second: leases last seconds.
  const int64_t tenths = (ms + 99) / 100;
  return "; the lease ends within " + std::to_string(tenths / 10) + "." +
         std::to_string(tenths % 10) +
         " s at the latest (sooner when the reader releases it)";
}

bool ObjectMeta::AnyPinned() const {
  for (const Replica& r : replicas) {
    if (r.refcnt > 0) return true;
  }
  return false;
}

std::optional<Replica> ObjectMeta::Erase(ReplicaId id) {
  for (auto it = replicas.begin(); it != replicas.end(); ++it) {
    if (it->desc.id == id) {
      Replica r = *it;
      replicas.erase(it);
      return r;
    }
  }
  return std::nullopt;
}

std::optional<GroupSpec> ObjectMeta::group_spec() const {
  if (group == nullptr) return std::nullopt;
  return GroupSpec{std::string(group->group_id()), group->group_size(),
                   group_index};
}

bool ObjectMeta::HasGroup(const std::optional<GroupSpec>& spec) const {
  if (group == nullptr || !spec) return group == nullptr && !spec;
  return group_index == spec->group_index &&
         group->group_size() == spec->group_size &&
         group->group_id() == spec->group_id;
}

ObjectTable::ObjectTable(uint32_t shard_count) {
  shards_.reserve(shard_count);
  for (uint32_t i = 0; i < shard_count; ++i) {
    shards_.push_back(std::make_unique<Shard>());
  }
}

uint32_t ObjectTable::ShardIndex(std::string_view key) const {
  return ShardIndex(HashedKey(key));
}

size_t ObjectTable::Size() const {
  size_t n = 0;
  for (const auto& shard : shards_) {
    MutexLock lock(&shard->mu);
    n += shard->objects.size();
  }
  return n;
}

}  // namespace mooncake_tier
