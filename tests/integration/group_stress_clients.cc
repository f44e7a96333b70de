// The client threads of GroupStress (group_stress.h): puts of group
// members in random order (retried after NO_SPACE or a revoke, finished
// late or revoked), reads, GetGroup and Exists probes and removes, each
// answer checked against the set the contract allows.

#include <algorithm>
#include <string>
#include <vector>

#include "tests/integration/group_stress.h"

namespace mooncake_tier::group_stress {

// ---- Clients ----

void GroupStress::ClientLoop(int c) {
  Rng rng(seed_ + 100 + c);
  std::vector<InFlight> in_flight;
  std::vector<Item> retry;  // NO_SPACE or revoked: put again later
  for (int op = 0;; ++op) {
    rounds_.ArriveAndAwait(c, op / kOpsPerRound);
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
  rounds_.SetExcused(c, true);  // done: the driver no longer waits for it
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

}  // namespace mooncake_tier::group_stress
