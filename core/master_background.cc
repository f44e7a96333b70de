// Master: the background tick and the put timeout.

#include <algorithm>
#include <cmath>

#include "core/master.h"

namespace mooncake_tier {

void Master::Tick() {
  ExpireNodes();
  ReapStalledPuts();
  ReapOffloadTasks();
  ReapPromotionTasks();
  SweepGroups();
  tiering_.Round();
  tiering_.EvictSsd();
  PromoteProactively();
}

size_t Master::ReapStalledPuts() {
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
