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
    const NodeSpec& spec, std::span<const SsdInventoryEntry> inventory,
    std::span<const DramEntry> dram) {
  NodeId replaced = kNoNode;
  // The ranges the node's directory lists are taken before the node can be
  // placed on: a put placed there while its objects are being taken back
  // would find its range in use (or, worse, write over a committed object
  // restored just after). What is not kept is freed as its entry is
  // dropped.
  std::vector<NodeRegistry::HeldRange> held;
  held.reserve(dram.size());
  for (const DramEntry& entry : dram)
    held.push_back({entry.offset, entry.size});
  std::vector<bool> held_taken;
  NodeRegistry::Registration how;
  // The node's task queues (and its directory's log) exist before anything
  // can be placed on it.
  how.before_visible = [this, &spec](NodeId fresh) {
    s_.lifecycle.AddNode(fresh);
    if (spec.keeps_directory) s_.directory.AddNode(fresh);
  };
  how.held = held;
  how.held_taken = &held_taken;
  GrantsRunOut(spec, &how);
  MT_ASSIGN_OR_RETURN(const NodeId id, s_.nodes.Register(spec, &replaced, how));
  s_.counters.nodes_registered.fetch_add(1, std::memory_order_relaxed);
  if (replaced != kNoNode) {
    // The previous incarnation's replicas go; what the node still holds
    // comes back below, from its directory and its SSD inventory.
    s_.counters.nodes_expired.fetch_add(1, std::memory_order_relaxed);
    DropNodeReplicas(replaced);
  }
  // DRAM first: a key the node holds in both tiers is one object, and its
  // DRAM copy is the one readers take.
  for (size_t i = 0; i < dram.size(); ++i) {
    const DramEntry& entry = dram[i];
    RestoreCopy(id, Copy{entry.key, entry.size, entry.group, entry.offset,
                         held_taken[i]});
  }
  for (const SsdInventoryEntry& entry : inventory) {
    RestoreCopy(id, Copy{entry.key, entry.size, entry.group, std::nullopt});
  }
  return id;
}

void NodeService::GrantsRunOut(const NodeSpec& spec,
                               NodeRegistry::Registration* how) const {
  // A fresh node process holds no grant: its segment is new.
  if (!spec.resumed) return;
  const MasterConfig& config = s_.config;
  // Put grants and location grants alike: a write into, or a cached read
  // of, a range handed out before.
  const Duration window = config.LongestGrant();
  // A predecessor's grants (this master restarted, or leads a new term).
  how->fenced_until = s_.started + config.inherited_grant_window.value_or(
                                       window + config.late_write_margin);
  // Grants of this master to the node's earlier registration.
  how->fenced_until_if_known =
      s_.clock->Now() + window + config.late_write_margin;
}

void NodeService::RestoreCopy(NodeId node, const Copy& copy) {
  if (!ValidateKey(copy.key).ok() || copy.size == 0 ||
      (copy.group && !ValidateGroupSpec(*copy.group).ok())) {
    // A record the master cannot represent: an SSD record stays on the
    // node; a DRAM entry goes from its directory (its range is not
    // reserved here, so it is free for new puts).
    if (copy.dram_offset) DiscardDramEntry(node, copy);
    return;
  }
  if (!copy.group) {
    RestoreObject(node, copy,
                  [](GroupMeta::Reservation*) { return GroupRef(); });
    return;
  }
  // The member rejoins its group: group stripe first, then the object.
  const GroupSpec& spec = *copy.group;
  s_.index.UpdateGroup(spec.group_id, [&](GroupSlot& slot) {
    const bool created = !slot;
    GroupMeta& group = created ? slot.Create() : *slot;
    // A DRAM member of a filling group counts in the filling cap.
    FillingDelta filling(&s_.filling_group_bytes, &group);
    const TimePoint now = s_.clock->Now();
    bool reserved = false;
    const bool restored =
        RestoreObject(node, copy, [&](GroupMeta::Reservation* reservation) {
          // Fails harmlessly when the member is already known (another
          // copy).
          reserved = slot.Reserve(spec, copy.key, now, reservation).ok();
          if (!reserved) return GroupRef();
          // A DRAM member counts in the group's filling DRAM, as its put
          // did.
          group.BindPut(*reservation, HashKey(copy.key),
                        copy.dram_offset ? copy.size : 0);
          return group.record;
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
      filling.Dropped();
      slot.Erase();
    }
  });
}

void NodeService::DiscardDramEntry(NodeId node, const Copy& copy) {
  if (!copy.range_held) {
    s_.directory.Discard(node, copy.key, *copy.dram_offset);
  } else if (!s_.directory.DropThenFree(node, copy.key, *copy.dram_offset,
                                        copy.size)) {
    s_.nodes.FreeMemory(node, *copy.dram_offset, copy.size);
  }
}

bool NodeService::RestoreObject(NodeId node, const Copy& copy, JoinFn join) {
  const bool dram = copy.dram_offset.has_value();
  return s_.index.Update(
      copy.key, [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                    object_stripe_role) {
        const bool inserted = !object;
        if (!inserted) {
          const ObjectMeta& meta = *object;
          // A different object now owns the key, or this copy (or, for
          // DRAM, any DRAM copy: one per object) is already known: the
          // node's copy is stale or redundant.
          const bool same =
              meta.size == copy.size && meta.HasGroup(copy.group) &&
              (dram ? !meta.HasComplete(Tier::kMemory) && !meta.PutInFlight()
                    : meta.FindDisk(node) == nullptr);
          if (!same) {
            if (dram) {
              DiscardDramEntry(node, copy);
            } else if (meta.FindDisk(node) == nullptr) {
              s_.lifecycle.QueueSsdDelete(node, copy.key);
            }
            return false;
          }
        }
        // Its range was taken at registration unless it lies outside the
        // segment or overlaps an earlier entry (which the node's directory
        // prevents): then the first is kept.
        if (dram && !copy.range_held) {
          DiscardDramEntry(node, copy);
          return false;
        }
        ObjectMeta& meta = inserted ? object.Insert() : *object;
        if (inserted) {
          meta.size = copy.size;
          if (copy.group) meta.group_index = copy.group->group_index;
          meta.last_access = s_.clock->Now();
        }
        if (copy.group) {
          // The copy is restored: the object joins its group's incarnation
          // if the group takes it. A new copy the group does not take (its
          // index is someone else's, or the group is not filling) gets a
          // record of its own that never completes, so it never reads as a
          // member; a known object keeps its own.
          GroupMeta::Reservation reservation;
          if (GroupRef record = join(&reservation)) {
            meta.group = std::move(record);
          } else if (inserted) {
            meta.group =
                GroupRecord::Make(copy.group->group_id, copy.group->group_size);
          }
        }
        if (dram) {
          ReplicaDescriptor desc;
          desc.id = s_.NextReplicaId();
          desc.tier = Tier::kMemory;
          desc.state = ReplicaState::kComplete;
          desc.node = node;
          desc.offset = *copy.dram_offset;
          desc.size = copy.size;
          meta.replicas.insert(meta.replicas.begin(), Replica{desc, 0});
          s_.counters.dram_restored.fetch_add(1, std::memory_order_relaxed);
        } else {
          s_.AddDiskReplica(meta, node);
          s_.counters.inventory_restored.fetch_add(1,
                                                   std::memory_order_relaxed);
        }
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

void NodeService::InterruptPull(NodeId node) {
  s_.lifecycle.Interrupt(node);
  s_.directory.Interrupt(node);
}

Result<DirectoryChanges> NodeService::SyncDirectory(NodeId node, uint64_t acked,
                                                    uint32_t max_changes,
                                                    TimePoint wait_until) {
  // A node recording placements is alive.
  MT_RETURN_IF_ERROR(s_.nodes.Heartbeat(node));
  const TimePoint now = s_.clock->Now();
  const Duration wait = wait_until > now ? wait_until - now : Duration::zero();
  return s_.directory.Sync(node, acked, max_changes, wait);
}

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
  // Its directory's log first (puts waiting for it fail; nothing of the
  // segment is freed any more), then its tasks, so no report of theirs can
  // act on replicas dropped below; its detached replicas are forgotten
  // (the segment is gone).
  s_.directory.DropNode(node);
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
      s_.ReleaseReplicaLocked(meta, object.key(), replica,
                              /*node_alive=*/false);
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
