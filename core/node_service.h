#pragma once

// The part of the master that answers storage nodes: registration (and
// the objects rebuilt from a node's SSD inventory), heartbeats, task pulls
// (a long poll), a node's loss (expiry, deregistration) and its reports of
// corrupt SSD records. Task reports go to the task lifecycle directly.
//
// Thread safety: thread-safe. PullTasks may block while it waits for work
// (never holding a lock).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "core/master_state.h"
#include "core/object_service.h"
#include "core/offloader.h"
#include "core/tiering.h"
#include "mooncake_tier/status.h"
#include "protocol/messages.h"
#include "protocol/node.h"

namespace mooncake_tier {

class NodeService {
 public:
  NodeService(MasterState* state, ObjectService* objects, Tiering* tiering,
              Offloader* offloader);
  NodeService(const NodeService&) = delete;
  NodeService& operator=(const NodeService&) = delete;

  // See Master for each.
  Result<NodeId> RegisterNode(const NodeSpec& spec,
                              std::span<const SsdInventoryEntry> inventory,
                              std::span<const DramEntry> dram);
  Result<DirectoryChanges> SyncDirectory(NodeId node, uint64_t acked,
                                         uint32_t max_changes,
                                         TimePoint wait_until);
  Status Heartbeat(NodeId node, const std::optional<SsdReport>& ssd);
  Result<NodeTasks> PullTasks(NodeId node, uint32_t max_tasks,
                              TimePoint wait_until);
  void InterruptPull(NodeId node);
  void ReportSsdCorruption(NodeId node, std::span<const std::string> keys);
  size_t ExpireNodes();
  Status DeregisterNode(NodeId node);
  std::optional<NodeView> GetNode(NodeId node) const;
  Result<NodeView> FindNode(NodeId node) const;
  std::vector<NodeView> ListNodes() const;

 private:
  // A copy a registering node reports: an SSD record, or a DRAM directory
  // entry (at `dram_offset`).
  struct Copy {
    const std::string& key;
    uint64_t size;
    const std::optional<GroupSpec>& group;
    std::optional<uint64_t> dram_offset;
    // A DRAM copy's range was taken for it at registration (false: outside
    // the segment, or overlapping another entry).
    bool range_held = false;
  };
  void RestoreCopy(NodeId node, const Copy& copy);
  // Sets until when a registering node gets no placements: grants of
  // ranges in its segment, made before it registered again, may still be
  // written.
  void GrantsRunOut(const NodeSpec& spec,
                    NodeRegistry::Registration* how) const;
  // Adds the node's copy to the object (creating it); false when the copy
  // is stale or already known. For a group member, once the copy is known
  // to be restored, calls join() (under the object's stripe; the caller
  // holds the group's): the record of the incarnation the group took it
  // into (filling in the reservation), or null if the group did not take
  // it.
  using JoinFn = absl::FunctionRef<GroupRef(GroupMeta::Reservation*)>;
  bool RestoreObject(NodeId node, const Copy& copy, JoinFn join);
  // A DRAM entry the master does not take goes from the node's directory;
  // its range, if taken at registration, is freed once the node dropped
  // the entry (a put placed there sooner could be restored as the stale
  // object after a restart, with the new put's bytes).
  void DiscardDramEntry(NodeId node, const Copy& copy);
  void DropNodeReplicas(NodeId node);

  MasterState& s_;
  ObjectService& objects_;
  Tiering& tiering_;
  Offloader& offloader_;
};

}  // namespace mooncake_tier
