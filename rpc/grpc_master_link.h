#pragma once

// MasterLink over gRPC: what a storage node uses to reach a remote master.
// Every call has the deadline of GrpcChannelOptions; a master that is down
// or silent gives UNAVAILABLE or TIMEOUT within it, never a hang, so the
// heartbeat loop keeps its pace.
//
// Task times in PullTasks replies are translated to this process's clock.
//
// With several master addresses (a high-availability cluster) the link
// follows the leader (rpc/master_stub.h) and fences deposed ones: it
// remembers the highest term any reply carried, and an answer to
// RegisterNode, PullTasks or SyncDirectory from a lower term fails with
// NOT_LEADER, so a leader that was paused while another took over can
// hand this node no tasks and no directory changes.
//
// Thread safety: thread-safe.

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "base/mutex.h"
#include "protocol/master_link.h"
#include "rpc/call_recorder.h"
#include "rpc/grpc_channel_options.h"
#include "rpc/master_methods.h"

namespace grpc {
class ClientContext;
}  // namespace grpc

namespace mooncake_tier::rpc {

class MasterStub;

class GrpcMasterLink final : public MasterLink {
 public:
  // INVALID_ARGUMENT for an empty target or a non-positive deadline.
  // Connects lazily.
  static Result<std::unique_ptr<GrpcMasterLink>> Create(
      GrpcChannelOptions options);
  ~GrpcMasterLink() override;

  Result<NodeId> RegisterNode(const NodeSpec& spec,
                              std::span<const SsdInventoryEntry> inventory,
                              std::span<const DramEntry> dram) override;
  // The call's deadline is the channel's plus `wait`; InterruptPull
  // cancels it like a pull.
  Result<DirectoryChanges> SyncDirectory(NodeId node, uint64_t acked,
                                         uint32_t max_changes,
                                         Duration wait) override;
  Status Heartbeat(NodeId node, const std::optional<SsdReport>& ssd) override;
  // The call's deadline is the channel's plus `wait`.
  Result<NodeTasks> PullTasks(NodeId node, uint32_t max_tasks,
                              Duration wait) override;
  // Cancels the pulls in flight (they fail with ABORTED).
  void InterruptPull(NodeId node) override;
  // Bounded by the deadline like every call: a master that does not answer
  // gives UNAVAILABLE or TIMEOUT, and the node stops anyway.
  Status DeregisterNode(NodeId node) override;
  std::vector<Status> NotifyOffloadSuccess(
      NodeId node, std::span<const TaskId> tasks) override;
  std::vector<Status> NotifyOffloadFailure(
      NodeId node, std::span<const TaskFailure> failures) override;
  Status ReportSsdCorruption(NodeId node,
                             std::span<const std::string> keys) override;
  // A result whose staged replica is missing or not in memory is a
  // malformed reply (INTERNAL).
  std::vector<Result<ReplicaDescriptor>> PromotionAllocStart(
      NodeId node, std::span<const TaskId> tasks) override;
  std::vector<Status> NotifyPromotionSuccess(
      NodeId node, std::span<const TaskId> tasks) override;
  // An OK cause is refused (INVALID_ARGUMENT): a failure must say why.
  std::vector<Status> NotifyPromotionFailure(
      NodeId node, std::span<const TaskFailure> failures) override;
  Result<NodeView> GetNode(NodeId node) override;

  // Calls made, by MasterMethod.
  const CallRecorder& recorder() const;
  // The highest leader term a reply carried (0: none, or a lone master).
  uint64_t highest_term() const { return highest_term_.load(); }

 private:
  explicit GrpcMasterLink(std::unique_ptr<MasterStub> stub);
  // A long poll (PullTasks, SyncDirectory) that InterruptPull can cancel:
  // its context is registered for the call's life.
  template <typename Fn>
  Status CallInterruptible(MasterMethod method, Duration wait, Fn&& call);
  // NOT_LEADER when `term` is older than one already seen; else records it.
  Status AcceptTerm(uint64_t term);

  std::unique_ptr<MasterStub> stub_;
  std::atomic<uint64_t> highest_term_{0};
  // The contexts of the pulls in flight, for InterruptPull.
  Mutex pulls_mu_;
  absl::flat_hash_set<grpc::ClientContext*> pulls_ ABSL_GUARDED_BY(pulls_mu_);
  uint64_t interrupts_ ABSL_GUARDED_BY(pulls_mu_) = 0;
};

}  // namespace mooncake_tier::rpc
