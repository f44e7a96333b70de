// Property test of groups in the Master (issue 3, docs/design/groups.md): a
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

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace {

using testing::MasterHarness;
using Rng = std::mt19937_64;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint64_t kKiB = 1024;
constexpr int kSteps = 1000;
constexpr int kFullReadEvery = 25;
constexpr int kUngroupedKeys = 24;
constexpr size_t kMaxOpenGroups = 4;
const uint64_t kSeeds[] = {11, 23, 37, 51};

struct RunSpec {
  OffloadMode mode;
  GroupRemovePolicy policy;
  GroupVisibility visibility;
  uint64_t seed;
};

MasterConfig PropertyConfig(const RunSpec& spec) {
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
  c.offload_max_per_heartbeat = 8;
  return c;
}

int Uniform(Rng& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
bool Chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }
std::string Why(const Status& s) { return std::string(ReasonName(s.reason())); }
bool Has(const std::vector<Tier>& tiers, Tier t) {
  return std::find(tiers.begin(), tiers.end(), t) != tiers.end();
}
bool HasState(const ObjectDescription& d, ReplicaState state) {
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

bool PropertyRun::Run() {
  for (step_ = 0; step_ < kSteps; ++step_) {
    doing_.clear();
    Step();
    CheckAll(step_ % kFullReadEvery == 0);
    swept_ = false;
    if (Failed(step_)) return false;
  }
  doing_ = "quiesce";
  Quiesce();
  CheckAll(true);
  return !Failed(kSteps);
}

bool PropertyRun::Failed(int step) {
  recent_.push_back(std::to_string(step) + ": " + doing_);
  if (recent_.size() > 15) recent_.pop_front();
  if (violations_.empty()) return false;
  std::ostringstream out;
  out << "seed " << spec_.seed << " (" << OffloadModeName(spec_.mode) << ", "
      << GroupRemovePolicyName(spec_.policy) << ", "
      << GroupVisibilityName(spec_.visibility) << "): broken after step "
      << step << "\n";
  for (size_t i = 0; i < std::min<size_t>(violations_.size(), 12); ++i) {
    out << "  " << violations_[i] << "\n";
  }
  out << "the steps up to it:\n";
  for (const std::string& s : recent_) out << "  " << s << "\n";
  ADD_FAILURE() << out.str();
  return true;
}

void PropertyRun::Step() {
  const int pick = Uniform(rng_, 0, 99);
  if (pick < 34) return PutMember();
  if (pick < 41) return FinishPending(false);
  if (pick < 44) return InvalidPut();
  if (pick < 50) return PutUngrouped();
  if (pick < 64) return Get();
  if (pick < 68) return Remove(/*whole_group=*/pick == 67);
  if (pick < 80) {
    const bool memory = pick < 76;
    const std::map<std::string, std::vector<Tier>> kept = Protected(memory);
    const uint64_t need = Chance(rng_, 0.7) ? 0 : Uniform(rng_, 1, 16) * kKiB;
    doing_ = memory ? "EvictMemory(" + std::to_string(need) + ") freed " +
                          std::to_string(master().EvictMemory(need))
                    : "EvictSsd dropped " + std::to_string(master().EvictSsd());
    for (const auto& [key, tiers] : kept) {
      Expect(h_.Tiers(key) == tiers, key +
                                         " (leased or pinned, or in a "
                                         "group with such a member) lost "
                                         "a copy to eviction");
    }
  } else if (pick < 87) {
    doing_ = pick < 85 ? "Tick" : "SweepGroups";
    pick < 85 ? master().Tick() : (void)master().SweepGroups();
    swept_ = true;
  } else if (pick < 94) {
    NodeWork(0.6, Duration(0));
  } else {
    NodeWork(0, milliseconds(Uniform(rng_, 100, 3000)));
  }
}

// ---- Puts ----

Plan& PropertyRun::OpenPlan() {
  if (!open_.empty() &&
      (open_.size() >= kMaxOpenGroups || Chance(rng_, 0.75))) {
    return open_[Uniform(rng_, 0, static_cast<int>(open_.size()) - 1)];
  }
  Plan p;
  p.serial = next_group_++;
  p.id = "g" + std::to_string(p.serial);
  if (!retired_.empty() && Chance(rng_, 0.1)) {  // an id used before
    p.id = retired_.back();
    retired_.pop_back();
  }
  p.size = Uniform(rng_, 2, 8);
  for (uint32_t i = 0; i < p.size; ++i) {
    p.todo.push_back(i);
    p.bytes.push_back(Uniform(rng_, 8, 48) * 64);
  }
  std::shuffle(p.todo.begin(), p.todo.end(), rng_);
  if (Chance(rng_, 0.15)) p.never = Uniform(rng_, 1, p.size - 1);
  groups_.insert(p.id);
  open_.push_back(std::move(p));
  return open_.back();
}

void PropertyRun::PutMember() {
  Plan& plan = OpenPlan();
  if (plan.todo.size() <= plan.never) {
    doing_ = "group " + plan.id + " left unfinished";
    return ClosePlan(plan.id);
  }
  const uint32_t index = plan.todo.front();
  plan.todo.pop_front();
  std::string key =
      plan.id + "." + std::to_string(plan.serial) + "/" + std::to_string(index);
  if (plan.reputs > 0) key += "r" + std::to_string(plan.reputs);
  StartPut(key, plan.bytes[index], GroupSpec{plan.id, plan.size, index},
           plan.serial);
}

void PropertyRun::PutUngrouped() {
  const std::string key =
      "u" + std::to_string(Uniform(rng_, 0, kUngroupedKeys - 1));
  for (const Pending& p : pending_) {
    if (p.key == key) return;  // a repeat of a put in flight is a retry
  }
  StartPut(key, Uniform(rng_, 8, 48) * 64, std::nullopt);
}

void PropertyRun::StartPut(const std::string& key, uint64_t size,
                           const std::optional<GroupSpec>& group, int serial) {
  const bool existed = Describe(key).ok();
  // Only the first member of a group (or of one emptied) meets the cap on
  // DRAM held by filling groups.
  bool new_group = false;
  if (group) {
    Result<GroupDescription> g = Group(group->group_id);
    new_group = !g.ok() || g->members.empty();
  }
  PutStartRequest r{key, size, {group, "", false}, MasterHarness::kClient};
  r.options.preferred_node = Pick(rng_, nodes_).name;  // see the header
  Result<ReplicaDescriptor> got = std::move(master().PutStart({&r, 1})[0]);
  doing_ = "PutStart " + key + " (" + std::to_string(size) +
           " bytes): " + Why(got.status());
  if (!got.ok()) {
    const ErrorReason why = got.status().reason();
    const bool full = why == ErrorReason::kNoSpace ||
                      (new_group && why == ErrorReason::kFillingGroupsFull);
    Expect(full || (existed && why == ErrorReason::kObjectExists) ||
               (group && why == ErrorReason::kGroupNotFilling),
           doing_);
    Expect(Describe(key).ok() == existed, "a failed put changed " + key);
    if (why == ErrorReason::kGroupNotFilling) ClosePlan(group->group_id);
    for (Plan& p : open_) {
      if (full && p.serial == serial) {
        p.todo.push_back(group->group_index);  // later
      }
    }
    return;
  }
  Expect(!existed && got->size == size, "PutStart descriptor of " + key);
  model_[key] = Stored{size, group};
  const int roll = Uniform(rng_, 0, 99);
  if (roll < 60) {
    const Status s = h_.PutEnd(key);
    doing_ += ", PutEnd: " + Why(s);
    return Expect(s.ok(), "PutEnd right after PutStart: " + Why(s));
  }
  Pending p{key, size, group, serial, h_.clock().Now(), got->id, step_};
  p.due += Uniform(rng_, 1, 30);
  if (roll < 72) p.due += 40;  // late: the put timeout may have reaped it
  if (roll >= 84) {
    p.action = roll < 94 ? Pending::kRevoke : Pending::kRetryThenEnd;
  }
  pending_.push_back(std::move(p));
}

void PropertyRun::FinishPending(bool all) {
  doing_ = "finish pending puts:";
  for (size_t i = 0; i < pending_.size();) {
    const Pending p = pending_[i];
    if (!all && p.due > step_) {
      ++i;
      continue;
    }
    pending_.erase(pending_.begin() + i);
    const bool stalled =
        h_.clock().Now() - p.started >= master().config().put_timeout;
    if (p.action == Pending::kRetryThenEnd) {
      PutStartRequest r{p.key,
                        p.size,
                        {p.group, nodes_[0].name, false},
                        MasterHarness::kClient};
      Result<ReplicaDescriptor> again =
          std::move(master().PutStart({&r, 1})[0]);
      doing_ += " retry " + p.key + ": " + Why(again.status());
      // A retry keeps its reservation even in a group that stopped
      // filling: it gets the replica it already has.
      Expect(stalled || (again.ok() && again->id == p.replica),
             "a repeated PutStart of a put in flight: " + Why(again.status()));
      if (again.ok()) model_[p.key] = Stored{p.size, p.group};  // maybe anew
    }
    const bool revoke = p.action == Pending::kRevoke;
    const Status s =
        revoke ? master().PutRevoke(MasterHarness::kClient, {&p.key, 1})[0]
               : h_.PutEnd(p.key);
    doing_ += (revoke ? " revoke " : " end ") + p.key + ": " + Why(s);
    Expect(s.ok() || (stalled && s.reason() == ErrorReason::kObjectNotFound),
           "finishing " + p.key + ": " + Why(s));
    if (s.reason() != ErrorReason::kObjectNotFound && !(s.ok() && revoke)) {
      continue;
    }
    // Revoked or timed out: the index may be put again, by another key.
    Expect(!Describe(p.key).ok(), p.key + " still stored");
    for (Plan& plan : open_) {
      if (p.group && plan.serial == p.serial) {
        ++plan.reputs;
        plan.todo.push_front(p.group->group_index);
      }
    }
  }
}

void PropertyRun::ClosePlan(const std::string& id) {
  open_.erase(std::remove_if(open_.begin(), open_.end(),
                             [&](const Plan& p) { return p.id == id; }),
              open_.end());
}

// A put breaking a group rule fails and changes nothing.
void PropertyRun::InvalidPut() {
  if (groups_.empty()) return;
  const std::string id = RandomGroup();
  Result<GroupDescription> g = Group(id);
  if (!g.ok() || g->members.empty()) return;
  const uint32_t n = g->status.expected;
  GroupSpec bad{id, n, 0};
  ErrorReason want = ErrorReason::kInvalidGroup;
  switch (Uniform(rng_, 0, 3)) {
    case 0:  // a group_size the group does not have
      bad.group_size = n + Uniform(rng_, 1, 3);
      bad.group_index = Uniform(rng_, 0, static_cast<int>(n) - 1);
      break;
    case 1:  // an index already taken, whatever the group's state
      bad.group_index = Pick(rng_, g->members).index;
      want = ErrorReason::kObjectExists;
      break;
    case 2:  // an index beyond the size
      bad.group_index = n + Uniform(rng_, 0, 2);
      break;
    default:  // a size of zero
      bad.group_size = 0;
      break;
  }
  const std::string key = "bad/" + std::to_string(step_);
  const std::string before = Picture(id);
  PutStartRequest r{key, 512, {bad, "", false}, MasterHarness::kClient};
  const Status s = master().PutStart({&r, 1})[0].status();
  doing_ = "invalid put into " + id + " (size " +
           std::to_string(bad.group_size) + ", index " +
           std::to_string(bad.group_index) + "): " + Why(s);
  Expect(s.reason() == want,
         doing_ + ", want " + std::string(ReasonName(want)));
  Expect(!Describe(key).ok(), "the invalid put stored " + key);
  const std::string after = Picture(id);
  Expect(before == after, "an invalid put changed " + id + ":\n    " + before +
                              "\n    " + after);
}

// ---- Reads and removes ----

void PropertyRun::Get() {
  std::vector<std::string> keys(Uniform(rng_, 1, 4));
  for (std::string& k : keys) k = RandomKey();
  std::vector<Result<ObjectReplicas>> got = master().GetReplicaList(keys);
  const bool aon = spec_.visibility == GroupVisibility::kAllOrNothing;
  doing_ = "Get";
  for (size_t i = 0; i < keys.size(); ++i) {
    doing_ += " " + keys[i] + ":" + Why(got[i].status());
    Result<ExistsInfo> e = h_.Exists(keys[i]);  // a read changes no state
    const bool complete =
        e.ok() && e->group && e->group->state == GroupState::kComplete;
    const bool grouped = e.ok() && e->group;
    if (got[i].ok()) {
      auto model = model_.find(keys[i]);
      Expect(model != model_.end() && got[i]->size == model->second.size &&
                 !got[i]->replicas.empty() && e->exists,
             "Get " + keys[i] + ": a wrong size or no replica");
      Expect(!aon || !grouped || complete,
             "Get served " + keys[i] + " of a group that is not complete");
      continue;
    }
    const ErrorReason why = got[i].status().reason();
    Expect(why == ErrorReason::kObjectNotFound ||
               why == ErrorReason::kObjectNotReady ||
               (aon && grouped && !complete &&
                why == ErrorReason::kGroupIncomplete),
           "Get " + keys[i] + ": " + Why(got[i].status()));
  }
}

// Remove of a random key, or RemoveGroup of a random group, checked
// against what the store holds: the refusals that apply (busy: a put in
// flight; leased, unless forced), else OK and everything it covers gone.
void PropertyRun::Remove(bool whole_group) {
  if (whole_group && groups_.empty()) return;
  const std::string key = whole_group ? "" : RandomKey();
  Result<ObjectDescription> d = Describe(key);
  std::string id = whole_group ? RandomGroup() : "";
  if (d.ok() && d->group) id = d->group->group_id;
  Result<GroupDescription> g = Group(id);
  // A member alone under the member policy: its group turns broken.
  const bool member_only =
      !whole_group && !id.empty() && spec_.policy == GroupRemovePolicy::kMember;
  std::vector<std::string> covered;
  if (!id.empty() && !member_only && g.ok()) {
    for (const auto& m : g->members) covered.push_back(m.key);
  } else if (d.ok()) {
    covered.push_back(key);
  }
  const bool force = Chance(rng_, 0.4);
  std::set<ErrorReason> refusals;
  for (const std::string& k : covered) {
    Result<ObjectDescription> m = Describe(k);
    if (!m.ok()) continue;
    if (HasState(*m, ReplicaState::kProcessing)) {
      refusals.insert(ErrorReason::kObjectBusy);
    }
    if (!force && m->lease_deadline > h_.clock().Now()) {
      refusals.insert(ErrorReason::kObjectLeased);
    }
  }
  if (whole_group && !g.ok()) refusals = {ErrorReason::kGroupNotFound};
  if (!whole_group && !d.ok()) refusals = {ErrorReason::kObjectNotFound};
  const std::string before = Picture(id);
  const Status s = whole_group
                       ? master().RemoveGroup({&id, 1}, RemoveOptions{force})[0]
                       : master().Remove({&key, 1}, RemoveOptions{force})[0];
  doing_ = std::string(force ? "forced " : "") +
           (whole_group ? "RemoveGroup " + id : "Remove " + key) + ": " +
           Why(s);
  std::string want;
  for (ErrorReason r : refusals) want += " " + std::string(ReasonName(r));
  Expect(refusals.empty() ? s.ok() : refusals.count(s.reason()) > 0,
         doing_ + ", want" + (want.empty() ? " OK" : want));
  if (!s.ok()) {
    return Expect(id.empty() || Picture(id) == before,
                  "a refused remove changed " + id);
  }
  for (const std::string& k : covered) {
    Expect(!Describe(k).ok(), k + " still stored after " + doing_);
  }
  if (id.empty()) return;
  ClosePlan(id);
  g = Group(id);
  Expect(member_only ? g.ok() && (g->status.state == GroupState::kBroken ||
                                  g->status.state == GroupState::kExpired)
                     : !g.ok(),
         "after " + doing_ + ", group " + id + " is " +
             (g.ok() ? std::string(GroupStateName(g->status.state)) : "gone"));
}

// ---- Nodes and time ----

// Moves the clock by `advance`, heartbeats every node (taking the offloads
// handed out) and reports each held offload done with probability `report`.
void PropertyRun::NodeWork(double report, Duration advance) {
  h_.clock().Advance(advance);
  doing_ = "advance " + std::to_string(advance.count() / 1000000) +
           " ms; offloads done:";
  for (FakeNode& n : nodes_) {
    Result<HeartbeatReply> reply = master().Heartbeat(n.id);
    Expect(reply.ok(), n.name + " heartbeat: " + Why(reply.status()));
    if (reply.ok()) {
      n.held.insert(n.held.end(), reply->offloads.begin(),
                    reply->offloads.end());
    }
    for (size_t i = 0; i < n.held.size();) {
      if (!Chance(rng_, report)) {
        ++i;
        continue;
      }
      const Status s = master().NotifyOffloadSuccess(n.id, n.held[i].id);
      doing_ += " " + n.held[i].key;
      Expect(s.ok(), "offload of " + n.held[i].key + ": " + Why(s));
      n.held.erase(n.held.begin() + i);
    }
  }
}

// Ends what is in flight, drains the tasks and lets every timeout pass:
// afterwards only complete groups may be left.
void PropertyRun::Quiesce() {
  FinishPending(true);
  for (int round = 0; round < 200 && master().Audit().tasks > 0; ++round) {
    NodeWork(1.0, Duration(0));
    master().Tick();
  }
  const MasterConfig& c = master().config();
  for (Duration d : {c.put_timeout, c.group_fill_timeout, c.group_broken_ttl,
                     c.group_broken_ttl}) {
    NodeWork(1.0, d / 2);  // in halves: nodes stay alive
    NodeWork(1.0, d / 2 + seconds(1));
    master().Tick();
  }
  NodeWork(1.0, Duration(0));
  for (const std::string& id : groups_) {
    Result<GroupDescription> g = Group(id);
    Expect(!g.ok() || g->status.state == GroupState::kComplete,
           "after every timeout, group " + id + " is " +
               (g.ok() ? std::string(GroupStateName(g->status.state)) : ""));
  }
  Expect(master().GetStats().pending_puts == 0, "puts still pending");
}

// ---- Invariants ----

void PropertyRun::CheckAll(bool read_all) {
  const AuditReport a = master().Audit();
  Expect(a.consistent(), "Audit() is not consistent");  // (d)
  Expect(a.tasks > 0 || (a.total_refcnt == 0 && a.detached_replicas == 0),
         "pins left with no task booked: " + std::to_string(a.total_refcnt));
  std::set<std::string> booked;
  for (const Task& t : master().ListTasks(TaskKind::kOffload)) {
    booked.insert(t.key);
  }
  std::vector<std::string> complete;
  for (const std::string& id : groups_) {
    Result<GroupDescription> g = Group(id);
    if (g.ok() && g->status.state == GroupState::kComplete) {
      complete.push_back(id);
    }
  }
  const std::string read = complete.empty() ? "" : Pick(rng_, complete);
  for (const std::string& id : groups_) {
    CheckGroup(id, booked, read_all || id == read);
  }
  for (auto it = model_.begin(); it != model_.end();) {
    auto current = it++;
    CheckObject(current->first);
    if (!Describe(current->first).ok()) model_.erase(current);
  }
  RetireGroups();
}

void PropertyRun::CheckGroup(const std::string& id,
                             const std::set<std::string>& booked, bool read) {
  Result<GroupDescription> got = Group(id);
  if (!got.ok()) {
    return Expect(got.status().reason() == ErrorReason::kGroupNotFound,
                  "GetGroup " + id + ": " + Why(got.status()));
  }
  const GroupDescription& g = *got;
  const GroupState state = g.status.state;
  const std::string where =
      "group " + id + " (" + std::string(GroupStateName(state)) + ")";
  uint32_t present = 0, stored = 0;
  bool busy = false;
  for (const GroupDescription::Member& m : g.members) {
    present += m.present;
    Result<ObjectDescription> d = Describe(m.key);
    stored += d.ok();
    busy |= d.ok() && HasState(*d, ReplicaState::kProcessing);
    // The sweep removes an expired group's members but lists them until it
    // collects the group.
    Expect(
        (!d.ok() && state == GroupState::kExpired) ||
            (d.ok() && d->group == GroupSpec{id, g.status.expected, m.index}),
        where + ": member " + m.key + " is not stored as its member");
    if (!d.ok()) continue;
    Expect(HasState(*d, m.present ? ReplicaState::kComplete
                                  : ReplicaState::kProcessing),
           where + ": member " + m.key + " has no replica for its state");
    Result<ExistsInfo> e = h_.Exists(m.key);
    Expect(e.ok() && e->group && e->group->state == state &&
               e->group->present == g.status.present,
           where + ": Exists of " + m.key + " disagrees with GetGroup");
  }
  Expect(present == g.status.present && g.members.size() <= g.status.expected &&
             (state != GroupState::kFilling || present < g.status.expected),
         where + ": counts disagree with the members");
  // Right after a sweep an expired group keeps no member stored, unless a
  // put of one is still in flight (which holds back the removal of all).
  Expect(
      !swept_ || state != GroupState::kExpired || busy || stored == 0,
      where + ": keeps " + std::to_string(stored) + " members after a sweep");
  if (state == GroupState::kComplete) return CheckComplete(g, booked, read);
  if (spec_.visibility != GroupVisibility::kAllOrNothing) return;
  for (const GroupDescription::Member& m : g.members) {  // (c)
    const Status s = h_.Get(m.key).status();
    Expect(s.reason() == ErrorReason::kGroupIncomplete ||
               s.reason() == ErrorReason::kObjectNotReady ||
               (state == GroupState::kExpired &&
                s.reason() == ErrorReason::kObjectNotFound),
           where + ": member " + m.key + " readable: " + Why(s));
  }
}

void PropertyRun::CheckComplete(const GroupDescription& g,
                                const std::set<std::string>& booked,
                                bool read) {
  const std::string where = "complete group " + g.status.group_id;
  const size_t n = g.members.size();
  Expect(g.status.present == g.status.expected && n == g.status.expected,
         where + ": " + std::to_string(n) + " members");
  size_t in_memory = 0, on_disk = 0;
  bool offloading = false;
  for (const GroupDescription::Member& m : g.members) {  // (a)
    Expect(m.present && !m.tiers.empty(),
           where + ": " + m.key + " has no copy");
    in_memory += Has(m.tiers, Tier::kMemory);
    on_disk += Has(m.tiers, Tier::kLocalDisk);
    offloading |= booked.count(m.key) > 0;
    // Stored as its member, of the size put, Exists agreeing: CheckGroup
    // and CheckObject.
    if (!read) continue;
    auto model = model_.find(m.key);
    const uint64_t size = model == model_.end() ? 0 : model->second.size;
    Result<ObjectReplicas> r = h_.Get(m.key);
    Expect(r.ok() && !r->replicas.empty() && r->size == size,
           where + ": " + m.key + " not readable: " + Why(r.status()));
  }
  Expect(in_memory == 0 || in_memory == n,  // (b)
         where + ": " + std::to_string(in_memory) + " of " + std::to_string(n) +
             " members in DRAM");
  Expect(offloading || on_disk == 0 || on_disk == n,
         where + ": " + std::to_string(on_disk) + " of " + std::to_string(n) +
             " members on SSD, no offload booked");
}

void PropertyRun::CheckObject(const std::string& key) {
  Result<ObjectDescription> d = Describe(key);
  if (!d.ok()) return;
  const Stored& want = model_[key];
  Expect(d->size == want.size && d->group == want.group,
         key + " is not the object that was put");
  int memory = 0;
  for (const Replica& r : d->replicas) {
    Expect(r.desc.size == d->size, key + ": a replica of another size");
    memory += r.desc.tier == Tier::kMemory;
  }
  Expect(memory <= 1, key + ": two DRAM replicas");
  Result<ExistsInfo> e = h_.Exists(key);
  Expect(e.ok() && e->exists == HasState(*d, ReplicaState::kComplete),
         key + ": Exists disagrees");
  if (!d->group) return;
  // No orphans: a stored member is listed by its group at its index.
  Result<GroupDescription> g = Group(d->group->group_id);
  Expect(g.ok() && std::any_of(g->members.begin(), g->members.end(),
                               [&](const GroupDescription::Member& m) {
                                 return m.key == key &&
                                        m.index == d->group->group_index;
                               }),
         "member " + key + " is stored but its group does not list it");
}

std::map<std::string, std::vector<Tier>> PropertyRun::Protected(bool memory) {
  const auto held = [&](const std::string& key) {
    Result<ObjectDescription> d = Describe(key);
    if (!d.ok()) return false;
    const bool pinned =
        std::any_of(d->replicas.begin(), d->replicas.end(),
                    [](const Replica& r) { return r.refcnt > 0; });
    return d->lease_deadline > h_.clock().Now() ||
           (pinned && (memory || d->group));
  };
  std::map<std::string, std::vector<Tier>> out;
  for (const auto& [key, stored] : model_) {
    if (!stored.group && held(key)) out[key] = h_.Tiers(key);
  }
  for (const std::string& id : groups_) {
    Result<GroupDescription> g = Group(id);
    if (!g.ok() || std::none_of(g->members.begin(), g->members.end(),
                                [&](const auto& m) { return held(m.key); })) {
      continue;
    }
    for (const auto& m : g->members) out[m.key] = h_.Tiers(m.key);
  }
  return out;
}

// Groups gone, with no put of theirs open or in flight, leave the walk.
void PropertyRun::RetireGroups() {
  std::set<std::string> used;
  for (const Plan& p : open_) used.insert(p.id);
  for (const Pending& p : pending_) {
    if (p.group) used.insert(p.group->group_id);
  }
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (used.count(*it) || Group(*it).ok()) {
      ++it;
      continue;
    }
    retired_.push_back(*it);
    it = groups_.erase(it);
  }
}

std::string PropertyRun::Picture(const std::string& id) {
  std::ostringstream out;
  if (Result<GroupDescription> g = Group(id); g.ok()) {
    out << GroupStateName(g->status.state) << " " << g->status.present << "/"
        << g->status.expected;
    for (const GroupDescription::Member& m : g->members) {
      out << " [" << m.index << " " << m.key << " " << m.present;
      for (Tier t : m.tiers) out << " " << TierName(t);
      out << "]";
    }
  }
  const AuditReport a = master().Audit();
  out << " dram=" << a.allocated_memory_bytes << " ssd=" << a.ssd_used_bytes
      << " tasks=" << a.tasks << " objects=" << master().GetStats().objects;
  return out.str();
}

std::string PropertyRun::RandomKey() {
  if (model_.empty() || Chance(rng_, 0.1)) {
    return "u" + std::to_string(Uniform(rng_, 0, kUngroupedKeys - 1));
  }
  auto it = model_.begin();
  std::advance(it, Uniform(rng_, 0, static_cast<int>(model_.size()) - 1));
  return it->first;
}

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
}  // namespace mooncake_tier
