// The end of a GroupStress run (group_stress.h): every timeout passed,
// tasks drained, groups swept; then only complete groups, whole in each
// tier, and no orphans.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "tests/integration/group_stress.h"

namespace mooncake_tier::group_stress {

// ---- The end of the run ----

void GroupStress::Quiesce() {
  const MasterConfig& c = master().config();
  Rng rng(seed_ + 11);
  // The offloads and promotions of the last round (and the held offloads)
  // are reported before the clock jumps, so only the offloads held past
  // their timeout were reaped. The jump passes every task timeout: the
  // promotions the node dropped (it drops some on purpose) are reaped here,
  // as the driver's Tick would have done had the run lasted longer. A report
  // made in a drain round can queue work for a node already pulled in that
  // round (a late offload report, a promotion's commit), so the drain goes
  // on until a round hands nothing out.
  for (int round = 0; round < 100 && NodeStep(rng, true) > 0; ++round) {
  }
  harness_.clock().Advance(std::max({c.put_timeout, c.offload_task_timeout,
                                     c.promotion.task_timeout, c.lease_ttl}) +
                           std::chrono::seconds(1));
  master().ReapStalledPuts();
  EXPECT_EQ(master().ReapOffloadTasks(), 0u);
  master().ReapPromotionTasks();
  // From here nothing queues promotions (no reads, no Tick), so each round
  // either frees DRAM or SSD for good, or writes back what a node holds
  // above its writeback watermark, or runs tasks the node finishes in the
  // same round; a few rounds settle it, 500 is a generous bound. Writeback
  // must settle too: a node's pull runs a writeback round whenever the
  // last round left it behind (Tiering::RefillWriteback).
  bool settled = false;
  uint64_t evicted = 0;
  for (int round = 0; round < 500 && !settled; ++round) {
    evicted =
        master().EvictMemory() + master().EvictSsd() + master().WriteBack();
    NodeStep(rng, true);
    settled = evicted == 0 && master().Audit().tasks == 0;
  }
  ASSERT_TRUE(settled) << "eviction and offload did not settle: "
                       << master().ListTasks(TaskKind::kOffload).size()
                       << " offloads and "
                       << master().ListTasks(TaskKind::kPromotion).size()
                       << " promotions left, " << evicted
                       << " bytes evicted in the last round";
  // Filling groups expire; broken and expired ones are collected.
  for (Duration d :
       {c.group_fill_timeout, c.group_broken_ttl, c.group_broken_ttl}) {
    harness_.clock().Advance(d + std::chrono::seconds(1));
    master().SweepGroups();
  }
  NodeStep(rng, true);
}

void GroupStress::Verify() {
  const AuditReport audit = master().Audit();
  EXPECT_TRUE(audit.consistent());
  EXPECT_EQ(audit.total_refcnt, 0u);
  EXPECT_EQ(audit.detached_replicas, 0u);
  EXPECT_EQ(audit.tasks, 0u);
  EXPECT_EQ(master().GetStats().pending_puts, 0u);
  for (auto& plan : plans_) ASSERT_NO_FATAL_FAILURE(VerifyGroup(*plan));
}

// (a) and (b) for what is left: only complete groups, whole in each tier.
void GroupStress::VerifyGroup(GroupPlan& plan) {
  Result<GroupDescription> got = std::move(master().GetGroup({&plan.id, 1})[0]);
  const bool kept = got.ok();
  if (kept) {
    const GroupDescription& g = *got;
    ASSERT_EQ(g.status.state, GroupState::kComplete) << plan.id;
    ASSERT_EQ(g.members.size(), plan.size) << plan.id;
    size_t in_memory = 0, on_disk = 0;
    bool failed = false;
    for (const GroupDescription::Member& m : g.members) {
      const auto has = [&](Tier t) {
        return std::find(m.tiers.begin(), m.tiers.end(), t) != m.tiers.end();
      };
      in_memory += has(Tier::kMemory);
      on_disk += has(Tier::kLocalDisk);
      {
        MutexLock lock(&failed_mu_);
        failed |= failed_offloads_.count(m.key) > 0;
      }
      Result<ObjectReplicas> r = harness_.Get(m.key);
      ASSERT_TRUE(r.ok()) << m.key << ": " << Show(r.status());
      EXPECT_EQ(r->size, plan.bytes[m.index]) << m.key;
      EXPECT_FALSE(r->replicas.empty()) << m.key;
      const Result<ExistsInfo> e = harness_.Exists(m.key);
      EXPECT_TRUE(e.ok() && e->exists && e->group &&
                  e->group->state == GroupState::kComplete)
          << m.key;
    }
    EXPECT_TRUE(in_memory == 0 || in_memory == plan.size)
        << plan.id << ": " << in_memory << " of " << plan.size
        << " members in DRAM";
    EXPECT_TRUE(failed || on_disk == 0 || on_disk == plan.size)
        << plan.id << ": " << on_disk << " of " << plan.size
        << " members on SSD";
  }
  // No orphans: a stored member belongs to a group that lists it.
  for (const std::string& key : plan.Keys()) {
    Result<ObjectDescription> d = master().DescribeObject(key);
    if (!d.ok()) continue;
    EXPECT_TRUE(kept) << key << " outlived its group " << plan.id;
    if (!kept) continue;
    const auto& ms = got->members;
    EXPECT_TRUE(std::any_of(ms.begin(), ms.end(),
                            [&](const auto& m) { return m.key == key; }))
        << key << " is stored but not listed by " << plan.id;
  }
}

int GroupStress::seen_complete() const {
  int n = 0;
  for (const auto& plan : plans_) n += plan->seen_complete.load();
  return n;
}

}  // namespace mooncake_tier::group_stress
