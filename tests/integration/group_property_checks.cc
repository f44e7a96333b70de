// The invariants of the group property walk (group_property_run.h),
// checked after every step: (a) to (d) of group_property_test.cc, no
// orphans, objects keep their size; and what the walk's checks compare: the
// objects eviction must spare, a picture of a group and the store, the
// groups retired from the walk.

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/group_property_run.h"

namespace mooncake_tier::group_property {

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

}  // namespace mooncake_tier::group_property
