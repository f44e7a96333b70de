#pragma once

// MasterLink: the calls a storage node makes to the master, as an interface
// with one implementation per way of reaching it. LocalMasterLink
// (core/local_master.h) calls a Master in the same process;
// rpc/grpc_master_link.h reaches a remote one. It lives in protocol/, so
// that node/ (which calls it) and rpc/ (which implements it) need neither
// the engine nor each other. It names no transport.
//
// Thread safety: implementations are safe to call from many threads.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/clock.h"
#include "mooncake_tier/status.h"
#include "protocol/messages.h"
#include "protocol/node.h"

namespace mooncake_tier {

class MasterLink {
 public:
  virtual ~MasterLink() = default;
  // Registers the node with what it holds: its SSD records and, when it
  // keeps a DRAM directory, its committed DRAM placements.
  virtual Result<NodeId> RegisterNode(
      const NodeSpec& spec, std::span<const SsdInventoryEntry> inventory,
      std::span<const DramEntry> dram) = 0;
  // The node's DRAM directory (Master::SyncDirectory): acknowledges the
  // changes up to `acked`, takes the next ones (at most `max_changes`),
  // waiting up to `wait` when there are none.
  virtual Result<DirectoryChanges> SyncDirectory(NodeId node, uint64_t acked,
                                                 uint32_t max_changes,
                                                 Duration wait) = 0;
  // Liveness, and the node's SSD report (Master::Heartbeat).
  virtual Status Heartbeat(NodeId node,
                           const std::optional<SsdReport>& ssd) = 0;
  // The node's work (Master::PullTasks): at most `max_tasks` tasks; with
  // none queued, waits up to `wait` for some.
  virtual Result<NodeTasks> PullTasks(NodeId node, uint32_t max_tasks,
                                      Duration wait) = 0;
  // Ends a PullTasks (and a SyncDirectory) of `node` in flight from another
  // thread (it returns
  // at once, with no tasks or an error): the node is stopping. Default:
  // nothing (the pull ends within its wait).
  virtual void InterruptPull(NodeId node) {}
  // The node is stopping cleanly: the master drops it now rather than after
  // node_ttl (Master::DeregisterNode). NODE_NOT_FOUND when the master no
  // longer knows it.
  virtual Status DeregisterNode(NodeId node) = 0;
  // Task results, a batch per call; one status per task, in order.
  virtual std::vector<Status> NotifyOffloadSuccess(
      NodeId node, std::span<const TaskId> tasks) = 0;
  virtual std::vector<Status> NotifyOffloadFailure(
      NodeId node, std::span<const TaskFailure> failures) = 0;
  virtual Status ReportSsdCorruption(NodeId node,
                                     std::span<const std::string> keys) = 0;
  // Promotion: stage DRAM for tasks, then report how they went.
  virtual std::vector<Result<ReplicaDescriptor>> PromotionAllocStart(
      NodeId node, std::span<const TaskId> tasks) = 0;
  virtual std::vector<Status> NotifyPromotionSuccess(
      NodeId node, std::span<const TaskId> tasks) = 0;
  virtual std::vector<Status> NotifyPromotionFailure(
      NodeId node, std::span<const TaskFailure> failures) = 0;
  // How to reach another node's segment (a promotion staged there).
  virtual Result<NodeView> GetNode(NodeId node) = 0;
};

}  // namespace mooncake_tier
