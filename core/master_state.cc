#include "core/master_state.h"

#include <memory>
#include <string>
#include <utility>

#include "core/two_choice_strategy.h"

namespace mooncake_tier {

MasterState::MasterState(MasterConfig start, const Clock* clock_in)
    : config(std::move(start)),
      knobs(config),
      clock(clock_in),
      started(clock_in->Now()),
      index(config.shard_count, config.group_shard_count),
      nodes(clock_in, config.dram_alignment,
            std::make_unique<TwoChoiceStrategy>(), config.first_node_id),
      lifecycle(clock_in, &index, &nodes, config.promotion, &directory),
      directory([this](NodeId node, uint64_t offset, uint64_t size,
                       TimePoint reuse_after) {
        nodes.FreeMemory(node, offset, size, reuse_after);
        space.Notify();
      }) {}

void MasterState::ReleaseReplicaLocked(const ObjectMeta& meta,
                                       std::string_view key,
                                       const Replica& replica,
                                       bool node_alive) {
  const ReplicaDescriptor& d = replica.desc;
  if (d.tier == Tier::kMemory) {
    if (!node_alive) return;  // the segment is gone with the node
    // Only a complete copy was ever given to readers.
    const TimePoint reuse_after = d.state == ReplicaState::kComplete
                                      ? meta.read_grant_until
                                      : TimePoint::min();
    if (replica.refcnt > 0) {
      lifecycle.Detach(replica, reuse_after);  // freed at the last unpin
    } else if (d.state != ReplicaState::kComplete ||
               !directory.DropThenFree(d.node, key, d.offset, d.size,
                                       reuse_after)) {
      // Never committed (nothing lists it), or its node keeps no directory.
      nodes.FreeMemory(d.node, d.offset, d.size, reuse_after);
      space.Notify();
    }
    return;
  }
  nodes.AddSsdUsed(d.node, -static_cast<int64_t>(d.size));
  if (node_alive) lifecycle.QueueSsdDelete(d.node, std::string(key));
}

void MasterState::DropObjectLocked(ObjectSlot& object) {
  for (const Replica& r : object->replicas) {
    ReleaseReplicaLocked(*object, object.key(), r, /*node_alive=*/true);
  }
  object.Erase();
}

void MasterState::AddDiskReplica(ObjectMeta& meta, NodeId node) {
  ReplicaDescriptor disk;
  disk.id = NextReplicaId();
  disk.tier = Tier::kLocalDisk;
  disk.state = ReplicaState::kComplete;
  disk.node = node;
  disk.size = meta.size;
  meta.replicas.push_back(Replica{disk, 0});
  meta.disk_since = clock->Now();
  nodes.AddSsdUsed(node, static_cast<int64_t>(meta.size));
}

}  // namespace mooncake_tier
