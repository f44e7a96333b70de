// GroupStress (group_stress.h): the planned groups, the threads, and the
// node and driver threads that move simulated time.

#include "tests/integration/group_stress.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace mooncake_tier::group_stress {
namespace {

MasterConfig StressConfig(OffloadMode mode, GroupRemovePolicy policy) {
  MasterConfig c;
  c.shard_count = 32;
  c.group_shard_count = 16;
  c.offload_mode = mode;
  c.group_remove_policy = policy;
  c.lease_ttl = std::chrono::milliseconds(300);
  c.put_timeout = std::chrono::seconds(2);
  c.offload_task_timeout = std::chrono::seconds(2);
  c.group_fill_timeout = std::chrono::seconds(6);
  c.group_broken_ttl = std::chrono::seconds(2);
  c.offload_max_per_pull = 1024;       // only held-back offloads time out
  c.node_ttl = std::chrono::hours(2);  // node loss is not under test here
  return c;
}

}  // namespace

GroupStress::GroupStress(OffloadMode mode, GroupRemovePolicy policy)
    : harness_(StressConfig(mode, policy)), seed_(std::random_device{}()) {
  for (const char* name : kNodeNames) {
    node_ids_.push_back(harness_.AddNode(name, 512 * kKiB, 768 * kKiB));
  }
  Rng rng(seed_);
  plans_.reserve(kGroups);
  for (int g = 0; g < kGroups; ++g) {
    auto plan = std::make_unique<GroupPlan>();
    plan->id = "grp-" + std::to_string(g);
    plan->size = Uniform(rng, 2, 8);
    for (uint32_t i = 0; i < plan->size; ++i) {
      plan->bytes.push_back(Uniform(rng, 1, 12) * 512);
    }
    plans_.push_back(std::move(plan));
  }
  // Members of kWindow neighbouring groups are shuffled together, so the
  // clients taking items in turn put each group's members concurrently
  // and in random order.
  for (int w = 0; w < kGroups; w += kWindow) {
    const size_t from = items_.size();
    for (int g = w; g < std::min(kGroups, w + kWindow); ++g) {
      for (uint32_t i = 0; i < plans_[g]->size; ++i) items_.push_back({g, i});
    }
    std::shuffle(items_.begin() + from, items_.end(), rng);
  }
}

void GroupStress::Run() {
  std::thread node([this] { NodeLoop(); });
  std::thread driver([this] { DriverLoop(); });
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([this, c] { ClientLoop(c); });
  for (std::thread& t : clients) t.join();
  driver.join();  // stops the rounds once it is done
  node.join();
}

// ---- The node and the driver ----

void GroupStress::NodeLoop() {
  Rng rng(seed_ + 7);
  // Nothing to do in round 0; then one step per round, until the run stops.
  while (rounds_.ArriveAndAwaitNext(kNodeParticipant)) NodeStep(rng, false);
}

// Heartbeats every node; 90% of offloads are reported done at once, 4%
// failed, the rest held back some rounds (maybe past the offload timeout).
// Promotions (reads of SSD-only groups) are run as a node runs them.
size_t GroupStress::NodeStep(Rng& rng, bool drain) {
  size_t handed_out = 0;
  for (NodeId node : node_ids_) {
    Status alive = master().Heartbeat(node);
    Result<NodeTasks> reply =
        alive.ok() ? master().PullTasks(node) : Result<NodeTasks>(alive);
    violations_.Check(reply.ok(), "Heartbeat: " + Show(reply.status()));
    if (!reply.ok()) continue;
    handed_out += reply->promotions.size() + reply->offloads.size();
    for (const Task& task : reply->promotions) {
      Promote(node, task, drain ? 0 : Uniform(rng, 0, 99));
    }
    for (const Task& task : reply->offloads) {
      const int pick = drain ? 0 : Uniform(rng, 0, 99);
      if (pick < 90) {
        const Status s = master().NotifyOffloadSuccess(node, task.id);
        violations_.Check(s.ok(), "offload report: " + Show(s));
        continue;
      }
      {
        MutexLock lock(&failed_mu_);
        failed_offloads_.insert(task.key);
      }
      if (pick < 94) {
        const Status s = master().NotifyOffloadFailure(
            node, task.id, Status(ErrorReason::kIoError, "injected"));
        violations_.Check(s.ok(), "offload failure report: " + Show(s));
      } else {
        held_.push_back({node, task, Uniform(rng, 1, 60)});
      }
    }
  }
  for (size_t i = 0; i < held_.size();) {
    if (!drain && --held_[i].rounds_left > 0) {
      ++i;
      continue;
    }
    const Status s =
        master().NotifyOffloadSuccess(held_[i].node, held_[i].task.id);
    violations_.Check(s.ok() || s.reason() == ErrorReason::kTaskNotFound,
                      "late offload report: " + Show(s));
    held_.erase(held_.begin() + i);
  }
  return handed_out;
}

// A promotion as a node runs it: stage DRAM, write, report, all in the
// round it was handed out. 85% succeed (a group's members commit together
// once all are staged), 10% fail the transfer (the group's promotion is
// abandoned), 5% are dropped silently and left to the promotion timeout.
void GroupStress::Promote(NodeId node, const Task& task, int pick) {
  violations_.Check(task.kind == TaskKind::kPromotion && task.node == node &&
                        task.source.tier == Tier::kLocalDisk,
                    "malformed promotion task for " + task.key);
  if (pick >= 95) return;
  Result<ReplicaDescriptor> staged =
      master().PromotionAllocStart(node, task.id);
  if (!staged.ok()) {
    // Settled by the master (no DRAM, source gone), or abandoned with
    // another member of its group.
    const ErrorReason why = staged.status().reason();
    violations_.Check(why == ErrorReason::kNoSpace ||
                          why == ErrorReason::kObjectNotFound ||
                          why == ErrorReason::kTaskNotFound,
                      "PromotionAllocStart: " + Show(staged.status()));
    return;
  }
  const Status s =
      pick >= 85 ? master().NotifyPromotionFailure(
                       node, task.id, Status(ErrorReason::kIoError, "injected"))
                 : master().NotifyPromotionSuccess(node, task.id);
  // TASK_NOT_FOUND: a failed member of its group abandoned it first.
  violations_.Check(s.ok() || s.reason() == ErrorReason::kTaskNotFound,
                    "promotion report: " + Show(s));
}

void GroupStress::DriverLoop() {
  Rng rng(seed_ + 9);
  for (uint64_t round = 1;; ++round) {
    if (AllClientsDone()) break;
    rounds_.Advance([&] { harness_.clock().Advance(kStep); });
    const int pick = Uniform(rng, 0, 99);
    if (pick < 40) {
      master().Tick();
    } else if (pick < 65) {
      master().EvictMemory(Chance(rng, 0.3) ? 32 * kKiB : 0);
    } else if (pick < 80) {
      master().EvictSsd();
    } else if (pick < 92) {
      master().SweepGroups();
    } else {
      master().ReapStalledPuts();
      master().ReapOffloadTasks();
    }
  }
  rounds_.Stop();
}

bool GroupStress::AllClientsDone() const {
  for (int c = 0; c < kClients; ++c) {
    if (!rounds_.Excused(c)) return false;
  }
  return true;
}

}  // namespace mooncake_tier::group_stress
