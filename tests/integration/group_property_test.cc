// Property test of groups in the Master (docs/design/groups.md): a
// seeded, single-threaded random walk of grouped and ungrouped puts, gets,
// removes, evictions, offloads and clock moves over little DRAM and SSD, for
// each offload mode. After every step:
//  (a) a group GetGroup reports complete has every member stored, with a
//      complete replica of the size put (the model: the engine has no bytes;
//      the client conformance suite checks bytes), Exists says complete and
//      GetReplicaList serves it;
//  (b) no complete group is partly in a tier: all members or none have a
//      DRAM copy, and the same for SSD while no member's offload is booked
//      (offloads land one member at a time);
//  (c) under all_or_nothing no member of another group is readable;
//  (d) Audit() is consistent and, with no task booked, nothing is pinned;
// and: a put breaking a group rule, or a refused remove, changes nothing;
// eviction spares leased and pinned objects and whole groups holding one;
// no stored member is missing from its group; objects keep their size.
// Reads lease and refresh recency, so each step reads one complete group and
// only every kFullReadEvery steps all of them; the other checks change
// nothing. Fake nodes heartbeat after each clock move and report offloads
// some steps later, always as done. Puts name their node, so placement is
// not random; absl's hash order depends on addresses, so a seed replays
// exactly under `setarch -R`. A failure names the seed and the last steps.
//
// The walk is in group_property_run.h (its steps in group_property_walk.cc,
// its invariants in group_property_checks.cc); this file runs it per mode.

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <string>
#include <string_view>

#include "tests/integration/group_property_run.h"

namespace mooncake_tier::group_property {
namespace group_property_test {
namespace {

const uint64_t kSeeds[] = {11, 23, 37, 51};

// ---- The test ----

void RunMode(OffloadMode mode) {
  std::map<std::string, uint64_t> sum;  // counters over the seeds' runs
  const auto add = [&](std::string_view name, uint64_t v) {
    sum[std::string(name)] += v;
  };
  for (size_t i = 0; i < std::size(kSeeds); ++i) {
    const RunSpec spec{
        mode, i % 2 ? GroupRemovePolicy::kMember : GroupRemovePolicy::kGroup,
        i == 3 ? GroupVisibility::kBestEffort : GroupVisibility::kAllOrNothing,
        kSeeds[i]};
    SCOPED_TRACE("seed " + std::to_string(kSeeds[i]));
    PropertyRun run(spec);
    if (!run.Run()) return;
    const MasterStats s = run.master().GetStats();
    s.VisitCounters(add);
    s.group_counters.VisitCounters(add);
  }
  std::cout << "[group-property] " << OffloadModeName(mode);
  for (const auto& [name, v] : sum) {
    if (name.rfind("group", 0) == 0 || name.rfind("offload_comp", 0) == 0) {
      std::cout << " " << name << "=" << v;
    }
  }
  std::cout << "\n";
  // The walks reached every mechanism they are meant to exercise.
  EXPECT_GT(sum["groups_completed"], 50u);
  for (const char* name :
       {"groups_expired", "groups_broken_removed", "groups_evicted_memory",
        "groups_collected", "get_group_incomplete", "put_timed_out",
        "put_revoked", "put_no_space"}) {
    EXPECT_GT(sum[name], 0u) << name;
  }
  if (mode != OffloadMode::kOff) {
    EXPECT_GT(sum["groups_evicted_disk"], 0u);
    EXPECT_GT(sum["offload_completed"], 0u);
  }
}

TEST(GroupPropertyTest, OffloadOff) { RunMode(OffloadMode::kOff); }
TEST(GroupPropertyTest, OffloadWriteThrough) {
  RunMode(OffloadMode::kWriteThrough);
}
TEST(GroupPropertyTest, OffloadOnEvict) { RunMode(OffloadMode::kOnEvict); }

}  // namespace
}  // namespace group_property_test
}  // namespace mooncake_tier::group_property
