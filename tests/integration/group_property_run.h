#pragma once

// The random walk of group_property_test.cc (see there for what it checks):
// the walk's model of what was put, and PropertyRun, which drives one seeded
// walk over a Master. Its steps are in group_property_walk.cc, its
// invariants in group_property_checks.cc.
//
// Thread safety: single-threaded; a PropertyRun is used by one thread.

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/byte_units.h"
#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier::group_property {

using testing::MasterHarness;
using Rng = std::mt19937_64;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kSteps = 1000;
constexpr int kFullReadEvery = 25;
constexpr int kUngroupedKeys = 24;
constexpr size_t kMaxOpenGroups = 4;

struct RunSpec {
  OffloadMode mode;
  GroupRemovePolicy policy;
  GroupVisibility visibility;
  uint64_t seed;
};

inline MasterConfig PropertyConfig(const RunSpec& spec) {
  MasterConfig c = MasterHarness::DefaultConfig();
  c.group_shard_count = 8;
  c.offload_mode = spec.mode;
  c.group_remove_policy = spec.policy;
  c.group_visibility = spec.visibility;
  c.lease_ttl = seconds(1);
  c.put_timeout = seconds(6);
  c.group_fill_timeout = seconds(15);
  c.group_broken_ttl = seconds(8);
  c.offload_task_timeout = std::chrono::hours(10);  // never reaped in a run
  c.offload_max_per_pull = 8;
  return c;
}

inline int Uniform(Rng& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
inline bool Chance(Rng& rng, double p) {
  return std::bernoulli_distribution(p)(rng);
}
inline std::string Why(const Status& s) {
  return std::string(ReasonName(s.reason()));
}
inline bool Has(const std::vector<Tier>& tiers, Tier t) {
  return std::find(tiers.begin(), tiers.end(), t) != tiers.end();
}
inline bool HasState(const ObjectDescription& d, ReplicaState state) {
  return std::any_of(d.replicas.begin(), d.replicas.end(),
                     [&](const Replica& r) { return r.desc.state == state; });
}
template <typename T>
const T& Pick(Rng& rng, const std::vector<T>& v) {
  return v[Uniform(rng, 0, static_cast<int>(v.size()) - 1)];
}

// What the test put under each key (the "bytes" of an engine without any).
struct Stored {
  uint64_t size = 0;
  std::optional<GroupSpec> group;
};

// A group the walk is putting: the indexes still to put, in put order.
struct Plan {
  std::string id;
  int serial = 0;  // names this incarnation's keys
  uint32_t size = 0;
  std::deque<uint32_t> todo;
  std::vector<uint64_t> bytes;  // per index
  size_t never = 0;             // members never put: the group expires
  int reputs = 0;
};

// A put started and not yet ended.
struct Pending {
  std::string key;
  uint64_t size = 0;
  std::optional<GroupSpec> group;
  int serial = -1;  // the plan that put it
  TimePoint started;
  ReplicaId replica = 0;
  int due = 0;
  enum Action { kEnd, kRevoke, kRetryThenEnd } action = kEnd;
};

struct FakeNode {
  std::string name;
  NodeId id = kNoNode;
  std::vector<Task> held;  // handed out, not yet reported
};

class PropertyRun {
 public:
  explicit PropertyRun(const RunSpec& spec)
      : spec_(spec), h_(PropertyConfig(spec)), rng_(spec.seed) {
    const uint64_t ssd = spec.mode == OffloadMode::kOff ? 0 : 28 * kKiB;
    for (const char* name : {"node-a", "node-b"}) {
      nodes_.push_back({name, h_.AddNode(name, 40 * kKiB, ssd), {}});
    }
  }

  // The walk, then a quiesce; false after the first step that broke an
  // invariant.
  bool Run();
  Master& master() { return h_.master(); }

 private:
  void Step();
  Plan& OpenPlan();
  void PutMember();
  void PutUngrouped();
  void StartPut(const std::string& key, uint64_t size,
                const std::optional<GroupSpec>& group, int serial = -1);
  void FinishPending(bool all);
  void ClosePlan(const std::string& id);
  void InvalidPut();
  void Get();
  void Remove(bool whole_group);
  void NodeWork(double report, Duration advance);
  void Quiesce();

  void CheckAll(bool read_all);
  void CheckGroup(const std::string& id, const std::set<std::string>& booked,
                  bool read);
  void CheckComplete(const GroupDescription& g,
                     const std::set<std::string>& booked, bool read);
  void CheckObject(const std::string& key);
  void RetireGroups();
  // Objects eviction must leave alone, with their tiers: leased ones, for
  // DRAM also pinned ones, and every member of a group with such a member.
  std::map<std::string, std::vector<Tier>> Protected(bool memory);

  Result<GroupDescription> Group(const std::string& id) {
    return std::move(master().GetGroup({&id, 1})[0]);
  }
  Result<ObjectDescription> Describe(const std::string& key) {
    return master().DescribeObject(key);
  }
  // A comparable picture of a group and the store, for "changes nothing".
  std::string Picture(const std::string& id);
  std::string RandomKey();
  std::string RandomGroup() {
    auto it = groups_.begin();
    std::advance(it, Uniform(rng_, 0, static_cast<int>(groups_.size()) - 1));
    return *it;
  }
  void Expect(bool ok, const std::string& what) {
    if (!ok) violations_.push_back(what);
  }
  bool Failed(int step);

  const RunSpec spec_;
  MasterHarness h_;
  Rng rng_;
  std::vector<FakeNode> nodes_;
  std::map<std::string, Stored> model_;
  std::set<std::string> groups_;      // group ids that may be in the table
  std::vector<std::string> retired_;  // ids of groups gone for good
  std::vector<Plan> open_;
  std::vector<Pending> pending_;
  int next_group_ = 0;
  int step_ = 0;
  std::string doing_;
  std::deque<std::string> recent_;
  std::vector<std::string> violations_;
  bool swept_ = false;  // the step ran SweepGroups
};

}  // namespace mooncake_tier::group_property
