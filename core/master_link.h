#pragma once

// MasterLink: the calls a storage node makes to the master, as an interface
// with one implementation per way of reaching it. LocalMasterLink (below)
// calls a Master in the same process; rpc/grpc_master_link.h reaches a
// remote one. It lives in core, next to the Master it mirrors, so that
// node/ (which calls it) and rpc/ (which implements it) both depend on core
// alone. It names no transport and stays header-only.
//
// Thread safety: implementations are safe to call from many threads.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/master.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

// A task a node reports as failed, and why.
struct TaskFailure {
  TaskId task = 0;
  Status cause;
};

class MasterLink {
 public:
  virtual ~MasterLink() = default;
  virtual Result<NodeId> RegisterNode(
      const NodeSpec& spec, std::span<const SsdInventoryEntry> inventory) = 0;
  // Liveness, and the node's SSD report (Master::Heartbeat).
  virtual Status Heartbeat(NodeId node,
                           const std::optional<SsdReport>& ssd) = 0;
  // The node's work (Master::PullTasks): at most `max_tasks` tasks; with
  // none queued, waits up to `wait` for some.
  virtual Result<NodeTasks> PullTasks(NodeId node, uint32_t max_tasks,
                                      Duration wait) = 0;
  // Ends a PullTasks of `node` in flight from another thread (it returns
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

// MasterLink onto a Master in the same process.
class LocalMasterLink final : public MasterLink {
  // One master call per item, for the calls the master takes one at a
  // time.
  template <typename T, typename Fn>
  static auto Each(std::span<const T> items, Fn&& fn) {
    std::vector<decltype(fn(items.front()))> out;
    out.reserve(items.size());
    for (const T& item : items) out.push_back(fn(item));
    return out;
  }

 public:
  explicit LocalMasterLink(Master* master) : master_(master) {}
  Result<NodeId> RegisterNode(
      const NodeSpec& spec,
      std::span<const SsdInventoryEntry> inventory) override {
    return master_->RegisterNode(spec, inventory);
  }
  Status Heartbeat(NodeId node, const std::optional<SsdReport>& ssd) override {
    return master_->Heartbeat(node, ssd);
  }
  Result<NodeTasks> PullTasks(NodeId node, uint32_t max_tasks,
                              Duration wait) override {
    return master_->PullTasks(node, max_tasks, master_->clock()->Now() + wait);
  }
  void InterruptPull(NodeId node) override { master_->InterruptPull(node); }
  Status DeregisterNode(NodeId node) override {
    return master_->DeregisterNode(node);
  }
  std::vector<Status> NotifyOffloadSuccess(
      NodeId node, std::span<const TaskId> tasks) override {
    return Each(tasks, [&](TaskId t) {
      return master_->NotifyOffloadSuccess(node, t);
    });
  }
  std::vector<Status> NotifyOffloadFailure(
      NodeId node, std::span<const TaskFailure> failures) override {
    return Each(failures, [&](const TaskFailure& f) {
      return master_->NotifyOffloadFailure(node, f.task, f.cause);
    });
  }
  Status ReportSsdCorruption(NodeId node,
                             std::span<const std::string> keys) override {
    master_->ReportSsdCorruption(node, keys);
    return Status::Ok();
  }
  std::vector<Result<ReplicaDescriptor>> PromotionAllocStart(
      NodeId node, std::span<const TaskId> tasks) override {
    return Each(
        tasks, [&](TaskId t) { return master_->PromotionAllocStart(node, t); });
  }
  std::vector<Status> NotifyPromotionSuccess(
      NodeId node, std::span<const TaskId> tasks) override {
    return Each(tasks, [&](TaskId t) {
      return master_->NotifyPromotionSuccess(node, t);
    });
  }
  std::vector<Status> NotifyPromotionFailure(
      NodeId node, std::span<const TaskFailure> failures) override {
    return Each(failures, [&](const TaskFailure& f) {
      return master_->NotifyPromotionFailure(node, f.task, f.cause);
    });
  }
  Result<NodeView> GetNode(NodeId node) override {
    return master_->FindNode(node);
  }

 private:
  Master* const master_;
};

}  // namespace mooncake_tier
