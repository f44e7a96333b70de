#pragma once

// The concurrency stress of groups (group_stress_test.cc says what it
// checks): the planned groups and GroupStress, which runs client, node and
// driver threads over one Master. The clients are in
// group_stress_clients.cc; the threads, the node and the driver in
// group_stress.cc; the end of the run (quiesce and verify) in
// group_stress_verify.cc.
//
// Thread safety: the test thread calls GroupStress's public members; Run
// starts and joins the client, node and driver threads. GroupPlan's fields
// are atomics or guarded by its `mu`.

#include <atomic>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/byte_units.h"
#include "base/mutex.h"
#include "core/master.h"
#include "tests/support/master_harness.h"
#include "tests/support/round_barrier.h"
#include "tests/support/violations.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define MT_GROUP_STRESS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define MT_GROUP_STRESS_SANITIZED 1
#endif
#endif

namespace mooncake_tier::group_stress {

using testing::MasterHarness;
using Rng = std::mt19937_64;

#ifdef MT_GROUP_STRESS_SANITIZED
constexpr int kGroups = 2400;
#else
constexpr int kGroups = 4000;
#endif
constexpr int kClients = 4;
// Ops of each client per round of simulated time: client op n waits for
// round n / kOpsPerRound (see `rounds_`).
constexpr int kOpsPerRound = 3;
constexpr int kWindow = 8;  // groups whose members are shuffled together
constexpr Duration kStep = std::chrono::milliseconds(50);
const char* const kNodeNames[] = {"node-0", "node-1"};

inline int Uniform(Rng& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
inline bool Chance(Rng& rng, double p) {
  return std::bernoulli_distribution(p)(rng);
}
inline std::string Show(const Status& s) { return s.ToString(); }

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

class GroupStress {
 public:
  GroupStress(OffloadMode mode, GroupRemovePolicy policy);

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
  // One round of every node: heartbeat, pull, run or report what was handed
  // out. Returns how many tasks the pulls handed out.
  size_t NodeStep(Rng& rng, bool drain);
  // `pick` in 0..99 chooses the outcome (0: success).
  void Promote(NodeId node, const Task& task, int pick);
  void DriverLoop();
  bool AllClientsDone() const;
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
  // Participants: the clients (ids 0..kClients-1) arrive at round
  // op / kOpsPerRound before each op, and are excused once done; the node
  // (kNodeParticipant) after each round's heartbeats. The driver starts
  // round r+1 (advancing the clock) once every running client reached op
  // (r+1) * kOpsPerRound and the node finished round r. So clients and
  // clock keep pace whatever the scheduler does, and the node reports each
  // offload in the round it was handed out: only the offloads it holds back
  // can time out.
  static constexpr size_t kNodeParticipant = kClients;
  testing::RoundBarrier rounds_{kClients + 1};
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

}  // namespace mooncake_tier::group_stress
