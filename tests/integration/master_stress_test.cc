// Concurrency stress of the Master: client, node and background threads
// drive one engine over a small key space while a driver thread moves a
// ManualClock (no test sleeps; every timeout is simulated time). DRAM and SSD
// are small, so DRAM eviction, offload, SSD eviction, the put and offload
// timeouts and node expiry all run throughout the run. The run is bounded by
// iteration counts, not by wall time. At the end the engine is quiesced and
// its bookkeeping is checked with Audit() and a walk over every key.
//
// Threads:
//  - clients: batched PutStart/PutEnd/PutRevoke (some puts are abandoned for
//    the put timeout to reap), GetReplicaList, Exists and Remove (sometimes
//    forced), each checked against the set of answers the contract allows;
//  - nodes (one thread each): heartbeat, apply SSD deletions to a model SSD
//    store, and report offloads as done, failed, or late (after the master
//    may have reaped them); one "flaky" node goes silent until it expires,
//    or restarts while alive, and re-registers with its SSD inventory. The
//    model behaves as node/storage_node.cc does: deletions before offloads,
//    copies written in the order tasks arrive, no deletion on its own;
//  - the driver: advances the clock one step per round once every
//    heartbeating node had its turn (so a healthy node never looks silent),
//    and runs Tick() or the individual background steps.
//
// Besides Audit(), the end state is checked per key and per node: DRAM and
// SSD use per node equal their replicas, no two DRAM ranges overlap, both
// tiers are below their watermarks, and every local_disk replica the master
// lists is a record the node's SSD actually holds. The seed is printed
// (and recorded as a test property) on failure; thread timing still varies.

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
#include "base/mutex.h"
#include "core/master.h"
#include "tests/integration/master_stress_model.h"
#include "tests/support/master_harness.h"
#include "tests/support/round_barrier.h"

namespace mooncake_tier {
namespace master_stress_test {
namespace {
class StressRun {
 public:
  explicit StressRun(OffloadMode mode)
      : harness_(StressConfig(mode)),
        lockstep_(kNodeCount),
        seed_(std::random_device{}()) {
    for (const NodeSetup& setup : kNodes) {
      nodes_.push_back(std::make_unique<SimNode>(
          setup, &master(), &harness_.clock(), &violations_));
      nodes_.back()->Register();
    }
  }

  Master& master() { return harness_.master(); }
  uint64_t seed() const { return seed_; }
  const Violations& violations() const { return violations_; }

  // Runs every thread to completion.
  void Run() {
    std::vector<std::thread> nodes;
    std::vector<std::thread> clients;
    for (size_t n = 0; n < kNodeCount; ++n) {
      nodes.emplace_back([this, n] { NodeLoop(n); });
    }
    std::thread driver([this] { DriverLoop(); });
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([this, c] { ClientLoop(c); });
    }
    for (std::thread& t : clients) t.join();
    clients_done_.store(true);
    driver.join();  // stops the lockstep once it is done
    for (std::thread& t : nodes) t.join();
  }

  // Lets every timeout expire, reaps, drains tasks and settles eviction.
  void Quiesce();
  // Checks the engine's bookkeeping against a walk over every key.
  void Verify();

 private:
  struct InFlight {
    std::string key;
    uint64_t size;
    int due_op;  // the client op at which it is ended, revoked or retried
    int action;  // 0 end, 1 revoke, 2 retry PutStart then end
  };

  void ClientLoop(int index);
  void StartPuts(Rng& rng, const ClientId& me, int op,
                 std::vector<InFlight>& in_flight);
  void FinishPuts(const ClientId& me, int op, std::vector<InFlight>& in_flight);
  void Gets(Rng& rng);
  void Probes(Rng& rng);
  void Removes(Rng& rng);
  void NodeLoop(size_t n);
  void FlakyPause(size_t n, Rng& rng);
  void DriverLoop();
  void BackgroundSteps(Rng& rng);
  void CheckReplicas(const std::string& key, const ObjectReplicas& got);

  // What the walk over every key found, per live node.
  struct Tally {
    std::map<NodeId, const SimNode*> nodes;
    std::map<NodeId, uint64_t> dram, ssd;
    std::map<NodeId, std::vector<std::pair<uint64_t, uint64_t>>> ranges;
    std::vector<std::string> phantoms;  // SSD replicas the node lacks
  };
  void VerifyObject(const std::string& key, Tally& tally);
  void VerifyNodes(Tally& tally);

  std::vector<std::string> RandomKeys(Rng& rng, int max) {
    std::vector<std::string> keys(Uniform(rng, 1, max));
    for (std::string& k : keys) k = KeyName(Uniform(rng, 0, kKeys - 1));
    return keys;
  }

  MasterHarness harness_;
  // Rounds of simulated time; the participants are the nodes. The driver
  // starts round r+1 (advancing the clock) only once every node that is not
  // silent finished round r, so a healthy node heartbeats at every clock
  // value however threads are scheduled, and only a node that chose silence
  // (excused) can expire.
  testing::RoundBarrier lockstep_;
  const uint64_t seed_;
  Violations violations_;
  std::vector<std::unique_ptr<SimNode>> nodes_;
  std::atomic<bool> clients_done_{false};
};

// ---- Clients ----

void StressRun::ClientLoop(int index) {
  Rng rng(seed_ + 1000 + index);
  const ClientId me = "client-" + std::to_string(index);
  std::vector<InFlight> in_flight;
  for (int op = 0; op < kClientOps; ++op) {
    lockstep_.AwaitRound(op / kOpsPerRound);
    FinishPuts(me, op, in_flight);
    const int pick = Uniform(rng, 0, 99);
    if (pick < 35) {
      StartPuts(rng, me, op, in_flight);
    } else if (pick < 65) {
      Gets(rng);
    } else if (pick < 93) {
      Probes(rng);
    } else {
      Removes(rng);
    }
  }
  // Whatever is still in flight is abandoned to the put timeout.
}

void StressRun::StartPuts(Rng& rng, const ClientId& me, int op,
                          std::vector<InFlight>& in_flight) {
  std::vector<PutStartRequest> requests;
  for (const std::string& key : RandomKeys(rng, 4)) {
    PutStartRequest r{key, SizeOf(KeyIndex(key), Uniform(rng, 0, 1)), {}, me};
    if (Chance(rng, 0.2))
      r.options.preferred_node = kNodes[Uniform(rng, 0, 2)].name;
    requests.push_back(std::move(r));
  }
  std::vector<Result<ReplicaDescriptor>> out = master().PutStart(requests);
  violations_.Check(out.size() == requests.size(), "PutStart batch size");
  for (size_t i = 0; i < out.size(); ++i) {
    const PutStartRequest& r = requests[i];
    if (!out[i].ok()) {
      const ErrorReason why = out[i].status().reason();
      violations_.Check(
          why == ErrorReason::kObjectExists || why == ErrorReason::kNoSpace,
          "PutStart " + r.key + ": " + Show(out[i].status()));
      continue;
    }
    const ReplicaDescriptor& d = *out[i];
    violations_.Check(d.id != 0 && d.tier == Tier::kMemory &&
                          d.state == ReplicaState::kProcessing &&
                          d.size == r.size && d.node != kNoNode,
                      "PutStart descriptor of " + r.key);
    const int roll = Uniform(rng, 0, 99);
    if (roll < 8) continue;  // abandoned: the put timeout reaps it
    const int action = roll < 80 ? 0 : roll < 92 ? 1 : 2;
    in_flight.push_back({r.key, r.size, op + Uniform(rng, 0, 12), action});
  }
}

void StressRun::FinishPuts(const ClientId& me, int op,
                           std::vector<InFlight>& in_flight) {
  std::vector<std::string> end, revoke;
  std::vector<PutStartRequest> retry;
  for (size_t i = 0; i < in_flight.size();) {
    InFlight& f = in_flight[i];
    if (f.due_op > op) {
      ++i;
      continue;
    }
    if (f.action == 2) {  // a repeated PutStart of the same put, ended later
      retry.push_back({f.key, f.size, {}, me});
      f.action = 0;
      f.due_op = op + 1;
      ++i;
      continue;
    }
    (f.action == 0 ? end : revoke).push_back(f.key);
    in_flight.erase(in_flight.begin() + i);
  }
  // Each call is checked against what a racing timeout, eviction or other
  // client may legitimately have done to the key meanwhile.
  for (const Status& s : master().PutEnd(me, end)) {
    violations_.Check(s.ok() || s.reason() == ErrorReason::kObjectNotFound ||
                          s.reason() == ErrorReason::kObjectBusy,
                      "PutEnd: " + Show(s));
  }
  for (const Status& s : master().PutRevoke(me, revoke)) {
    violations_.Check(s.ok() || s.reason() == ErrorReason::kObjectNotFound ||
                          s.reason() == ErrorReason::kObjectBusy,
                      "PutRevoke: " + Show(s));
  }
  if (retry.empty()) return;
  for (const Result<ReplicaDescriptor>& r : master().PutStart(retry)) {
    violations_.Check(r.ok() ||
                          r.status().reason() == ErrorReason::kObjectExists ||
                          r.status().reason() == ErrorReason::kNoSpace,
                      "repeated PutStart: " + Show(r.status()));
  }
}

void StressRun::CheckReplicas(const std::string& key,
                              const ObjectReplicas& got) {
  violations_.Check(SizeAllowed(key, got.size), "Get size of " + key);
  violations_.Check(!got.replicas.empty(), "Get OK without replicas: " + key);
  bool seen_disk = false;
  for (const ReplicaDescriptor& d : got.replicas) {
    violations_.Check(d.state == ReplicaState::kComplete && d.size == got.size,
                      "Get returned a bad replica of " + key);
    violations_.Check(!(seen_disk && d.tier == Tier::kMemory),
                      "Get: memory replica after a disk one for " + key);
    seen_disk |= d.tier == Tier::kLocalDisk;
  }
}

void StressRun::Gets(Rng& rng) {
  std::vector<std::string> keys = RandomKeys(rng, 6);
  const bool with_bad_key = Chance(rng, 0.05);
  if (with_bad_key) keys.push_back("");  // one bad key must not hide others
  std::vector<Result<ObjectReplicas>> out = master().GetReplicaList(keys);
  violations_.Check(out.size() == keys.size(), "Get batch size");
  for (size_t i = 0; i < out.size(); ++i) {
    if (keys[i].empty()) {
      violations_.Check(out[i].status().reason() == ErrorReason::kInvalidKey,
                        "Get of an empty key: " + Show(out[i].status()));
    } else if (out[i].ok()) {
      CheckReplicas(keys[i], *out[i]);
    } else {
      const ErrorReason why = out[i].status().reason();
      violations_.Check(why == ErrorReason::kObjectNotFound ||
                            why == ErrorReason::kObjectNotReady,
                        "Get " + keys[i] + ": " + Show(out[i].status()));
    }
  }
}

void StressRun::Probes(Rng& rng) {
  const std::vector<std::string> keys = RandomKeys(rng, 8);
  std::vector<Result<ExistsInfo>> out = master().Exists(keys);
  violations_.Check(out.size() == keys.size(), "Exists batch size");
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].ok()) {
      violations_.Add("Exists " + keys[i] + ": " + Show(out[i].status()));
    } else if (out[i]->exists) {
      violations_.Check(SizeAllowed(keys[i], out[i]->size),
                        "Exists size of " + keys[i]);
    }
  }
}

void StressRun::Removes(Rng& rng) {
  const std::vector<std::string> keys = RandomKeys(rng, 3);
  const bool force = Chance(rng, 0.3);
  for (const Status& s : master().Remove(keys, RemoveOptions{force})) {
    const ErrorReason why = s.reason();
    violations_.Check(
        s.ok() || why == ErrorReason::kObjectNotFound ||
            why == ErrorReason::kObjectBusy ||
            (!force && why == ErrorReason::kObjectLeased),
        std::string(force ? "forced " : "") + "Remove: " + Show(s));
  }
}

// ---- Nodes and the driver ----

void StressRun::NodeLoop(size_t n) {
  Rng rng(seed_ + 2000 + n);
  SimNode& node = *nodes_[n];
  int until_pause = Uniform(rng, 100, 300);
  do {
    node.Step(rng, /*drain=*/false);
    if (node.setup().flaky && --until_pause == 0) {
      FlakyPause(n, rng);
      until_pause = Uniform(rng, 100, 300);
    }
  } while (lockstep_.ArriveAndAwaitNext(n));
}

// The flaky node either restarts at once (replacing its live incarnation)
// or goes silent until the master declares it dead, then re-registers with
// its SSD inventory.
void StressRun::FlakyPause(size_t n, Rng& rng) {
  SimNode& node = *nodes_[n];
  if (Chance(rng, 0.3)) {
    node.Register();
    return;
  }
  lockstep_.SetExcused(n, true);
  while (master().GetNode(node.id()).has_value()) {
    if (!lockstep_.AwaitNextRound()) break;
  }
  node.Register();
  lockstep_.SetExcused(n, false);
}

void StressRun::DriverLoop() {
  Rng rng(seed_ + 3000);
  for (uint64_t round = 0; !clients_done_.load() || round < kMinRounds;
       ++round) {
    lockstep_.Advance([&] { harness_.clock().Advance(kStep); });
    BackgroundSteps(rng);
  }
  lockstep_.Stop();
}

void StressRun::BackgroundSteps(Rng& rng) {
  if (Chance(rng, 0.5)) {
    master().Tick();
  } else {
    if (Chance(rng, 0.7)) master().ExpireNodes();
    if (Chance(rng, 0.7)) master().ReapStalledPuts();
    if (Chance(rng, 0.7)) master().ReapOffloadTasks();
    if (Chance(rng, 0.7)) master().ReapPromotionTasks();
    if (Chance(rng, 0.3)) master().PromoteProactively();
    if (Chance(rng, 0.7))
      master().EvictMemory(Chance(rng, 0.2) ? 64 * kKiB : 0);
    if (Chance(rng, 0.7)) master().EvictSsd();
  }
  if (Chance(rng, 0.02)) {
    // Read-only views under load: nothing to assert (not a snapshot), but
    // they take every lock the engine has.
    (void)master().Audit();
    (void)master().GetStats();
    (void)master().ListTasks(TaskKind::kOffload);
    (void)master().ListNodes();
  }
}

// ---- The end of the run ----

void StressRun::Quiesce() {
  const MasterConfig& config = master().config();
  harness_.clock().Advance(
      std::max({config.put_timeout, config.offload_task_timeout,
                config.promotion.task_timeout, config.lease_ttl}) +
      std::chrono::seconds(1));
  Rng rng(seed_ + 4000);
  // Heartbeat first so that no node expires; tasks handed out now are
  // reported at once, everything handed out before is overdue.
  for (auto& node : nodes_) node->Step(rng, /*drain=*/true);
  EXPECT_EQ(master().ExpireNodes(), 0u);
  master().ReapStalledPuts();
  size_t held = 0;
  for (auto& node : nodes_) held += node->held();
  EXPECT_GE(master().ReapOffloadTasks(), held);
  master().ReapPromotionTasks();  // those dropped by the nodes
  for (auto& node : nodes_) node->ReportHeldAfterReap();
  // Eviction may queue offloads, whose completion frees more DRAM.
  bool settled = false;
  for (int round = 0; round < 500 && !settled; ++round) {
    const uint64_t evicted = master().EvictMemory() + master().EvictSsd();
    for (auto& node : nodes_) node->Step(rng, /*drain=*/true);
    settled = evicted == 0 && master().Audit().tasks == 0;
  }
  ASSERT_TRUE(settled) << "eviction and offload did not settle: "
                       << master().ListTasks(TaskKind::kOffload).size()
                       << " offloads, "
                       << master().ListTasks(TaskKind::kPromotion).size()
                       << " promotions left, " << master().EvictMemory()
                       << " bytes evictable";
  // Hand every node its remaining SSD deletions.
  for (auto& node : nodes_) {
    while (node->Step(rng, /*drain=*/true) > 0) {
    }
  }
}

void StressRun::Verify() {
  // Ranges of copies freed under readers' location grants are held until
  // those ran out, then handed back.
  AuditReport audit = master().Audit();
  EXPECT_EQ(audit.allocated_memory_bytes,
            audit.replica_memory_bytes + audit.held_memory_bytes);
  harness_.clock().Advance(master().config().EffectiveLocationGrant());
  master().ReleaseHeldMemory();
  audit = master().Audit();
  EXPECT_EQ(audit.held_memory_bytes, 0u);
  EXPECT_EQ(audit.allocated_memory_bytes, audit.replica_memory_bytes);
  EXPECT_EQ(audit.ssd_used_bytes, audit.replica_disk_bytes);
  EXPECT_EQ(audit.total_refcnt, 0u);
  EXPECT_EQ(audit.detached_replicas, 0u);
  EXPECT_EQ(audit.tasks, 0u);
  const MasterStats stats = master().GetStats();
  EXPECT_EQ(stats.pending_puts, 0u);
  // Every live node was just handed all its deletions; what is left is
  // queued for node ids that are gone and will never be delivered.
  EXPECT_EQ(stats.ssd_deletes_pending, 0u)
      << "SSD deletions queued for dead node incarnations";
  EXPECT_LT(stats.memory.used,
            master().config().eviction_high_watermark * stats.memory.capacity);

  Tally tally;
  for (auto& node : nodes_) tally.nodes[node->id()] = node.get();
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_NO_FATAL_FAILURE(VerifyObject(KeyName(i), tally));
  }
  // The master may only list SSD copies the node actually holds.
  std::string some;
  for (size_t i = 0; i < std::min<size_t>(5, tally.phantoms.size()); ++i) {
    some += "\n " + tally.phantoms[i];
  }
  EXPECT_TRUE(tally.phantoms.empty())
      << tally.phantoms.size()
      << " local_disk replica(s) listed that the node does not hold:" << some;
  VerifyNodes(tally);
}

void StressRun::VerifyObject(const std::string& key, Tally& tally) {
  Result<ObjectDescription> d = master().DescribeObject(key);
  Result<ExistsInfo> e = harness_.Exists(key);
  ASSERT_TRUE(e.ok());
  if (!d.ok()) {
    EXPECT_EQ(d.status().reason(), ErrorReason::kObjectNotFound);
    EXPECT_FALSE(e->exists) << key;
    return;
  }
  EXPECT_TRUE(SizeAllowed(key, d->size)) << key;
  EXPECT_FALSE(d->replicas.empty()) << key;
  const uint64_t align = master().config().dram_alignment;
  int memory = 0;
  std::set<NodeId> disk_nodes;
  for (const Replica& r : d->replicas) {
    const ReplicaDescriptor& rd = r.desc;
    EXPECT_EQ(rd.state, ReplicaState::kComplete) << key;
    EXPECT_EQ(rd.size, d->size) << key;
    EXPECT_EQ(r.refcnt, 0u) << key;
    auto node = tally.nodes.find(rd.node);
    ASSERT_NE(node, tally.nodes.end())
        << key << " has a replica on a dead node";
    if (rd.tier == Tier::kMemory) {
      ++memory;
      const uint64_t rounded = (rd.size + align - 1) & ~(align - 1);
      tally.dram[rd.node] += rounded;
      tally.ranges[rd.node].push_back({rd.offset, rounded});
      EXPECT_LE(rd.offset + rounded, node->second->setup().dram) << key;
      continue;
    }
    EXPECT_TRUE(disk_nodes.insert(rd.node).second) << key;
    tally.ssd[rd.node] += rd.size;
    const auto& store = node->second->store();
    auto held = store.find(key);
    if (held == store.end() || held->second != rd.size) {
      tally.phantoms.push_back(
          key + " (" + std::to_string(rd.size) + " bytes) on " +
          node->second->setup().name + ", which holds " +
          (held == store.end() ? std::string("no such record")
                               : std::to_string(held->second) + " bytes"));
    }
  }
  EXPECT_LE(memory, 1) << key;
  // Exists says it exists exactly when a reader can get a replica.
  EXPECT_TRUE(e->exists) << key;
  Result<ObjectReplicas> got = harness_.Get(key);
  ASSERT_TRUE(got.ok()) << key << ": " << Show(got.status());
  EXPECT_FALSE(got->replicas.empty()) << key;
}

void StressRun::VerifyNodes(Tally& tally) {
  for (const NodeView& view : master().ListNodes()) {
    ASSERT_TRUE(tally.nodes.count(view.id)) << view.spec.name;
    EXPECT_EQ(view.dram_used, tally.dram[view.id]) << view.spec.name;
    EXPECT_EQ(view.ssd_used, tally.ssd[view.id]) << view.spec.name;
    EXPECT_LT(view.ssd_used,
              master().config().ssd_high_watermark * view.spec.ssd_capacity)
        << view.spec.name;
    auto& ranges = tally.ranges[view.id];
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i) {
      EXPECT_LE(ranges[i - 1].first + ranges[i - 1].second, ranges[i].first)
          << "overlapping DRAM ranges on " << view.spec.name;
    }
  }
}

void ExpectProgress(const MasterStats& s) {
  // Every mechanism under test actually ran; the run cannot pass vacuously.
  EXPECT_GT(s.put_completed, 500u);
  EXPECT_GT(s.put_revoked, 0u);
  EXPECT_GT(s.put_timed_out, 0u);
  EXPECT_GT(s.get_memory_hit, 0u);
  EXPECT_GT(s.get_local_disk_hit, 0u);
  EXPECT_GT(s.removes, 0u);
  EXPECT_GT(s.evicted_memory_objects, 0u);
  EXPECT_GT(s.evicted_disk_objects, 0u);
  EXPECT_GT(s.offload_completed, 100u);
  EXPECT_GT(s.offload_failed, 0u);
  EXPECT_GT(s.offload_timed_out, 0u);
  EXPECT_GT(s.nodes_expired, 0u);
  EXPECT_GT(s.nodes_registered, kNodeCount);
  EXPECT_GT(s.inventory_restored, 0u);
  EXPECT_GT(s.objects_evicted, 0u);
}

void RunStress(OffloadMode mode) {
  StressRun run(mode);
  SCOPED_TRACE("seed " + std::to_string(run.seed()));
  ::testing::Test::RecordProperty("seed", std::to_string(run.seed()));
  run.Run();
  ASSERT_NO_FATAL_FAILURE(run.Quiesce());
  run.Verify();
  EXPECT_EQ(run.violations().count(), 0u) << run.violations().Report();
  const MasterStats stats = run.master().GetStats();
  ExpectProgress(stats);
  std::ostringstream counters;
  stats.VisitCounters([&](std::string_view name, uint64_t value) {
    counters << " " << name << "=" << value;
  });
  std::cout << "[stress] " << OffloadModeName(mode) << counters.str() << "\n";
}

TEST(MasterStressTest, OnEvictUnderConcurrentClientsNodesAndBackground) {
  RunStress(OffloadMode::kOnEvict);
}

TEST(MasterStressTest, WriteThroughUnderConcurrentClientsNodesAndBackground) {
  RunStress(OffloadMode::kWriteThrough);
}

}  // namespace
}  // namespace master_stress_test
}  // namespace mooncake_tier
