#pragma once

// The actors of master_stress_test: configuration, the violation log and
// the simulated storage node (the lockstep that moves the clock is a
// RoundBarrier, tests/support/round_barrier.h). Included by that one test
// only (its definitions are file-local).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/byte_units.h"
#include "base/mutex.h"
#include "core/master.h"
#include "tests/support/master_harness.h"
#include "tests/support/violations.h"

#if defined(__SANITIZE_THREAD__)
#define MT_STRESS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MT_STRESS_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MT_STRESS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MT_STRESS_ASAN 1
#endif
#endif

namespace mooncake_tier {
namespace {

using testing::MasterHarness;
using Rng = std::mt19937_64;

#if defined(MT_STRESS_TSAN) || defined(MT_STRESS_ASAN)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

constexpr int kKeys = 600;  // ~8.5 KiB each: ~5 MiB, twice DRAM + SSD
constexpr int kClients = 3;
constexpr int kClientOps = kSanitized ? 16000 : 40000;
// Client ops per round of simulated time: keeps clients, timeouts and
// node work interleaved whichever threads the scheduler favours.
constexpr int kOpsPerRound = 8;
constexpr uint64_t kMinRounds = kClientOps / kOpsPerRound;
constexpr Duration kStep = std::chrono::milliseconds(20);

struct NodeSetup {
  std::string name;
  uint64_t dram;
  uint64_t ssd;
  bool flaky;
};
// Two steady nodes of 1 MiB DRAM and a flaky one; SSD below the data size.
const NodeSetup kNodes[] = {
    {"node-0", 1024 * kKiB, 512 * kKiB, false},
    {"node-1", 1024 * kKiB, 512 * kKiB, false},
    {"node-flaky", 512 * kKiB, 256 * kKiB, true},
};
constexpr size_t kNodeCount = std::size(kNodes);

MasterConfig StressConfig(OffloadMode mode) {
  MasterConfig config;
  config.shard_count = 64;
  config.offload_mode = mode;
  config.lease_ttl = std::chrono::milliseconds(200);
  config.put_timeout = std::chrono::seconds(3);
  config.offload_task_timeout = std::chrono::seconds(3);
  config.offload_max_per_pull = 8;
  config.offload_queue_limit = 256;
  config.node_ttl = std::chrono::seconds(2);
  return config;
}

std::string KeyName(int i) { return "key-" + std::to_string(i); }

// Each key is always put with one of two sizes (1..16 KiB), so any size the
// master reports can be checked, and a restored SSD record may be stale.
uint64_t SizeOf(int key, int variant) {
  const uint64_t mix = static_cast<uint64_t>(key) * 7919 + variant * 104729;
  return kKiB + mix % (15 * kKiB);
}

int KeyIndex(const std::string& key) {
  if (key.rfind("key-", 0) != 0) return -1;
  return std::stoi(key.substr(4));
}

bool SizeAllowed(const std::string& key, uint64_t size) {
  const int i = KeyIndex(key);
  return i >= 0 && (size == SizeOf(i, 0) || size == SizeOf(i, 1));
}

int Uniform(Rng& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
bool Chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }

std::string Show(const Status& s) { return s.ToString(); }

using testing::Violations;

// A storage node as the master sees it: registration, heartbeats, offload
// reports, and a model of its SSD store (key -> size) that survives
// restarts. Used by its own thread during the run and by the test thread
// after it joined.
class SimNode {
 public:
  SimNode(const NodeSetup& setup, Master* master, const Clock* clock,
          Violations* violations)
      : setup_(setup),
        master_(master),
        clock_(clock),
        violations_(violations) {}

  NodeId id() const { return id_.load(); }
  const NodeSetup& setup() const { return setup_; }
  const std::map<std::string, uint64_t>& store() const { return store_; }
  size_t held() const { return held_.size(); }

  // (Re-)registers with the SSD inventory; a running incarnation is replaced.
  void Register() {
    NodeSpec spec;
    spec.name = setup_.name;
    spec.dram_size = setup_.dram;
    spec.ssd_capacity = setup_.ssd;
    std::vector<SsdInventoryEntry> inventory;
    for (const auto& [key, size] : store_) {
      inventory.push_back({key, size, std::nullopt});
    }
    Result<NodeId> id = master_->RegisterNode(spec, inventory);
    violations_->Check(id.ok(), "RegisterNode: " + Show(id.status()));
    if (id.ok()) id_.store(*id);
    held_.clear();  // a restarted node forgets the tasks it was running
  }

  // One heartbeat and the work it brings. With `drain`, every task is
  // reported done at once; otherwise some fail and some are held back.
  // Returns the SSD deletions received.
  size_t Step(Rng& rng, bool drain) {
    Status alive = master_->Heartbeat(id());
    Result<NodeTasks> reply =
        alive.ok() ? master_->PullTasks(id()) : Result<NodeTasks>(alive);
    if (!reply.ok()) {
      violations_->Check(reply.status().reason() == ErrorReason::kNodeNotFound,
                         "Heartbeat: " + Show(reply.status()));
      violations_->Check(setup_.flaky, setup_.name +
                                           " expired although it heartbeats "
                                           "every round");
      Register();
      return 0;
    }
    // Deletions first: a later offload of the same key must survive them.
    for (const std::string& key : reply->ssd_deletes) store_.erase(key);
    for (const Task& task : reply->offloads) TakeTask(task, rng, drain);
    for (const Task& task : reply->promotions) Promote(task, rng, drain);
    ReportHeldTasks();
    if (!drain && !store_.empty() && Chance(rng, 0.005)) ReportCorruption(rng);
    return reply->ssd_deletes.size();
  }

  // Reports every held task; the master must have reaped them all.
  void ReportHeldAfterReap() {
    for (const Held& h : held_) {
      Status s = Report(h.task, h.succeed);
      violations_->Check(s.reason() == ErrorReason::kTaskNotFound,
                         "late report of a reaped task: " + Show(s));
    }
    held_.clear();
  }

 private:
  struct Held {
    Task task;
    TimePoint report_at;
    bool succeed;
  };

  void TakeTask(const Task& task, Rng& rng, bool drain) {
    violations_->Check(task.kind == TaskKind::kOffload && task.node == id() &&
                           task.source.node == id() &&
                           task.source.tier == Tier::kMemory &&
                           task.source.state == ReplicaState::kComplete &&
                           SizeAllowed(task.key, task.source.size),
                       "malformed offload task for " + task.key);
    // 75% done, 15% failed, 10% held: reported late (maybe after the
    // offload timeout reaped it) or never. Like node/storage_node.cc, the
    // node writes its copies in the order it receives the tasks; a copy is
    // durable before it is reported, and one the master refuses stays until
    // the master says to delete it.
    const int pick = drain ? 0 : Uniform(rng, 0, 99);
    const bool succeed = pick < 75 || (pick >= 90 && Chance(rng, 0.7));
    if (succeed) store_[task.key] = task.source.size;
    if (pick >= 90) {
      const Duration timeout = master_->config().offload_task_timeout;
      held_.push_back(
          {task, clock_->Now() + timeout * Uniform(rng, 1, 8) / 4, succeed});
      return;
    }
    // Reported in the round it was handed out (the clock waits for this
    // node), so the timeout cannot have reaped it.
    Status s = Report(task, succeed);
    violations_->Check(s.ok(), "offload report: " + Show(s));
  }

  // A promotion as node/storage_node.cc runs it: read the SSD copy, stage
  // DRAM, write, report. Some are dropped silently (the timeout reaps
  // them), some fail the transfer; a copy the node lacks fails the read.
  void Promote(const Task& task, Rng& rng, bool drain) {
    violations_->Check(task.kind == TaskKind::kPromotion && task.node == id() &&
                           task.source.node == id() &&
                           task.source.tier == Tier::kLocalDisk &&
                           SizeAllowed(task.key, task.source.size),
                       "malformed promotion task for " + task.key);
    const int pick = drain ? 0 : Uniform(rng, 0, 99);
    if (pick >= 95) return;
    const auto settled = [&](const Status& s, const std::string& what) {
      violations_->Check(s.ok() || s.reason() == ErrorReason::kTaskNotFound,
                         what + ": " + Show(s));
    };
    if (store_.count(task.key) == 0) {
      settled(master_->NotifyPromotionFailure(
                  id(), task.id,
                  Status(ErrorReason::kObjectNotFound, "no such record")),
              "promotion read failure");
      return;
    }
    Result<ReplicaDescriptor> staged =
        master_->PromotionAllocStart(id(), task.id);
    if (!staged.ok()) {
      const ErrorReason r = staged.status().reason();
      violations_->Check(r == ErrorReason::kNoSpace ||
                             r == ErrorReason::kObjectNotFound ||
                             r == ErrorReason::kTaskNotFound,
                         "PromotionAllocStart: " + Show(staged.status()));
      return;
    }
    violations_->Check(staged->tier == Tier::kMemory &&
                           staged->state == ReplicaState::kProcessing &&
                           staged->size == task.source.size,
                       "malformed staged replica for " + task.key);
    if (pick >= 85) {
      settled(master_->NotifyPromotionFailure(
                  id(), task.id, Status(ErrorReason::kIoError, "injected")),
              "promotion transfer failure");
    } else {
      settled(master_->NotifyPromotionSuccess(id(), task.id),
              "promotion success");
    }
  }

  Status Report(const Task& task, bool succeed) {
    if (!succeed) {
      return master_->NotifyOffloadFailure(
          id(), task.id, Status(ErrorReason::kIoError, "injected"));
    }
    return master_->NotifyOffloadSuccess(id(), task.id);
  }

  void ReportHeldTasks() {
    const TimePoint now = clock_->Now();
    for (size_t i = 0; i < held_.size();) {
      if (held_[i].report_at > now) {
        ++i;
        continue;
      }
      Status s = Report(held_[i].task, held_[i].succeed);
      violations_->Check(s.ok() || s.reason() == ErrorReason::kTaskNotFound,
                         "late offload report: " + Show(s));
      held_.erase(held_.begin() + i);
    }
  }

  void ReportCorruption(Rng& rng) {
    auto it = store_.begin();
    std::advance(it, Uniform(rng, 0, static_cast<int>(store_.size()) - 1));
    const std::string key = it->first;
    store_.erase(it);
    // A copy found corrupt before its task was reported is reported failed.
    for (Held& h : held_) {
      if (h.task.key == key) h.succeed = false;
    }
    master_->ReportSsdCorruption(id(), {&key, 1});
  }

  const NodeSetup setup_;
  Master* const master_;
  const Clock* const clock_;
  Violations* const violations_;
  std::atomic<NodeId> id_{kNoNode};
  std::map<std::string, uint64_t> store_;
  std::vector<Held> held_;
};

// One stress run: the engine, its nodes and the threads that drive them.
}  // namespace
}  // namespace mooncake_tier
