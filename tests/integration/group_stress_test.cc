// Concurrency stress of groups in the Master: client threads put
// the members of shared groups (each group's members spread over the
// clients, in random order), read them, probe Exists and GetGroup, and
// remove members and whole groups, while a node thread reports offloads and
// runs promotions (reads of SSD-only groups queue them) and a driver thread
// moves a ManualClock and runs the background steps (Tick,
// EvictMemory, EvictSsd, SweepGroups). DRAM and SSD are small, so groups are
// evicted and offloaded as units throughout. The run is bounded by its work
// list (every member of every planned group is put once, or again after a
// revoke or NO_SPACE), not by wall time; nothing sleeps.
//
// While running, every answer is checked against the set the contract allows,
// plus cross-thread facts: GetGroup/Exists never report a complete group
// without every member present, and a group once seen complete (or once a
// member was read under all_or_nothing) is never seen filling or expired again,
// and a copy a read was just served is not evicted under its lease. Clients,
// node and clock move in lockstep rounds (a RoundBarrier), so no thread can
// outrun simulated time. At the end the engine is quiesced (every timeout
// passed, tasks drained, groups swept) and checked: Audit is consistent with
// no pins, tasks or pending puts; only complete groups are left, each with
// every member stored, readable and in one tier as a whole (DRAM: all or none;
// SSD: all or none unless a member's offload was failed or held back by the
// node); no stored member is missing from its group; and the group counters
// show that completion, expiry, eviction as units and removal all happened, so
// the test cannot pass vacuously. The seed is printed; thread timing still
// varies between runs.
//
// GroupStress is in group_stress.h (clients in group_stress_clients.cc, the
// threads, node and driver in group_stress.cc, the end of the run in
// group_stress_verify.cc); this file runs it per offload mode.

#include "tests/integration/group_stress.h"

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

namespace mooncake_tier::group_stress {
namespace group_stress_test {
namespace {

void RunStress(OffloadMode mode, GroupRemovePolicy policy) {
  GroupStress run(mode, policy);
  SCOPED_TRACE("seed " + std::to_string(run.seed()));
  ::testing::Test::RecordProperty("seed", std::to_string(run.seed()));
  run.Run();
  ASSERT_NO_FATAL_FAILURE(run.Quiesce());
  run.Verify();
  EXPECT_EQ(run.violations().count(), 0u) << run.violations().Report();
  const MasterStats stats = run.master().GetStats();
  const GroupCounterSnapshot& g = stats.group_counters;
  std::ostringstream counters;
  g.VisitCounters([&](std::string_view name, uint64_t v) {
    counters << " " << name << "=" << v;
  });
  std::cout << "[group-stress] " << OffloadModeName(mode)
            << " seed=" << run.seed()
            << " seen_complete=" << run.seen_complete() << counters.str()
            << " get_group_incomplete=" << stats.get_group_incomplete
            << " offload_completed=" << stats.offload_completed
            << " put_no_space=" << stats.put_no_space << "\n";
  // Every mechanism under test ran: the test cannot pass vacuously.
  EXPECT_GT(run.seen_complete(), kGroups / 4);
  EXPECT_GT(g.groups_completed, static_cast<uint64_t>(kGroups / 3));
  EXPECT_GT(g.groups_expired, 0u);
  EXPECT_GT(g.groups_evicted_memory, 0u);
  EXPECT_GT(g.groups_evicted_disk, 0u);
  EXPECT_GT(g.groups_collected, 0u);
  EXPECT_GT(stats.get_group_incomplete, 0u);
  EXPECT_GT(stats.offload_completed, 0u);
  EXPECT_GT(stats.removes, 0u);
  if (policy == GroupRemovePolicy::kMember) {
    EXPECT_GT(g.groups_broken_removed, 0u);
  }
}

TEST(GroupStressTest, OnEvictRemovingWholeGroups) {
  RunStress(OffloadMode::kOnEvict, GroupRemovePolicy::kGroup);
}

TEST(GroupStressTest, WriteThroughRemovingMembers) {
  RunStress(OffloadMode::kWriteThrough, GroupRemovePolicy::kMember);
}

}  // namespace
}  // namespace group_stress_test
}  // namespace mooncake_tier::group_stress
