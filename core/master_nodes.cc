// Master: node lifecycle (register, heartbeat, expiry, deregistration) and
// SSD inventory.

#include <algorithm>

#include "core/master.h"
#include "core/validation.h"

namespace mooncake_tier {

Result<NodeId> Master::RegisterNode(
    const NodeSpec& spec, std::span<const SsdInventoryEntry> inventory) {
  NodeId replaced = kNoNode;
  // The node's task queues exist before anything can be placed on it.
  MT_ASSIGN_OR_RETURN(const NodeId id,
                      nodes_.Register(spec, &replaced, [this](NodeId fresh) {
                        lifecycle_.AddNode(fresh);
                      }));
  counters_.nodes_registered.fetch_add(1, std::memory_order_relaxed);
  if (replaced != kNoNode) {
    // The previous incarnation's DRAM is gone; its SSD comes back below.
    counters_.nodes_expired.fetch_add(1, std::memory_order_relaxed);
    DropNodeReplicas(replaced);
  }
  for (const SsdInventoryEntry& entry : inventory) {
    RestoreInventoryEntry(id, entry);
  }
  return id;
}

void Master::RestoreInventoryEntry(NodeId node,
                                   const SsdInventoryEntry& entry) {
  if (!ValidateKey(entry.key).ok() || entry.size == 0 ||
      (entry.group && !ValidateGroupSpec(*entry.group).ok())) {
    return;  // a record the master cannot represent; the node keeps it
  }
  if (!entry.group) {
    RestoreObject(node, entry, [] { return GroupRef(); });
    return;
  }
  // The member rejoins its group: group stripe first, then the object.
  const GroupSpec& spec = *entry.group;
  index_.UpdateGroup(spec.group_id, [&](GroupSlot& slot) {
    const bool created = !slot;
    GroupMeta& group = created ? slot.Create() : *slot;
    const TimePoint now = clock_->Now();
    bool reserved = false;
    const bool restored = RestoreObject(node, entry, [&] {
      // Fails harmlessly when the member is already known (another copy).
      reserved = slot.Reserve(spec, entry.key, now).ok();
      return reserved ? group.record : GroupRef();
    });
    if (reserved) {
      if (created) {
        group_counters_.groups_created.fetch_add(1, std::memory_order_relaxed);
      }
      // The last member makes the group complete and every member readable.
      if (group.MarkPresent(spec.group_index, now)) {
        group_counters_.groups_completed.fetch_add(1,
                                                   std::memory_order_relaxed);
      }
    } else if (group.Empty() && (created || restored)) {
      // Nothing joined: drop an entry made for this copy, or one that a
      // failed reservation left empty (a stale copy leaves a kept record,
      // such as an expired group's, alone).
      slot.Erase();
    }
  });
}

bool Master::RestoreObject(NodeId node, const SsdInventoryEntry& entry,
                           JoinFn join) {
  return index_.Update(entry.key, [&](ObjectSlot& object) {
    const bool inserted = !object;
    ObjectMeta& meta = inserted ? object.Insert() : *object;
    if (inserted) {
      meta.size = entry.size;
      if (entry.group) meta.group_index = entry.group->group_index;
      meta.last_access = clock_->Now();
    } else if (meta.size != entry.size || !meta.HasGroup(entry.group) ||
               meta.FindDisk(node) != nullptr) {
      // A different object now owns the key (or it is already known here):
      // the node's copy is stale.
      if (meta.FindDisk(node) == nullptr) {
        lifecycle_.QueueSsdDelete(node, entry.key);
      }
      return false;
    }
    if (entry.group) {
      // The copy is restored: the object joins its group's incarnation if the
      // group takes it. A new copy the group does not take (its index is
      // someone else's, or the group is not filling) gets a record of its
      // own that never completes, so it never reads as a member; a known
      // object keeps its own.
      if (GroupRef record = join()) {
        meta.group = std::move(record);
      } else if (inserted) {
        meta.group =
            GroupRecord::Make(entry.group->group_id, entry.group->group_size);
      }
    }
    AddDiskReplica(meta, node);
    counters_.inventory_restored.fetch_add(1, std::memory_order_relaxed);
    return true;
  });
}

Status Master::Heartbeat(NodeId node, const std::optional<SsdReport>& ssd) {
  MT_RETURN_IF_ERROR(nodes_.Heartbeat(node));
  if (!ssd) return Status::Ok();
  const std::optional<NodeView> before = nodes_.Get(node);
  nodes_.ReportSsd(node, *ssd);
  // Writes refused for room since the last report: offloads there wait,
  // and the next SSD eviction round makes room.
  const bool refused =
      before && before->ssd_report &&
      ssd->no_space_refusals > before->ssd_report->no_space_refusals;
  const bool paused = nodes_.OffloadsPaused(node, clock_->Now());
  if (refused && !paused) {
    nodes_.PauseOffloads(node, clock_->Now(), kOffloadPause, kMaxOffloadPause);
    counters_.offload_pauses.fetch_add(1, std::memory_order_relaxed);
  } else if (!refused && paused && SsdReportShowsRoom(*ssd)) {
    // SSD eviction and compaction made room: offloads go on now instead of
    // when the pause runs out (up to kMaxOffloadPause; DRAM writers wait
    // for them). Without room the pause runs its course.
    nodes_.EndOffloadPause(node);
  }
  return Status::Ok();
}

Result<NodeTasks> Master::PullTasks(NodeId node, uint32_t max_tasks,
                                    TimePoint wait_until) {
  // A waiting pull looks again at least this often (real time): its
  // deadline comes from the engine's clock, which may be a test's, and a
  // node that died meanwhile must not keep a server thread.
  constexpr Duration kPoll = std::chrono::milliseconds(50);
  const RealDeadline real_end(clock_->Now(), wait_until);
  while (true) {
    // A node asking for work is alive: a pull counts as a heartbeat.
    MT_RETURN_IF_ERROR(nodes_.Heartbeat(node));
    NodeTasks tasks = lifecycle_.Dispatch(
        node, std::min(max_tasks, knobs_.offload_max_per_pull()),
        config_.ssd_deletes_per_pull,
        std::min(max_tasks, lifecycle_.gate().options().max_per_pull));
    const TimePoint now = clock_->Now();
    if (!tasks.ssd_deletes.empty() || !tasks.offloads.empty() ||
        !tasks.promotions.empty() || max_tasks == 0) {
      return tasks;
    }
    // Nothing queued while its writeback is behind: the node's demand runs
    // a round (writeback paced by what the SSD takes, not by the tick).
    if (RefillWriteback(node)) continue;
    if (now >= wait_until || real_end.passed()) return tasks;
    if (lifecycle_.WaitForWork(node, std::min<Duration>(kPoll, wait_until - now)) &&
        !lifecycle_.HasWork(node)) {
      return NodeTasks{};  // interrupted: the node is stopping
    }
  }
}

void Master::InterruptPull(NodeId node) { lifecycle_.Interrupt(node); }

void Master::ReportSsdCorruption(NodeId node,
                                 std::span<const std::string> keys) {
  std::vector<std::pair<GroupSpec, std::string>> lost;
  for (const std::string& key : keys) {
    counters_.ssd_corruptions.fetch_add(1, std::memory_order_relaxed);
    index_.Update(key, [&](ObjectSlot& object) {
      if (!object) return;
      Replica* disk = object->FindDisk(node);
      if (disk == nullptr) return;
      const Replica replica = *disk;
      object->Erase(replica.desc.id);
      // The node already dropped the record; only the accounting remains.
      nodes_.AddSsdUsed(node, -static_cast<int64_t>(replica.desc.size));
      if (object->replicas.empty()) {
        counters_.objects_lost.fetch_add(1, std::memory_order_relaxed);
        if (object->group) lost.emplace_back(*object->group_spec(), key);
      }
      object.EraseIfEmpty();
    });
  }
  LoseMembers(lost, BreakCause::kCorrupt);
}

size_t Master::ExpireNodes() {
  const std::vector<NodeId> dead = nodes_.ExpireSilent(config_.node_ttl);
  for (NodeId node : dead) {
    counters_.nodes_expired.fetch_add(1, std::memory_order_relaxed);
    DropNodeReplicas(node);
  }
  return dead.size();
}

Status Master::DeregisterNode(NodeId node) {
  // The registry retires the node first, under its lock: nothing is placed
  // on it from here on, and a concurrent ExpireNodes or re-registration
  // cannot also drop its replicas (only one of them finds it registered).
  MT_RETURN_IF_ERROR(nodes_.Deregister(node));
  counters_.nodes_deregistered.fetch_add(1, std::memory_order_relaxed);
  DropNodeReplicas(node);
  return Status::Ok();
}

void Master::DropNodeReplicas(NodeId node) {
  // Tasks first, so no report of theirs can act on replicas dropped below;
  // its detached replicas are forgotten (the segment is gone).
  lifecycle_.DropNode(node);
  std::vector<std::pair<GroupSpec, std::string>> lost;
  index_.ForEachObject([&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                           object_stripe_role) {
    ObjectMeta& meta = *object;
    bool touched = false;
    for (size_t i = meta.replicas.size(); i-- > 0;) {
      if (meta.replicas[i].desc.node != node) continue;
      const Replica replica = meta.replicas[i];
      meta.replicas.erase(meta.replicas.begin() + i);
      ReleaseReplicaLocked(object.key(), replica, /*node_alive=*/false);
      touched = true;
    }
    if (!touched) return;
    if (!meta.PutInFlight()) object.ClearPutPending();
    if (meta.replicas.empty()) {
      counters_.objects_lost.fetch_add(1, std::memory_order_relaxed);
      if (meta.group) {
        lost.emplace_back(*meta.group_spec(), std::string(object.key()));
      }
      object.Erase();  // with its put mark
    }
  });
  // Group stripes rank before object stripes: after the walk.
  LoseMembers(lost, BreakCause::kNodeLost);
}

void Master::AddDiskReplica(ObjectMeta& meta, NodeId node) {
  ReplicaDescriptor disk;
  disk.id = NextReplicaId();
  disk.tier = Tier::kLocalDisk;
  disk.state = ReplicaState::kComplete;
  disk.node = node;
  disk.size = meta.size;
  meta.replicas.push_back(Replica{disk, 0});
  nodes_.AddSsdUsed(node, static_cast<int64_t>(meta.size));
}

std::optional<NodeView> Master::GetNode(NodeId node) const {
  return nodes_.Get(node);
}

Result<NodeView> Master::FindNode(NodeId node) const {
  std::optional<NodeView> view = nodes_.Get(node);
  if (!view) {
    return Status(ErrorReason::kNodeNotFound,
                  "node " + std::to_string(node) + " is not registered");
  }
  return *std::move(view);
}

std::vector<NodeView> Master::ListNodes() const { return nodes_.List(); }

}  // namespace mooncake_tier
