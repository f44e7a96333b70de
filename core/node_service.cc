// Master: node lifecycle (register, heartbeat, expiry, deregistration) and
// SSD inventory.

#include "core/node_service.h"

#include <algorithm>

#include "core/validation.h"

namespace mooncake_tier {

NodeService::NodeService(MasterState* state, ObjectService* objects,
                         Tiering* tiering, Offloader* offloader)
    : s_(*state),
      objects_(*objects),
      tiering_(*tiering),
      offloader_(*offloader) {}

Result<NodeId> NodeService::RegisterNode(
    const NodeSpec& spec, std::span<const SsdInventoryEntry> inventory) {
  NodeId replaced = kNoNode;
  // The node's task queues exist before anything can be placed on it.
  MT_ASSIGN_OR_RETURN(const NodeId id,
                      s_.nodes.Register(spec, &replaced, [this](NodeId fresh) {
                        s_.lifecycle.AddNode(fresh);
                      }));
  s_.counters.nodes_registered.fetch_add(1, std::memory_order_relaxed);
  if (replaced != kNoNode) {
    // The previous incarnation's DRAM is gone; its SSD comes back below.
    s_.counters.nodes_expired.fetch_add(1, std::memory_order_relaxed);
    DropNodeReplicas(replaced);
  }
  for (const SsdInventoryEntry& entry : inventory) {
    RestoreInventoryEntry(id, entry);
  }
  return id;
}

void NodeService::RestoreInventoryEntry(NodeId node,
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
  s_.index.UpdateGroup(spec.group_id, [&](GroupSlot& slot) {
    const bool created = !slot;
    GroupMeta& group = created ? slot.Create() : *slot;
    const TimePoint now = s_.clock->Now();
    bool reserved = false;
    const bool restored = RestoreObject(node, entry, [&] {
      // Fails harmlessly when the member is already known (another copy).
      reserved = slot.Reserve(spec, entry.key, now).ok();
      return reserved ? group.record : GroupRef();
    });
    if (reserved) {
      if (created) {
        s_.group_counters.groups_created.fetch_add(1,
                                                   std::memory_order_relaxed);
      }
      // The last member makes the group complete and every member readable.
      if (group.MarkPresent(spec.group_index, now)) {
        s_.group_counters.groups_completed.fetch_add(1,
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

bool NodeService::RestoreObject(NodeId node, const SsdInventoryEntry& entry,
                                JoinFn join) {
  return s_.index.Update(
      entry.key, [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                     object_stripe_role) {
        const bool inserted = !object;
        ObjectMeta& meta = inserted ? object.Insert() : *object;
        if (inserted) {
          meta.size = entry.size;
          if (entry.group) meta.group_index = entry.group->group_index;
          meta.last_access = s_.clock->Now();
        } else if (meta.size != entry.size || !meta.HasGroup(entry.group) ||
                   meta.FindDisk(node) != nullptr) {
          // A different object now owns the key (or it is already known here):
          // the node's copy is stale.
          if (meta.FindDisk(node) == nullptr) {
            s_.lifecycle.QueueSsdDelete(node, entry.key);
          }
          return false;
        }
        if (entry.group) {
          // The copy is restored: the object joins its group's incarnation if
          // the group takes it. A new copy the group does not take (its index
          // is someone else's, or the group is not filling) gets a record of
          // its own that never completes, so it never reads as a member; a
          // known object keeps its own.
          if (GroupRef record = join()) {
            meta.group = std::move(record);
          } else if (inserted) {
            meta.group = GroupRecord::Make(entry.group->group_id,
                                           entry.group->group_size);
          }
        }
        s_.AddDiskReplica(meta, node);
        s_.counters.inventory_restored.fetch_add(1, std::memory_order_relaxed);
        return true;
      });
}

Status NodeService::Heartbeat(NodeId node,
                              const std::optional<SsdReport>& ssd) {
  MT_RETURN_IF_ERROR(s_.nodes.Heartbeat(node));
  if (!ssd) return Status::Ok();
  const std::optional<NodeView> before = s_.nodes.Get(node);
  s_.nodes.ReportSsd(node, *ssd);
  // Writes refused for room since the last report: offloads there wait,
  // and the next SSD eviction round makes room.
  const bool refused =
      before && before->ssd_report &&
      ssd->no_space_refusals > before->ssd_report->no_space_refusals;
  const bool paused = s_.nodes.OffloadsPaused(node, s_.clock->Now());
  if (refused && !paused) {
    offloader_.PauseFor(node);
  } else if (!refused && paused && SsdReportShowsRoom(*ssd)) {
    // SSD eviction and compaction made room: offloads go on now instead of
    // when the pause runs out (up to Offloader::kMaxPause; DRAM writers wait
    // for them). Without room the pause runs its course.
    s_.nodes.EndOffloadPause(node);
  }
  return Status::Ok();
}

Result<NodeTasks> NodeService::PullTasks(NodeId node, uint32_t max_tasks,
                                         TimePoint wait_until) {
  // A waiting pull looks again at least this often (real time): its
  // deadline comes from the engine's clock, which may be a test's, and a
  // node that died meanwhile must not keep a server thread.
  constexpr Duration kPoll = std::chrono::milliseconds(50);
  const RealDeadline real_end(s_.clock->Now(), wait_until);
  while (true) {
    // A node asking for work is alive: a pull counts as a heartbeat.
    MT_RETURN_IF_ERROR(s_.nodes.Heartbeat(node));
    NodeTasks tasks = s_.lifecycle.Dispatch(
        node, std::min(max_tasks, s_.knobs.offload_max_per_pull()),
        s_.config.ssd_deletes_per_pull,
        std::min(max_tasks, s_.lifecycle.gate().options().max_per_pull));
    const TimePoint now = s_.clock->Now();
    if (!tasks.ssd_deletes.empty() || !tasks.offloads.empty() ||
        !tasks.promotions.empty() || max_tasks == 0) {
      return tasks;
    }
    // Nothing queued while its writeback is behind: the node's demand runs
    // a round (writeback paced by what the SSD takes, not by the tick).
    if (tiering_.RefillWriteback(node)) continue;
    if (now >= wait_until || real_end.passed()) return tasks;
    const Duration wait = std::min<Duration>(kPoll, wait_until - now);
    if (s_.lifecycle.WaitForWork(node, wait) && !s_.lifecycle.HasWork(node)) {
      return NodeTasks{};  // interrupted: the node is stopping
    }
  }
}

void NodeService::InterruptPull(NodeId node) { s_.lifecycle.Interrupt(node); }

void NodeService::ReportSsdCorruption(NodeId node,
                                      std::span<const std::string> keys) {
  std::vector<std::pair<GroupSpec, std::string>> lost;
  for (const std::string& key : keys) {
    s_.counters.ssd_corruptions.fetch_add(1, std::memory_order_relaxed);
    s_.index.Update(key, [&](ObjectSlot& object) {
      if (!object) return;
      Replica* disk = object->FindDisk(node);
      if (disk == nullptr) return;
      const Replica replica = *disk;
      object->Erase(replica.desc.id);
      // The node already dropped the record; only the accounting remains.
      s_.nodes.AddSsdUsed(node, -static_cast<int64_t>(replica.desc.size));
      if (object->replicas.empty()) {
        s_.counters.objects_lost.fetch_add(1, std::memory_order_relaxed);
        if (object->group) lost.emplace_back(*object->group_spec(), key);
      }
      object.EraseIfEmpty();
    });
  }
  objects_.LoseMembers(lost, BreakCause::kCorrupt);
}

size_t NodeService::ExpireNodes() {
  const std::vector<NodeId> dead = s_.nodes.ExpireSilent(s_.config.node_ttl);
  for (NodeId node : dead) {
    s_.counters.nodes_expired.fetch_add(1, std::memory_order_relaxed);
    DropNodeReplicas(node);
  }
  return dead.size();
}

Status NodeService::DeregisterNode(NodeId node) {
  // The registry retires the node first, under its lock: nothing is placed
  // on it from here on, and a concurrent ExpireNodes or re-registration
  // cannot also drop its replicas (only one of them finds it registered).
  MT_RETURN_IF_ERROR(s_.nodes.Deregister(node));
  s_.counters.nodes_deregistered.fetch_add(1, std::memory_order_relaxed);
  DropNodeReplicas(node);
  return Status::Ok();
}

void NodeService::DropNodeReplicas(NodeId node) {
  // Tasks first, so no report of theirs can act on replicas dropped below;
  // its detached replicas are forgotten (the segment is gone).
  s_.lifecycle.DropNode(node);
  std::vector<std::pair<GroupSpec, std::string>> lost;
  s_.index.ForEachObject([&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                             object_stripe_role) {
    ObjectMeta& meta = *object;
    bool touched = false;
    for (size_t i = meta.replicas.size(); i-- > 0;) {
      if (meta.replicas[i].desc.node != node) continue;
      const Replica replica = meta.replicas[i];
      meta.replicas.erase(meta.replicas.begin() + i);
      s_.ReleaseReplicaLocked(object.key(), replica, /*node_alive=*/false);
      touched = true;
    }
    if (!touched) return;
    if (!meta.PutInFlight()) object.ClearPutPending();
    if (meta.replicas.empty()) {
      s_.counters.objects_lost.fetch_add(1, std::memory_order_relaxed);
      if (meta.group) {
        lost.emplace_back(*meta.group_spec(), std::string(object.key()));
      }
      object.Erase();  // with its put mark
    }
  });
  // Group stripes rank before object stripes: after the walk.
  objects_.LoseMembers(lost, BreakCause::kNodeLost);
}

std::optional<NodeView> NodeService::GetNode(NodeId node) const {
  return s_.nodes.Get(node);
}

Result<NodeView> NodeService::FindNode(NodeId node) const {
  std::optional<NodeView> view = s_.nodes.Get(node);
  if (!view) {
    return Status(ErrorReason::kNodeNotFound,
                  "node " + std::to_string(node) + " is not registered");
  }
  return *std::move(view);
}

std::vector<NodeView> NodeService::ListNodes() const { return s_.nodes.List(); }

}  // namespace mooncake_tier
