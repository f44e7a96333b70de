#include "rpc/grpc_master_link.h"

#include <utility>

#include "rpc/batch_util.h"
#include "rpc/convert.h"
#include "rpc/master_stub.h"

namespace mooncake_tier::rpc {

namespace {

using Stub = proto::MasterService::Stub;
using Context = grpc::ClientContext;

// The single status of a node call: the call's failure, else the in-band
// status of the reply.
Status Outcome(const Status& call, const proto::ItemStatus& status) {
  return call.ok() ? FromProto(status) : call;
}

// The staged replica of a PromotionAllocStart reply: a DRAM replica, or
// the node would write the bytes to the wrong place.
Result<ReplicaDescriptor> StagedReplica(
    const proto::PromotionAllocStartResult& result) {
  if (!result.has_replica()) return MissingPayload("staged replica");
  MT_ASSIGN_OR_RETURN(ReplicaDescriptor replica, FromProto(result.replica()));
  if (replica.tier != Tier::kMemory) {
    return Status(ErrorReason::kInvalidArgument,
                  "staged replica is not in memory");
  }
  return replica;
}

}  // namespace

Result<std::unique_ptr<GrpcMasterLink>> GrpcMasterLink::Create(
    GrpcChannelOptions options) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<MasterStub> stub,
                      MasterStub::Create(std::move(options)));
  return std::unique_ptr<GrpcMasterLink>(new GrpcMasterLink(std::move(stub)));
}

GrpcMasterLink::GrpcMasterLink(std::unique_ptr<MasterStub> stub)
    : stub_(std::move(stub)) {}

GrpcMasterLink::~GrpcMasterLink() = default;

const CallRecorder& GrpcMasterLink::recorder() const {
  return stub_->recorder();
}

Result<NodeId> GrpcMasterLink::RegisterNode(
    const NodeSpec& spec, std::span<const SsdInventoryEntry> inventory,
    std::span<const DramEntry> dram) {
  proto::RegisterNodeRequest req;
  ToProto(spec, req.mutable_spec());
  req.mutable_inventory()->Reserve(static_cast<int>(inventory.size()));
  for (const SsdInventoryEntry& e : inventory) {
    ToProto(e, req.add_inventory());
  }
  req.mutable_dram()->Reserve(static_cast<int>(dram.size()));
  for (const DramEntry& e : dram) ToProto(e, req.add_dram());
  proto::RegisterNodeResponse resp;
  const Status call = stub_->Call(
      MasterMethod::kRegisterNode, 1,
      [&](Stub& s, Context* c) { return s.RegisterNode(c, req, &resp); });
  // An older term's answer is refused whatever it says.
  if (call.ok()) MT_RETURN_IF_ERROR(AcceptTerm(resp.term()));
  MT_RETURN_IF_ERROR(Outcome(call, resp.status()));
  if (resp.node_id() == kNoNode) {
    return MalformedReply(
        Status(ErrorReason::kInternal, "node_id missing from an OK result"));
  }
  return NodeId{resp.node_id()};
}

Status GrpcMasterLink::AcceptTerm(uint64_t term) {
  uint64_t seen = highest_term_.load();
  while (term > seen && !highest_term_.compare_exchange_weak(seen, term)) {
  }
  if (term < seen) {
    return Status(ErrorReason::kNotLeader,
                  "answer of a deposed master (term " + std::to_string(term) +
                      "; term " + std::to_string(seen) + " leads)");
  }
  return Status::Ok();
}

Status GrpcMasterLink::Heartbeat(NodeId node,
                                 const std::optional<SsdReport>& ssd) {
  proto::HeartbeatRequest req;
  req.set_node_id(node);
  if (ssd) ToProto(*ssd, req.mutable_ssd());
  proto::HeartbeatResponse resp;
  const Status call = stub_->Call(
      MasterMethod::kHeartbeat, 1,
      [&](Stub& s, Context* c) { return s.Heartbeat(c, req, &resp); });
  return Outcome(call, resp.status());
}

template <typename Fn>
Status GrpcMasterLink::CallInterruptible(MasterMethod method, Duration wait,
                                         Fn&& call) {
  uint64_t interrupts;
  {
    MutexLock lock(&pulls_mu_);
    interrupts = interrupts_;
  }
  return stub_->CallWithin(method, 1, wait, [&](Stub& s, Context* c) {
    {
      MutexLock lock(&pulls_mu_);
      // Interrupted between two attempts (following a leader): stop.
      if (interrupts_ != interrupts) {
        return grpc::Status(grpc::StatusCode::CANCELLED, "interrupted");
      }
      pulls_.insert(c);
    }
    grpc::Status status = call(s, c);
    MutexLock lock(&pulls_mu_);
    pulls_.erase(c);
    return status;
  });
}

Result<NodeTasks> GrpcMasterLink::PullTasks(NodeId node, uint32_t max_tasks,
                                            Duration wait) {
  proto::PullTasksRequest req;
  req.set_node_id(node);
  req.set_max_tasks(max_tasks);
  req.set_wait_ms(static_cast<uint32_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()));
  proto::PullTasksResponse resp;
  const Status call = CallInterruptible(
      MasterMethod::kPullTasks, wait,
      [&](Stub& s, Context* c) { return s.PullTasks(c, req, &resp); });
  // An older term's answer is refused whatever it says.
  if (call.ok()) MT_RETURN_IF_ERROR(AcceptTerm(resp.term()));
  MT_RETURN_IF_ERROR(Outcome(call, resp.status()));
  Result<NodeTasks> tasks = FromProto(resp, stub_->Now());
  if (!tasks.ok()) return MalformedReply(tasks.status());
  return tasks;
}

Result<DirectoryChanges> GrpcMasterLink::SyncDirectory(NodeId node,
                                                       uint64_t acked,
                                                       uint32_t max_changes,
                                                       Duration wait) {
  proto::SyncDirectoryRequest req;
  req.set_node_id(node);
  req.set_acked(acked);
  req.set_max_changes(max_changes);
  req.set_wait_ms(static_cast<uint32_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()));
  proto::SyncDirectoryResponse resp;
  const Status call = CallInterruptible(
      MasterMethod::kSyncDirectory, wait,
      [&](Stub& s, Context* c) { return s.SyncDirectory(c, req, &resp); });
  // An older term's answer is refused whatever it says.
  if (call.ok()) MT_RETURN_IF_ERROR(AcceptTerm(resp.term()));
  MT_RETURN_IF_ERROR(Outcome(call, resp.status()));
  DirectoryChanges out;
  out.ops.reserve(resp.changes_size());
  for (const proto::DirectoryChange& change : resp.changes()) {
    Result<DirectoryOp> op = FromProto(change);
    if (!op.ok()) return MalformedReply(op.status());
    out.ops.push_back(std::move(*op));
  }
  return out;
}

void GrpcMasterLink::InterruptPull(NodeId) {
  MutexLock lock(&pulls_mu_);
  ++interrupts_;
  for (grpc::ClientContext* context : pulls_) context->TryCancel();
}

Status GrpcMasterLink::DeregisterNode(NodeId node) {
  proto::DeregisterNodeRequest req;
  req.set_node_id(node);
  proto::DeregisterNodeResponse resp;
  const Status call = stub_->Call(
      MasterMethod::kDeregisterNode, 1,
      [&](Stub& s, Context* c) { return s.DeregisterNode(c, req, &resp); });
  return Outcome(call, resp.status());
}

std::vector<Status> GrpcMasterLink::NotifyOffloadSuccess(
    NodeId node, std::span<const TaskId> tasks) {
  proto::NotifyOffloadSuccessRequest req;
  req.set_node_id(node);
  for (TaskId task : tasks) req.add_task_ids(task);
  proto::NotifyOffloadSuccessResponse resp;
  const Status call =
      stub_->Call(MasterMethod::kNotifyOffloadSuccess, tasks.size(),
                  [&](Stub& s, Context* c) {
                    return s.NotifyOffloadSuccess(c, req, &resp);
                  });
  return ItemStatuses(call, tasks.size(), resp.results());
}

std::vector<Status> GrpcMasterLink::NotifyOffloadFailure(
    NodeId node, std::span<const TaskFailure> failures) {
  proto::NotifyOffloadFailureRequest req;
  req.set_node_id(node);
  for (const TaskFailure& f : failures) {
    proto::OffloadFailure* failure = req.add_failures();
    failure->set_task_id(f.task);
    ToProto(f.cause, failure->mutable_cause());
  }
  proto::NotifyOffloadFailureResponse resp;
  const Status call =
      stub_->Call(MasterMethod::kNotifyOffloadFailure, failures.size(),
                  [&](Stub& s, Context* c) {
                    return s.NotifyOffloadFailure(c, req, &resp);
                  });
  return ItemStatuses(call, failures.size(), resp.results());
}

Status GrpcMasterLink::ReportSsdCorruption(NodeId node,
                                           std::span<const std::string> keys) {
  proto::ReportSsdCorruptionRequest req;
  req.set_node_id(node);
  for (const std::string& key : keys) req.add_keys(key);
  proto::ReportSsdCorruptionResponse resp;
  return stub_->Call(MasterMethod::kReportSsdCorruption, keys.size(),
                     [&](Stub& s, Context* c) {
                       return s.ReportSsdCorruption(c, req, &resp);
                     });
}

Result<NodeView> GrpcMasterLink::GetNode(NodeId node) {
  return GetNodeOver(*stub_, node);
}

std::vector<Result<ReplicaDescriptor>> GrpcMasterLink::PromotionAllocStart(
    NodeId node, std::span<const TaskId> tasks) {
  proto::PromotionAllocStartRequest req;
  req.set_node_id(node);
  for (TaskId task : tasks) req.add_task_ids(task);
  proto::PromotionAllocStartResponse resp;
  const Status call = stub_->Call(MasterMethod::kPromotionAllocStart,
                                  tasks.size(), [&](Stub& s, Context* c) {
                                    return s.PromotionAllocStart(c, req, &resp);
                                  });
  return ItemResults<ReplicaDescriptor>(call, tasks.size(), resp.results(),
                                        StagedReplica);
}

std::vector<Status> GrpcMasterLink::NotifyPromotionSuccess(
    NodeId node, std::span<const TaskId> tasks) {
  proto::NotifyPromotionSuccessRequest req;
  req.set_node_id(node);
  for (TaskId task : tasks) req.add_task_ids(task);
  proto::NotifyPromotionSuccessResponse resp;
  const Status call =
      stub_->Call(MasterMethod::kNotifyPromotionSuccess, tasks.size(),
                  [&](Stub& s, Context* c) {
                    return s.NotifyPromotionSuccess(c, req, &resp);
                  });
  return ItemStatuses(call, tasks.size(), resp.results());
}

std::vector<Status> GrpcMasterLink::NotifyPromotionFailure(
    NodeId node, std::span<const TaskFailure> failures) {
  proto::NotifyPromotionFailureRequest req;
  req.set_node_id(node);
  for (const TaskFailure& f : failures) {
    proto::PromotionFailure* failure = req.add_failures();
    failure->set_task_id(f.task);
    ToProto(f.cause, failure->mutable_cause());
  }
  proto::NotifyPromotionFailureResponse resp;
  const Status call =
      stub_->Call(MasterMethod::kNotifyPromotionFailure, failures.size(),
                  [&](Stub& s, Context* c) {
                    return s.NotifyPromotionFailure(c, req, &resp);
                  });
  return ItemStatuses(call, failures.size(), resp.results());
}

}  // namespace mooncake_tier::rpc
