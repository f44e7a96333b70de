// Concurrency stress of groups in the Master (issue 3): client threads put
// the members of shared groups (each group's members spread over the
// clients, in random order), read them, probe Exists and GetGroup, and
// remove members and whole groups, while a node thread reports offloads and
// a driver thread moves a ManualClock and runs the background steps (Tick,
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
// node and clock move in lockstep rounds (see Rounds), so no thread can outrun
// simulated time. At the end the engine is quiesced (every timeout passed,
// tasks drained, groups swept) and checked: Audit is consistent with no pins,
// tasks or pending puts; only complete groups are left, each with every member
// stored, readable and in one tier as a whole (DRAM: all or none; SSD: all or
// none unless a member's offload was failed or held back by the node); no
// stored member is missing from its group; and the group counters show that
// completion, expiry, eviction as units and removal all happened, so the test
// cannot pass vacuously. The seed is printed; thread timing still varies
// between runs.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/master.h"
#include "core/mutex.h"
#include "tests/support/master_harness.h"
#include "tests/support/violations.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define MT_GROUP_STRESS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define MT_GROUP_STRESS_SANITIZED 1
#endif
#endif

namespace mooncake_tier {
namespace {

using testing::MasterHarness;
using Rng = std::mt19937_64;

#ifdef MT_GROUP_STRESS_SANITIZED
constexpr int kGroups = 2400;
#else
constexpr int kGroups = 4000;
#endif
constexpr uint64_t kKiB = 1024;
constexpr int kClients = 4;
constexpr int kWindow = 8;       // groups whose members are shuffled together
constexpr int kOpsPerRound = 3;  // ops of each client per step of time
constexpr Duration kStep = std::chrono::milliseconds(50);
const char* const kNodeNames[] = {"node-0", "node-1"};

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
  c.offload_max_per_heartbeat = 1024;  // only held-back offloads time out
  c.node_ttl = std::chrono::hours(2);  // node loss is not under test here
  return c;
}

int Uniform(Rng& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
bool Chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }
std::string Show(const Status& s) { return s.ToString(); }

using testing::Violations;

// One planned group: its id, size and member sizes are fixed up front; the
// keys its members were put under are recorded as they are used.
struct GroupPlan {
  std::string id;
  uint32_t size = 0;
  std::vector<uint64_t> bytes;
  std::atomic<bool> seen_complete{false};
  // A member was refused, removed or abandoned: the group cannot complete,
  // so its members are mostly no longer put (a put that still comes
  // re-creates a removed group, which then expires).
  std::atomic<bool> doomed{false};
  mutable Mutex mu;
  std::vector<std::string> keys ABSL_GUARDED_BY(mu);

  std::string NewKey(uint32_t index, int attempt) {
    std::string key =
        id + "/" + std::to_string(index) + "#" + std::to_string(attempt);
    MutexLock lock(&mu);
    keys.push_back(key);
    return key;
  }
  std::vector<std::string> Keys() const {
    MutexLock lock(&mu);
    return keys;
  }
};

struct Item {
  int group = 0;
  uint32_t index = 0;
};

// Simulated time in rounds. Client op n waits for round n / kOpsPerRound;
// the driver starts round r+1 (advancing the clock) once every running
// client reached op (r+1) * kOpsPerRound and the node finished round r. So
// clients and clock keep pace whatever the scheduler does, and the node
// reports each offload in the round it was handed out: only the offloads
// it holds back can time out.
class Rounds {
 public:
  explicit Rounds(int clients) : reached_(clients), done_(clients) {
    for (int c = 0; c < clients; ++c) {
      reached_[c].store(0);
      done_[c].store(false);
    }
  }
  // Client `c` is at op `op`; waits until its round has started.
  void AwaitOp(int c, uint64_t op) {
    reached_[c].store(op);
    const uint64_t round = op / kOpsPerRound;
    if (started_.load() >= round) return;
    std::unique_lock<std::mutex> lock(mu_);
    changed_.notify_all();
    changed_.wait(lock, [&] { return stop_ || round_ >= round; });
  }
  void ClientDone(int c) {
    done_[c].store(true);
    std::lock_guard<std::mutex> lock(mu_);
    changed_.notify_all();
  }
  bool AllClientsDone() const {
    return std::all_of(done_.begin(), done_.end(),
                       [](const auto& d) { return d.load(); });
  }
  // The node: waits for a round after `seen`; 0 once the run stops.
  uint64_t NodeWait(uint64_t seen) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return stop_ || round_ != seen; });
    return stop_ ? 0 : round_;
  }
  void NodeDone(uint64_t round) {
    std::lock_guard<std::mutex> lock(mu_);
    node_done_ = round;
    changed_.notify_all();
  }
  // The driver: waits for the clients and the node, runs `advance` and
  // starts the next round.
  template <typename Fn>
  void Next(Fn&& advance) {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t need = (round_ + 1) * kOpsPerRound;
    changed_.wait(lock, [&] {
      for (size_t c = 0; c < done_.size(); ++c) {
        if (!done_[c].load() && reached_[c].load() < need) return false;
      }
      return node_done_ == round_;
    });
    advance();
    ++round_;
    started_.store(round_);
    changed_.notify_all();
  }
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::atomic<uint64_t>> reached_;
  std::vector<std::atomic<bool>> done_;
  std::atomic<uint64_t> started_{0};  // round_, readable without mu_
  uint64_t round_ = 0;                // guarded by mu_
  uint64_t node_done_ = 0;            // guarded by mu_
  bool stop_ = false;                 // guarded by mu_
};

class GroupStress {
 public:
  GroupStress(OffloadMode mode, GroupRemovePolicy policy)
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

  uint64_t seed() const { return seed_; }
  Master& master() { return harness_.master(); }
  const Violations& violations() const { return violations_; }
  int seen_complete() const;

  void Run();
  void Quiesce();
  void Verify();

 private:
  struct InFlight {
    Item item;
    std::string key;
    int attempt;
    int due;  // the client op at which it is finished
    bool revoke;
  };

  void ClientLoop(int c);
  void PutMember(Rng& rng, const Item& item, int attempt, int op,
                 std::vector<InFlight>& in_flight, std::vector<Item>& retry);
  void FinishDue(int op, bool all, std::vector<InFlight>& in_flight,
                 std::vector<Item>& retry);
  void RandomOp(Rng& rng);
  void ReadMember(Rng& rng, GroupPlan& plan);
  void ProbeGroup(GroupPlan& plan);
  // `was_complete`: seen_complete as loaded before `s` was read.
  void CheckStatus(GroupPlan& plan, bool was_complete, const GroupStatus& s,
                   const std::string& via);
  void RemoveSome(Rng& rng, GroupPlan& plan);
  void NodeLoop();
  void NodeStep(Rng& rng, bool drain);
  void DriverLoop();
  void VerifyGroup(GroupPlan& plan);
  GroupPlan& NearbyPlan(Rng& rng);

  MasterHarness harness_;
  const uint64_t seed_;
  Violations violations_;
  std::vector<NodeId> node_ids_;
  std::vector<std::unique_ptr<GroupPlan>> plans_;
  std::vector<Item> items_;
  std::atomic<size_t> next_item_{0};
  std::atomic<int> next_attempt_{1};  // names the keys of repeated puts
  Rounds rounds_{kClients};
  // Node thread only (and the test thread after it joined).
  struct Held {
    NodeId node;
    Task task;
    int rounds_left;
  };
  std::vector<Held> held_;
  // Keys whose offload the node failed or held back: their group may be
  // left partly on SSD (only eviction moves groups as units).
  Mutex failed_mu_;
  std::set<std::string> failed_offloads_ ABSL_GUARDED_BY(failed_mu_);
};

// ---- Clients ----

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

void GroupStress::ClientLoop(int c) {
  Rng rng(seed_ + 100 + c);
  std::vector<InFlight> in_flight;
  std::vector<Item> retry;  // NO_SPACE or revoked: put again later
  for (int op = 0;; ++op) {
    rounds_.AwaitOp(c, op);
    FinishDue(op, false, in_flight, retry);
    if (Chance(rng, 0.55)) {
      // Retries first: a client does not start new groups while members
      // of its older ones wait for space (filling groups cannot be evicted,
      // so starting ever more of them would fill DRAM until they expire).
      if (!retry.empty()) {
        const Item item = retry.front();
        retry.erase(retry.begin());
        PutMember(rng, item, next_attempt_.fetch_add(1), op, in_flight, retry);
      } else if (const size_t n = next_item_.fetch_add(1); n < items_.size()) {
        PutMember(rng, items_[n], 0, op, in_flight, retry);
      } else if (in_flight.empty() && retry.empty()) {
        break;
      }
      continue;
    }
    RandomOp(rng);
  }
  FinishDue(0, true, in_flight, retry);
  rounds_.ClientDone(c);
}

void GroupStress::PutMember(Rng& rng, const Item& item, int attempt, int op,
                            std::vector<InFlight>& in_flight,
                            std::vector<Item>& retry) {
  GroupPlan& plan = *plans_[item.group];
  if (plan.doomed.load() && (attempt > 0 || Chance(rng, 0.8))) return;
  const std::string key = plan.NewKey(item.index, attempt);
  // One client id per put, so no end or revoke is refused as another's.
  PutStartRequest r{key, plan.bytes[item.index], {}, "c" + key};
  r.options.group = GroupSpec{plan.id, plan.size, item.index};
  Result<ReplicaDescriptor> got = std::move(master().PutStart({&r, 1})[0]);
  if (!got.ok()) {
    const ErrorReason why = got.status().reason();
    violations_.Check(why == ErrorReason::kNoSpace ||
                          why == ErrorReason::kFillingGroupsFull ||
                          why == ErrorReason::kGroupNotFilling,
                      "PutStart " + key + ": " + Show(got.status()));
    // NO_SPACE is retried (until the group stops filling: then refused).
    if (why == ErrorReason::kNoSpace ||
        why == ErrorReason::kFillingGroupsFull) {
      retry.push_back(item);
    }
    if (why == ErrorReason::kGroupNotFilling) plan.doomed.store(true);
    return;
  }
  const int roll = Uniform(rng, 0, 99);
  if (roll < 1) {  // abandoned: the put timeout reaps it, the group expires
    plan.doomed.store(true);
    return;
  }
  InFlight f{item, key, attempt, op + (roll < 70 ? 0 : Uniform(rng, 1, 20)),
             roll >= 93};
  in_flight.push_back(f);
  if (f.due == op) FinishDue(op, false, in_flight, retry);
}

void GroupStress::FinishDue(int op, bool all, std::vector<InFlight>& in_flight,
                            std::vector<Item>& retry) {
  for (size_t i = 0; i < in_flight.size();) {
    const InFlight f = in_flight[i];
    if (!all && f.due > op) {
      ++i;
      continue;
    }
    in_flight.erase(in_flight.begin() + i);
    const ClientId client = "c" + f.key;
    const Status s = f.revoke ? master().PutRevoke(client, {&f.key, 1})[0]
                              : master().PutEnd(client, {&f.key, 1})[0];
    // NOT_FOUND: the put timeout reaped it first.
    violations_.Check(
        s.ok() || s.reason() == ErrorReason::kObjectNotFound,
        (f.revoke ? "PutRevoke " : "PutEnd ") + f.key + ": " + Show(s));
    if (f.revoke && s.ok() && !all)
      retry.push_back(f.item);  // the index is free again
    if (!s.ok()) plans_[f.item.group]->doomed.store(true);
  }
}

GroupPlan& GroupStress::NearbyPlan(Rng& rng) {
  const size_t n = std::min(next_item_.load(), items_.size() - 1);
  const int around = items_[n].group;
  const int g = std::clamp(around + Uniform(rng, -3 * kWindow, kWindow / 2), 0,
                           kGroups - 1);
  return *plans_[g];
}

void GroupStress::RandomOp(Rng& rng) {
  GroupPlan& plan = NearbyPlan(rng);
  const int pick = Uniform(rng, 0, 99);
  if (pick < 50) return ReadMember(rng, plan);
  if (pick < 96) return ProbeGroup(plan);
  RemoveSome(rng, plan);
}

void GroupStress::ReadMember(Rng& rng, GroupPlan& plan) {
  const std::vector<std::string> keys = plan.Keys();
  if (keys.empty()) return;
  const std::string& key =
      keys[Uniform(rng, 0, static_cast<int>(keys.size()) - 1)];
  Result<ObjectReplicas> got = std::move(master().GetReplicaList({&key, 1})[0]);
  if (!got.ok()) {
    const ErrorReason why = got.status().reason();
    violations_.Check(why == ErrorReason::kObjectNotFound ||
                          why == ErrorReason::kObjectNotReady ||
                          why == ErrorReason::kGroupIncomplete,
                      "Get " + key + ": " + Show(got.status()));
    return;
  }
  const uint32_t index = got->group ? got->group->group_index : 0;
  violations_.Check(got->group && got->group->group_id == plan.id &&
                        index < plan.size && got->size == plan.bytes[index] &&
                        !got->replicas.empty(),
                    "Get " + key + " returned another object or no replica");
  for (const ReplicaDescriptor& d : got->replicas) {
    violations_.Check(d.state == ReplicaState::kComplete && d.size == got->size,
                      "Get " + key + " returned a replica not complete");
  }
  // all_or_nothing: served, so its group was complete.
  plan.seen_complete.store(true);
  // The lease (lease_ttl, several rounds; the clock moves at most one round
  // during this op) keeps every copy served from eviction: the object is
  // either removed whole or still has them.
  Result<ObjectDescription> now = master().DescribeObject(key);
  for (const ReplicaDescriptor& served : got->replicas) {
    violations_.Check(
        !now.ok() || std::any_of(now->replicas.begin(), now->replicas.end(),
                                 [&](const Replica& r) {
                                   return r.desc.id == served.id;
                                 }),
        "a leased copy of " + key + " was evicted");
  }
}

void GroupStress::CheckStatus(GroupPlan& plan, bool was_complete,
                              const GroupStatus& s, const std::string& via) {
  const std::string where =
      via + " " + plan.id + " (" + std::string(GroupStateName(s.state)) + " " +
      std::to_string(s.present) + "/" + std::to_string(s.expected) + ")";
  violations_.Check(s.expected == plan.size && s.present <= s.expected,
                    where + ": counts");
  if (s.state == GroupState::kComplete) {
    violations_.Check(s.present == s.expected,
                      where + ": complete but not all present");
    plan.seen_complete.store(true);
  }
  if (s.state == GroupState::kFilling) {
    violations_.Check(s.present < s.expected,
                      where + ": filling with every member");
  }
  violations_.Check(!was_complete || s.state == GroupState::kComplete ||
                        s.state == GroupState::kBroken,
                    where + ": was complete before");
}

void GroupStress::ProbeGroup(GroupPlan& plan) {
  bool was_complete = plan.seen_complete.load();
  Result<GroupDescription> g = std::move(master().GetGroup({&plan.id, 1})[0]);
  if (!g.ok()) {
    violations_.Check(g.status().reason() == ErrorReason::kGroupNotFound,
                      "GetGroup " + plan.id + ": " + Show(g.status()));
  } else {
    CheckStatus(plan, was_complete, g->status, "GetGroup");
    uint32_t present = 0;
    for (const GroupDescription::Member& m : g->members) {
      present += m.present;
      violations_.Check(
          m.index < plan.size && m.key.rfind(plan.id + "/", 0) == 0,
          "GetGroup " + plan.id + " lists a stranger: " + m.key);
    }
    violations_.Check(present == g->status.present &&
                          (g->status.state != GroupState::kComplete ||
                           g->members.size() == plan.size),
                      "GetGroup " + plan.id + ": members disagree with counts");
  }
  const std::vector<std::string> keys = plan.Keys();
  if (keys.empty()) return;
  was_complete = plan.seen_complete.load();
  for (const Result<ExistsInfo>& e : master().Exists(keys)) {
    violations_.Check(e.ok(), "Exists: " + Show(e.status()));
    if (e.ok() && e->group)
      CheckStatus(plan, was_complete, *e->group, "Exists");
  }
}

void GroupStress::RemoveSome(Rng& rng, GroupPlan& plan) {
  const bool force = Chance(rng, 0.5);
  const std::vector<std::string> keys = plan.Keys();
  Status s;
  if (keys.empty() || Chance(rng, 0.4)) {
    s = master().RemoveGroup({&plan.id, 1}, RemoveOptions{force})[0];
    violations_.Check(s.reason() != ErrorReason::kObjectNotFound,
                      "RemoveGroup " + plan.id + ": " + Show(s));
  } else {
    const std::string& key =
        keys[Uniform(rng, 0, static_cast<int>(keys.size()) - 1)];
    s = master().Remove({&key, 1}, RemoveOptions{force})[0];
    violations_.Check(s.reason() != ErrorReason::kGroupNotFound,
                      "Remove " + key + ": " + Show(s));
  }
  if (s.ok()) plan.doomed.store(true);
  const ErrorReason why = s.reason();
  violations_.Check(s.ok() || why == ErrorReason::kObjectNotFound ||
                        why == ErrorReason::kGroupNotFound ||
                        why == ErrorReason::kObjectBusy ||
                        (!force && why == ErrorReason::kObjectLeased),
                    "remove in " + plan.id + ": " + Show(s));
}

// ---- The node and the driver ----

void GroupStress::NodeLoop() {
  Rng rng(seed_ + 7);
  for (uint64_t round = 0; (round = rounds_.NodeWait(round)) != 0;) {
    NodeStep(rng, false);
    rounds_.NodeDone(round);
  }
}

// Heartbeats every node; 90% of offloads are reported done at once, 4%
// failed, the rest held back some rounds (maybe past the offload timeout).
void GroupStress::NodeStep(Rng& rng, bool drain) {
  for (NodeId node : node_ids_) {
    Result<HeartbeatReply> reply = master().Heartbeat(node);
    violations_.Check(reply.ok(), "Heartbeat: " + Show(reply.status()));
    if (!reply.ok()) continue;
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
}

void GroupStress::DriverLoop() {
  Rng rng(seed_ + 9);
  for (uint64_t round = 1;; ++round) {
    if (rounds_.AllClientsDone()) break;
    rounds_.Next([&] { harness_.clock().Advance(kStep); });
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

// ---- The end of the run ----

void GroupStress::Quiesce() {
  const MasterConfig& c = master().config();
  Rng rng(seed_ + 11);
  // The offloads of the last round (and the held ones) are reported before
  // the clock jumps, so only those held past the timeout were reaped.
  NodeStep(rng, true);
  harness_.clock().Advance(
      std::max({c.put_timeout, c.offload_task_timeout, c.lease_ttl}) +
      std::chrono::seconds(1));
  master().ReapStalledPuts();
  EXPECT_EQ(master().ReapOffloadTasks(), 0u);
  bool settled = false;
  for (int round = 0; round < 500 && !settled; ++round) {
    const uint64_t evicted = master().EvictMemory() + master().EvictSsd();
    NodeStep(rng, true);
    settled = evicted == 0 && master().Audit().tasks == 0;
  }
  ASSERT_TRUE(settled) << "eviction and offload did not settle";
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
}  // namespace mooncake_tier
