// The steps of the group property walk (group_property_run.h): puts
// (grouped, ungrouped, finished late, revoked, invalid), reads, removes,
// evictions, background work, node heartbeats and offload reports, clock
// moves, and the quiesce at the end. Each step checks what its own answer
// must be; group_property_checks.cc checks the whole store after it.

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/group_property_run.h"

namespace mooncake_tier::group_property {

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
    Status alive = master().Heartbeat(n.id);
    Result<NodeTasks> reply =
        alive.ok() ? master().PullTasks(n.id) : Result<NodeTasks>(alive);
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

}  // namespace mooncake_tier::group_property
