#include "core/group_table.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace mooncake_tier {
namespace {

bool IdLess(const GroupStatus& a, const GroupStatus& b) {
  return a.group_id < b.group_id;
}

}  // namespace

uint64_t GroupStateCounts::Of(GroupState state) const {
  switch (state) {
    case GroupState::kFilling:
      return filling;
    case GroupState::kComplete:
      return complete;
    case GroupState::kBroken:
      return broken;
    case GroupState::kExpired:
      return expired;
  }
  return 0;
}

GroupTable::GroupTable(uint32_t shard_count) {
  shards_.reserve(shard_count);
  for (uint32_t i = 0; i < shard_count; ++i) {
    shards_.push_back(std::make_unique<Shard>());
  }
}

uint32_t GroupTable::ShardIndex(std::string_view id) const {
  return ShardIndex(HashedKey(id));
}

std::optional<GroupStatus> GroupTable::Find(std::string_view id) const {
  return Find(HashedKey(id));
}

std::optional<GroupStatus> GroupTable::Find(const HashedKey& id) const {
  const Shard& s = *shards_[ShardIndex(id)];
  MutexLock lock(&s.mu);
  auto it = s.groups.find(id.view(), id.hash);
  if (it == s.groups.end()) return std::nullopt;
  return it->second.ToStatus(id.key);
}

GroupStateCounts GroupTable::CountsByState() const {
  GroupStateCounts counts;
  for (const auto& s : shards_) {
    MutexLock lock(&s->mu);
    for (const auto& [id, meta] : s->groups) {
      switch (meta.state) {
        case GroupState::kFilling:
          ++counts.filling;
          break;
        case GroupState::kComplete:
          ++counts.complete;
          break;
        case GroupState::kBroken:
          ++counts.broken;
          break;
        case GroupState::kExpired:
          ++counts.expired;
          break;
      }
    }
  }
  return counts;
}

GroupPage GroupTable::ListPage(std::optional<GroupState> filter, size_t limit,
                               std::string_view cursor) const {
  limit = std::max<size_t>(limit, 1);
  // A max-heap (by id) of the `limit` smallest ids after the cursor seen so
  // far; `more` records that some matching id did not fit.
  std::vector<GroupStatus> heap;
  bool more = false;
  for (const auto& s : shards_) {
    MutexLock lock(&s->mu);
    for (const auto& [key, meta] : s->groups) {
      const std::string_view id = key.id;
      if (id <= cursor) continue;
      if (filter.has_value() && meta.state != *filter) continue;
      if (heap.size() < limit) {
        heap.push_back(meta.ToStatus(id));
        std::push_heap(heap.begin(), heap.end(), IdLess);
        continue;
      }
      more = true;
      if (id < heap.front().group_id) {
        std::pop_heap(heap.begin(), heap.end(), IdLess);
        heap.back() = meta.ToStatus(id);
        std::push_heap(heap.begin(), heap.end(), IdLess);
      }
    }
  }
  std::sort_heap(heap.begin(), heap.end(), IdLess);
  GroupPage page;
  if (more) page.next_cursor = heap.back().group_id;
  page.groups = std::move(heap);
  return page;
}

size_t GroupTable::Size() const {
  size_t n = 0;
  for (const auto& s : shards_) {
    MutexLock lock(&s->mu);
    n += s->groups.size();
  }
  return n;
}

std::atomic<uint64_t>& GroupCounters::Broken(BreakCause cause) {
  switch (cause) {
    case BreakCause::kRemoved:
      return groups_broken_removed;
    case BreakCause::kNodeLost:
      return groups_broken_node_lost;
    case BreakCause::kCorrupt:
      return groups_broken_corrupt;
  }
  return groups_broken_removed;
}

GroupCounterSnapshot GroupCounters::Snapshot() const {
  GroupCounterSnapshot out;
#define MOONCAKE_TIER_GROUP_COUNTER_COPY(name) \
  out.name = name.load(std::memory_order_relaxed);
  MOONCAKE_TIER_GROUP_COUNTERS(MOONCAKE_TIER_GROUP_COUNTER_COPY)
#undef MOONCAKE_TIER_GROUP_COUNTER_COPY
  return out;
}

}  // namespace mooncake_tier
