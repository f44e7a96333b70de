#include "rpc/master_service.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "rpc/batch_util.h"
#include "rpc/convert.h"
#include "rpc/master_methods.h"
#include "rpc/proto/master.grpc.pb.h"
#include "rpc/status_convert.h"

namespace mooncake_tier::rpc {

namespace {

Status CheckBatchSize(size_t items) {
  if (items > kMaxBatchItems) {
    return Status(ErrorReason::kInvalidArgument,
                  "batch of " + std::to_string(items) +
                      " items; the limit is " + std::to_string(kMaxBatchItems));
  }
  return Status::Ok();
}

Status CheckNodeId(uint64_t node) {
  if (node == kNoNode) {
    return Status(ErrorReason::kInvalidArgument, "node_id is missing");
  }
  return Status::Ok();
}

// Writes a Result<T> as an ItemStatus plus, when OK, its value.
template <typename T, typename EncodeValue>
void EncodeResult(const Result<T>& result, proto::ItemStatus* status,
                  EncodeValue&& encode_value) {
  if (result.ok()) {
    encode_value(*result);
  } else {
    ToProto(result.status(), status);
  }
}

// An encoder writing per-item statuses into `out`.
auto StatusesInto(google::protobuf::RepeatedPtrField<proto::ItemStatus>* out) {
  return [out](const Status& s) { ToProto(s, out->Add()); };
}

Result<std::string> DecodeKey(const std::string& key) {
  return KeyFromProto(key);
}
Result<std::string> DecodeGroupId(const std::string& id) {
  return GroupIdFromProto(id);
}
Result<uint64_t> DecodeId(uint64_t id) { return id; }
Result<LeaseRelease> DecodeRelease(const proto::LeaseRelease& release) {
  MT_ASSIGN_OR_RETURN(std::string key, KeyFromProto(release.key()));
  return LeaseRelease{std::move(key), release.lease_id()};
}

// Who makes calls of `method`: GetNode is both's, and served as a
// client's (a recovering master answers nodes first).
Caller CallerOf(MasterMethod method) {
  switch (method) {
    case MasterMethod::kRegisterNode:
    case MasterMethod::kHeartbeat:
    case MasterMethod::kNotifyOffloadSuccess:
    case MasterMethod::kNotifyOffloadFailure:
    case MasterMethod::kReportSsdCorruption:
    case MasterMethod::kPromotionAllocStart:
    case MasterMethod::kNotifyPromotionSuccess:
    case MasterMethod::kNotifyPromotionFailure:
    case MasterMethod::kDeregisterNode:
    case MasterMethod::kPullTasks:
    case MasterMethod::kSyncDirectory:
      return Caller::kNode;
    default:
      return Caller::kClient;
  }
}

// The roles that may make calls of `method` (rpc/call_authorizer.h).
uint8_t RolesOf(MasterMethod method) {
  if (method == MasterMethod::kGetNode) return kNodeRole | kClientRole;
  return CallerOf(method) == Caller::kNode ? kNodeRole : kClientRole;
}

// The longest a PullTasks may hold a server thread waiting for work.
constexpr uint32_t kMaxPullWaitMs = 10'000;

// How long a call may wait for something (room for a put, work for a
// node): at most `cap`, and short of the caller's deadline by a tenth of
// what is left (at least 50 ms), so the answer still reaches it.
Duration WaitBudget(const grpc::ServerContext* ctx, Duration cap) {
  const auto deadline = ctx->deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return cap;
  const Duration left = std::chrono::duration_cast<Duration>(
      deadline - std::chrono::system_clock::now());
  const Duration margin =
      std::max<Duration>(left / 10, std::chrono::milliseconds(50));
  return std::clamp<Duration>(left - margin, Duration::zero(), cap);
}

template <typename ProtoFailure>
Result<TaskFailure> DecodeFailure(const ProtoFailure& failure) {
  return TaskFailure{failure.task_id(), FromProto(failure.cause())};
}

// A promotion failure must say why: the cause picks the master's counter.
Result<TaskFailure> DecodePromotionFailure(
    const proto::PromotionFailure& failure) {
  MT_ASSIGN_OR_RETURN(TaskFailure decoded, DecodeFailure(failure));
  if (decoded.cause.ok()) {
    return Status(
        ErrorReason::kInvalidArgument,
        "failure of task " + std::to_string(decoded.task) + " has no cause");
  }
  return decoded;
}

// One master call per item, for the calls the master takes one at a time.
// Returns the results in item order.
template <typename T, typename Fn>
auto CallEach(std::span<const T> items, Fn&& fn) {
  std::vector<decltype(fn(items.front()))> out;
  out.reserve(items.size());
  for (const T& item : items) out.push_back(fn(item));
  return out;
}

}  // namespace

class MasterService::Handler final : public proto::MasterService::Service {
 public:
  Handler(MasterSource* source, const Clock* clock, CallRecorder* recorder,
          const CallAuthorizer* authorizer)
      : source_(source),
        clock_(clock),
        recorder_(recorder),
        authorizer_(authorizer) {}

  // ---- Client calls ----

  grpc::Status PutStart(grpc::ServerContext* ctx,
                        const proto::PutStartRequest* req,
                        proto::PutStartResponse* resp) override {
    ServingMaster m;
    const TimePoint arrived = clock_->Now();
    // A put into a full tier may wait for writeback, within the master's
    // put_wait_timeout and short of the caller's deadline (room to answer).
    const Duration max_wait = WaitBudget(ctx, Duration::max());
    return ServeBatch(
        ctx, &m, MasterMethod::kPutStart, req->items(),
        [](const proto::PutStartItem& item) { return FromProto(item); },
        [&](std::span<const PutStartRequest> items) {
          return m.api->PutStartWithin(items, max_wait);
        },
        [&](const Result<ReplicaDescriptor>& r) {
          proto::PutStartResult* out = resp->add_results();
          EncodeResult(r, out->mutable_status(), [&](const auto& v) {
            ToProto(v, out->mutable_replica());
            // The window counts from the call's arrival, the cap from
            // now: the cap grows by the time between.
            out->mutable_replica()->set_write_within_ms(
                CappedGrant(m, v.write_within_ms, clock_->Now() - arrived));
          });
        });
  }

  // A grant's window (a put's write or a cached read), cut to what the
  // serving master can vouch for. `counted_before`: how long before now
  // the window starts counting.
  uint32_t CappedGrant(const ServingMaster& m, uint32_t within_ms,
                       Duration counted_before = Duration::zero()) {
    const Duration cap = source_->GrantCap(m);
    if (cap == Duration::max()) return within_ms;
    // Truncated to whole milliseconds, so never longer than the cap.
    const int64_t cap_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(cap).count() +
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::max(counted_before, Duration::zero()))
            .count();
    return static_cast<uint32_t>(std::clamp<int64_t>(cap_ms, 0, within_ms));
  }

  grpc::Status PutEnd(grpc::ServerContext* ctx, const proto::PutEndRequest* req,
                      proto::PutEndResponse* resp) override {
    ServingMaster m;
    return ServeBatch(
        ctx, &m, MasterMethod::kPutEnd, req->keys(), DecodeKey,
        [&](std::span<const std::string> keys) {
          return m.api->PutEnd(req->client_id(), keys);
        },
        StatusesInto(resp->mutable_results()),
        CheckNameLength(req->client_id(), "client_id"));
  }

  grpc::Status PutRevoke(grpc::ServerContext* ctx,
                         const proto::PutRevokeRequest* req,
                         proto::PutRevokeResponse* resp) override {
    ServingMaster m;
    return ServeBatch(
        ctx, &m, MasterMethod::kPutRevoke, req->keys(), DecodeKey,
        [&](std::span<const std::string> keys) {
          return m.api->PutRevoke(req->client_id(), keys);
        },
        StatusesInto(resp->mutable_results()),
        CheckNameLength(req->client_id(), "client_id"));
  }

  grpc::Status GetReplicaList(grpc::ServerContext* ctx,
                              const proto::GetReplicaListRequest* req,
                              proto::GetReplicaListResponse* resp) override {
    ServingMaster m;
    std::vector<NodeView> nodes;
    const grpc::Status status = ServeBatch(
        ctx, &m, MasterMethod::kGetReplicaList, req->keys(), DecodeKey,
        [&](std::span<const std::string> keys) {
          if (!req->with_nodes()) return m.api->GetReplicaList(keys);
          const std::vector<NodeId> known(req->known_nodes().begin(),
                                          req->known_nodes().end());
          Result<ReadLookup> lookup = m.api->LookupForRead(keys, false, &known);
          if (!lookup.ok()) {
            return std::vector<Result<ObjectReplicas>>(keys.size(),
                                                       lookup.status());
          }
          nodes = std::move(lookup->nodes);
          return std::move(lookup->objects);
        },
        [&](const Result<ObjectReplicas>& r) {
          EncodeObject(m, r, resp->add_results());
        },
        CheckBatchSize(static_cast<size_t>(req->known_nodes_size())));
    if (status.ok()) EncodeNodes(nodes, resp->mutable_nodes());
    return status;
  }

  // One GetReplicaList result. Offsets are taken against the clock after
  // the master answered, so a lease never reads longer than the master
  // granted.
  void EncodeObject(const ServingMaster& m, const Result<ObjectReplicas>& r,
                    proto::GetReplicaListResult* out) {
    EncodeResult(r, out->mutable_status(), [&](const auto& v) {
      ToProto(v, clock_->Now(), out->mutable_object());
      // A deposed leader's location grants end with its lease window, as
      // its put grants do.
      out->mutable_object()->set_location_valid_ms(
          CappedGrant(m, v.location_valid_ms));
    });
  }

  template <typename Field>
  void EncodeNodes(const std::vector<NodeView>& nodes, Field* out) {
    const TimePoint now = clock_->Now();
    for (const NodeView& node : nodes) ToProto(node, now, out->Add());
  }

  grpc::Status ReleaseLeases(grpc::ServerContext* ctx,
                             const proto::ReleaseLeasesRequest* req,
                             proto::ReleaseLeasesResponse* resp) override {
    ServingMaster m;
    return ServeBatch(
        ctx, &m, MasterMethod::kReleaseLeases, req->releases(), DecodeRelease,
        [&](std::span<const LeaseRelease> releases) {
          Result<size_t> released = m.api->ReleaseLeases(releases);
          resp->set_released(released.ok() ? *released : 0);
          // Nothing per item: a stale release is no error.
          return std::vector<Status>(releases.size());
        },
        [](const Status&) {});
  }

  grpc::Status Exists(grpc::ServerContext* ctx, const proto::ExistsRequest* req,
                      proto::ExistsResponse* resp) override {
    ServingMaster m;
    return ServeBatch(
        ctx, &m, MasterMethod::kExists, req->keys(), DecodeKey,
        [&](std::span<const std::string> keys) { return m.api->Exists(keys); },
        [&](const Result<ExistsInfo>& r) {
          proto::ExistsResult* out = resp->add_results();
          EncodeResult(r, out->mutable_status(),
                       [&](const auto& v) { ToProto(v, out->mutable_info()); });
        });
  }

  grpc::Status ProbePrefix(grpc::ServerContext* ctx,
                           const proto::ProbePrefixRequest* req,
                           proto::ProbePrefixResponse* resp) override {
    ServingMaster m;
    return Serve(ctx, &m, MasterMethod::kProbePrefix, [&]() -> Status {
      MT_RETURN_IF_ERROR(CheckBatchSize(static_cast<size_t>(req->keys_size())));
      // The engine validates every key (naming a bad one's position).
      const std::vector<std::string> keys(req->keys().begin(),
                                          req->keys().end());
      if (!req->with_locations()) {
        MT_ASSIGN_OR_RETURN(const PrefixInfo prefix, m.api->ProbePrefix(keys));
        resp->set_length(prefix.length);
        resp->set_bytes(prefix.bytes);
        resp->set_memory_bytes(prefix.memory_bytes);
        return Status::Ok();
      }
      // A reader's probe: the prefix's locations (and nodes) in the answer.
      MT_RETURN_IF_ERROR(
          CheckBatchSize(static_cast<size_t>(req->known_nodes_size())));
      const std::vector<NodeId> known(req->known_nodes().begin(),
                                      req->known_nodes().end());
      MT_ASSIGN_OR_RETURN(
          ReadLookup lookup,
          m.api->LookupForRead(keys, true,
                               req->with_nodes() ? &known : nullptr));
      resp->set_length(lookup.prefix.length);
      resp->set_bytes(lookup.prefix.bytes);
      resp->set_memory_bytes(lookup.prefix.memory_bytes);
      for (const Result<ObjectReplicas>& r : lookup.objects) {
        EncodeObject(m, r, resp->add_objects());
      }
      EncodeNodes(lookup.nodes, resp->mutable_nodes());
      return Status::Ok();
    });
  }

  grpc::Status Remove(grpc::ServerContext* ctx, const proto::RemoveRequest* req,
                      proto::RemoveResponse* resp) override {
    ServingMaster m;
    return ServeBatch(
        ctx, &m, MasterMethod::kRemove, req->keys(), DecodeKey,
        [&](std::span<const std::string> keys) {
          return m.api->Remove(keys, RemoveOptions{req->force()});
        },
        StatusesInto(resp->mutable_results()));
  }

  grpc::Status GetGroup(grpc::ServerContext* ctx,
                        const proto::GetGroupRequest* req,
                        proto::GetGroupResponse* resp) override {
    ServingMaster m;
    return ServeBatch(
        ctx, &m, MasterMethod::kGetGroup, req->group_ids(), DecodeGroupId,
        [&](std::span<const std::string> ids) { return m.api->GetGroup(ids); },
        [&](const Result<GroupDescription>& r) {
          proto::GetGroupResult* out = resp->add_results();
          EncodeResult(r, out->mutable_status(), [&](const auto& v) {
            ToProto(v, out->mutable_group());
          });
        });
  }

  grpc::Status RemoveGroup(grpc::ServerContext* ctx,
                           const proto::RemoveGroupRequest* req,
                           proto::RemoveGroupResponse* resp) override {
    ServingMaster m;
    return ServeBatch(
        ctx, &m, MasterMethod::kRemoveGroup, req->group_ids(), DecodeGroupId,
        [&](std::span<const std::string> ids) {
          return m.api->RemoveGroup(ids, RemoveOptions{req->force()});
        },
        StatusesInto(resp->mutable_results()));
  }

  grpc::Status GetNode(grpc::ServerContext* ctx,
                       const proto::GetNodeRequest* req,
                       proto::GetNodeResponse* resp) override {
    ServingMaster m;
    return ServeBatch(
        ctx, &m, MasterMethod::kGetNode, req->node_ids(), DecodeId,
        [&](std::span<const NodeId> ids) {
          return CallEach(ids, [&](NodeId id) { return m.api->GetNode(id); });
        },
        [&](const Result<NodeView>& r) {
          proto::GetNodeResult* out = resp->add_results();
          EncodeResult(r, out->mutable_status(), [&](const auto& v) {
            ToProto(v, clock_->Now(), out->mutable_node());
          });
        });
  }

  grpc::Status GetControlLane(grpc::ServerContext* ctx,
                              const proto::GetControlLaneRequest*,
                              proto::GetControlLaneResponse* resp) override {
    ServingMaster m;
    return Serve(ctx, &m, MasterMethod::kGetControlLane, [&]() -> Status {
      MutexLock lock(&lane_mu_);
      if (lane_address_.empty()) {
        return Status(ErrorReason::kNotApplicable,
                      "this master runs no control lane");
      }
      if (authorizer_ != nullptr) {
        // The lane has no authentication of its own yet: its calls would
        // be refused (ServeLane has no caller's metadata).
        return Status(ErrorReason::kNotApplicable,
                      "the control lane is off while calls are authenticated");
      }
      resp->set_worker_address(lane_address_);
      return Status::Ok();
    });
  }

  void SetControlLane(std::string address) {
    MutexLock lock(&lane_mu_);
    lane_address_ = std::move(address);
  }

  // One call arriving on the control lane: the request's bytes are the
  // message its gRPC twin carries, and so is the answer. Served by the
  // same handler, with a context of its own (no deadline: the lane's calls
  // never wait).
  template <typename Req, typename Resp, typename Method>
  Status ServeLane(std::string_view request, std::string* response,
                   Method method) {
    Req req;
    if (!req.ParseFromArray(request.data(), static_cast<int>(request.size()))) {
      return Status(ErrorReason::kInvalidArgument,
                    "control lane request does not parse");
    }
    Resp resp;
    grpc::ServerContext ctx;
    const grpc::Status status = (this->*method)(&ctx, &req, &resp);
    if (!status.ok()) {
      // The handler's failures carry their Status in the details.
      proto::ItemStatus details;
      if (details.ParseFromString(status.error_details())) {
        Status sent = FromProto(details);
        if (!sent.ok()) return sent;
      }
      const ErrorReason reason = ReasonForGrpcCode(status.error_code());
      return Status(
          reason == ErrorReason::kNone ? ErrorReason::kInternal : reason,
          status.error_message());
    }
    if (!resp.SerializeToString(response)) {
      return Status(ErrorReason::kInternal, "reply does not serialize");
    }
    return Status::Ok();
  }

  Status ServeLaneCall(MasterMethod method, std::string_view request,
                       std::string* response) {
    using H = Handler;
    switch (method) {
      case MasterMethod::kExists:
        return ServeLane<proto::ExistsRequest, proto::ExistsResponse>(
            request, response, &H::Exists);
      case MasterMethod::kGetReplicaList:
        return ServeLane<proto::GetReplicaListRequest,
                         proto::GetReplicaListResponse>(request, response,
                                                        &H::GetReplicaList);
      case MasterMethod::kProbePrefix:
        return ServeLane<proto::ProbePrefixRequest, proto::ProbePrefixResponse>(
            request, response, &H::ProbePrefix);
      default:
        return Status(ErrorReason::kNotApplicable,
                      "method " + std::string(MasterMethodName(method)) +
                          " is not served on the control lane");
    }
  }

  // ---- Node calls ----

  grpc::Status RegisterNode(grpc::ServerContext* ctx,
                            const proto::RegisterNodeRequest* req,
                            proto::RegisterNodeResponse* resp) override {
    ServingMaster m;
    return Serve(ctx, &m, MasterMethod::kRegisterNode, [&]() -> Status {
      if (!req->has_spec()) {
        return Status(ErrorReason::kInvalidArgument, "node spec is missing");
      }
      MT_ASSIGN_OR_RETURN(const NodeSpec spec, FromProto(req->spec()));
      // Entries that do not decode are left out: the master would skip
      // them too (a record with such a key can never be read).
      std::vector<SsdInventoryEntry> inventory;
      inventory.reserve(req->inventory_size());
      for (const proto::SsdInventoryEntry& e : req->inventory()) {
        Result<SsdInventoryEntry> entry = FromProto(e);
        if (entry.ok()) inventory.push_back(std::move(*entry));
      }
      // DRAM entries that do not decode are left out likewise: the master
      // never reserves their ranges, so new puts may take them.
      std::vector<DramEntry> dram;
      dram.reserve(req->dram_size());
      for (const proto::DramEntry& e : req->dram()) {
        Result<DramEntry> entry = FromProto(e);
        if (entry.ok()) dram.push_back(std::move(*entry));
      }
      Result<NodeId> id = m.link->RegisterNode(spec, inventory, dram);
      EncodeResult(id, resp->mutable_status(),
                   [&](NodeId v) { resp->set_node_id(v); });
      resp->set_term(m.term);
      return Status::Ok();
    });
  }

  grpc::Status Heartbeat(grpc::ServerContext* ctx,
                         const proto::HeartbeatRequest* req,
                         proto::HeartbeatResponse* resp) override {
    ServingMaster m;
    return Serve(ctx, &m, MasterMethod::kHeartbeat, [&]() -> Status {
      MT_RETURN_IF_ERROR(CheckNodeId(req->node_id()));
      std::optional<SsdReport> ssd;
      if (req->has_ssd()) ssd = FromProto(req->ssd());
      // In band: NODE_NOT_FOUND is an answer (register again).
      ToProto(m.link->Heartbeat(req->node_id(), ssd), resp->mutable_status());
      return Status::Ok();
    });
  }

  grpc::Status PullTasks(grpc::ServerContext* ctx,
                         const proto::PullTasksRequest* req,
                         proto::PullTasksResponse* resp) override {
    ServingMaster m;
    return Serve(ctx, &m, MasterMethod::kPullTasks, [&]() -> Status {
      MT_RETURN_IF_ERROR(CheckNodeId(req->node_id()));
      const Duration asked = std::chrono::milliseconds(
          std::min<uint32_t>(req->wait_ms(), kMaxPullWaitMs));
      Result<NodeTasks> tasks = m.link->PullTasks(
          req->node_id(), req->max_tasks(), WaitBudget(ctx, asked));
      EncodeResult(tasks, resp->mutable_status(),
                   [&](const auto& v) { ToProto(v, clock_->Now(), resp); });
      resp->set_term(m.term);
      return Status::Ok();
    });
  }

  grpc::Status SyncDirectory(grpc::ServerContext* ctx,
                             const proto::SyncDirectoryRequest* req,
                             proto::SyncDirectoryResponse* resp) override {
    ServingMaster m;
    return Serve(ctx, &m, MasterMethod::kSyncDirectory, [&]() -> Status {
      MT_RETURN_IF_ERROR(CheckNodeId(req->node_id()));
      const Duration asked = std::chrono::milliseconds(
          std::min<uint32_t>(req->wait_ms(), kMaxPullWaitMs));
      Result<DirectoryChanges> changes =
          m.link->SyncDirectory(req->node_id(), req->acked(),
                                req->max_changes(), WaitBudget(ctx, asked));
      EncodeResult(changes, resp->mutable_status(), [&](const auto& v) {
        resp->mutable_changes()->Reserve(static_cast<int>(v.ops.size()));
        for (const DirectoryOp& op : v.ops) ToProto(op, resp->add_changes());
      });
      resp->set_term(m.term);
      return Status::Ok();
    });
  }

  grpc::Status DeregisterNode(grpc::ServerContext* ctx,
                              const proto::DeregisterNodeRequest* req,
                              proto::DeregisterNodeResponse* resp) override {
    ServingMaster m;
    return Serve(ctx, &m, MasterMethod::kDeregisterNode, [&]() -> Status {
      MT_RETURN_IF_ERROR(CheckNodeId(req->node_id()));
      // In band, as a heartbeat's: NODE_NOT_FOUND is an answer, not a
      // failed call.
      ToProto(m.link->DeregisterNode(req->node_id()), resp->mutable_status());
      return Status::Ok();
    });
  }

  grpc::Status NotifyOffloadSuccess(
      grpc::ServerContext* ctx, const proto::NotifyOffloadSuccessRequest* req,
      proto::NotifyOffloadSuccessResponse* resp) override {
    ServingMaster m;
    const NodeId node = req->node_id();
    return ServeBatch(
        ctx, &m, MasterMethod::kNotifyOffloadSuccess, req->task_ids(), DecodeId,
        [&](std::span<const TaskId> ids) {
          return m.link->NotifyOffloadSuccess(node, ids);
        },
        StatusesInto(resp->mutable_results()), CheckNodeId(node));
  }

  grpc::Status NotifyOffloadFailure(
      grpc::ServerContext* ctx, const proto::NotifyOffloadFailureRequest* req,
      proto::NotifyOffloadFailureResponse* resp) override {
    ServingMaster m;
    const NodeId node = req->node_id();
    return ServeBatch(
        ctx, &m, MasterMethod::kNotifyOffloadFailure, req->failures(),
        DecodeFailure<proto::OffloadFailure>,
        [&](std::span<const TaskFailure> failures) {
          return m.link->NotifyOffloadFailure(node, failures);
        },
        StatusesInto(resp->mutable_results()), CheckNodeId(node));
  }

  grpc::Status ReportSsdCorruption(
      grpc::ServerContext* ctx, const proto::ReportSsdCorruptionRequest* req,
      proto::ReportSsdCorruptionResponse*) override {
    ServingMaster m;
    const NodeId node = req->node_id();
    return ServeBatch(
        ctx, &m, MasterMethod::kReportSsdCorruption, req->keys(), DecodeKey,
        [&](std::span<const std::string> keys) {
          m.link->ReportSsdCorruption(node, keys).IgnoreError();
          return std::vector<Status>(keys.size());
        },
        // Nothing per key to report: invalid keys cannot be stored.
        [](const Status&) {}, CheckNodeId(node));
  }

  // ---- Promotion calls ----

  grpc::Status PromotionAllocStart(
      grpc::ServerContext* ctx, const proto::PromotionAllocStartRequest* req,
      proto::PromotionAllocStartResponse* resp) override {
    ServingMaster m;
    const NodeId node = req->node_id();
    return ServeBatch(
        ctx, &m, MasterMethod::kPromotionAllocStart, req->task_ids(), DecodeId,
        [&](std::span<const TaskId> ids) {
          return m.link->PromotionAllocStart(node, ids);
        },
        [&](const Result<ReplicaDescriptor>& r) {
          proto::PromotionAllocStartResult* out = resp->add_results();
          EncodeResult(r, out->mutable_status(), [&](const auto& v) {
            ToProto(v, out->mutable_replica());
          });
        },
        CheckNodeId(node));
  }

  grpc::Status NotifyPromotionSuccess(
      grpc::ServerContext* ctx, const proto::NotifyPromotionSuccessRequest* req,
      proto::NotifyPromotionSuccessResponse* resp) override {
    ServingMaster m;
    const NodeId node = req->node_id();
    return ServeBatch(
        ctx, &m, MasterMethod::kNotifyPromotionSuccess, req->task_ids(),
        DecodeId,
        [&](std::span<const TaskId> ids) {
          return m.link->NotifyPromotionSuccess(node, ids);
        },
        StatusesInto(resp->mutable_results()), CheckNodeId(node));
  }

  grpc::Status NotifyPromotionFailure(
      grpc::ServerContext* ctx, const proto::NotifyPromotionFailureRequest* req,
      proto::NotifyPromotionFailureResponse* resp) override {
    ServingMaster m;
    const NodeId node = req->node_id();
    return ServeBatch(
        ctx, &m, MasterMethod::kNotifyPromotionFailure, req->failures(),
        DecodePromotionFailure,
        [&](std::span<const TaskFailure> failures) {
          return m.link->NotifyPromotionFailure(node, failures);
        },
        StatusesInto(resp->mutable_results()), CheckNodeId(node));
  }

 private:
  // Runs `body` (-> Status) as one recorded call, served by the master
  // `source_` gives for it (in *m, held until the reply is written). A
  // call the source refuses fails with its status, naming the leader in
  // the trailing metadata when known; a non-OK Status from `body` fails the
  // whole call with its reason attached.
  template <typename Body>
  grpc::Status Serve(grpc::ServerContext* ctx, ServingMaster* m,
                     MasterMethod method, Body&& body) {
    return recorder_->Time(static_cast<size_t>(method), [&]() {
      if (authorizer_ != nullptr) {
        // First: a refused call reaches no master and changes nothing.
        const Status allowed = authorizer_->Authorize(*ctx, RolesOf(method),
                                                      MasterMethodName(method));
        if (!allowed.ok()) return ToGrpcStatus(allowed);
      }
      std::string leader;
      Result<ServingMaster> serving =
          source_->Acquire(CallerOf(method), &leader);
      if (!serving.ok()) {
        if (!leader.empty()) {
          ctx->AddTrailingMetadata(kLeaderMetadataKey, leader);
        }
        return ToGrpcStatus(serving.status());
      }
      *m = std::move(*serving);
      const Status status = body();
      if (!source_->StillServing(*m)) {
        return ToGrpcStatus(
            Status(ErrorReason::kNotLeader,
                   "this master stopped leading while serving the call; "
                   "its outcome is unknown"));
      }
      return status.ok() ? grpc::Status::OK : ToGrpcStatus(status);
    });
  }

  // One recorded batch call: refuses it as a whole when `precondition`
  // fails or the batch is too big, else DecodeAndCall and `encode` each
  // result in order.
  template <typename Items, typename Decode, typename Call, typename Encode>
  grpc::Status ServeBatch(grpc::ServerContext* ctx, ServingMaster* m,
                          MasterMethod method, const Items& items,
                          Decode&& decode, Call&& call, Encode&& encode,
                          Status precondition = Status::Ok()) {
    return Serve(ctx, m, method, [&]() -> Status {
      MT_RETURN_IF_ERROR(precondition);
      MT_RETURN_IF_ERROR(CheckBatchSize(static_cast<size_t>(items.size())));
      for (const auto& r : DecodeAndCall(items, decode, call)) encode(r);
      return Status::Ok();
    });
  }

  MasterSource* const source_;
  const Clock* const clock_;
  CallRecorder* const recorder_;
  const CallAuthorizer* const authorizer_;  // null: every call allowed
  Mutex lane_mu_;
  std::string lane_address_ ABSL_GUARDED_BY(lane_mu_);
};

namespace {

std::unique_ptr<CallRecorder> RecorderUnless(CallRecorder* given) {
  return given ? nullptr : std::make_unique<CallRecorder>(MasterMethodNames());
}

}  // namespace

MasterService::MasterService(MasterApi* api, MasterLink* link,
                             MasterServiceOptions options)
    : fixed_source_(std::make_unique<FixedMasterSource>(api, link)),
      owned_recorder_(RecorderUnless(options.recorder)),
      recorder_(options.recorder ? options.recorder : owned_recorder_.get()),
      handler_(std::make_unique<Handler>(
          fixed_source_.get(),
          options.clock ? options.clock : SystemClock::Default(), recorder_,
          options.authorizer)) {}

MasterService::MasterService(MasterSource* source, MasterServiceOptions options)
    : owned_recorder_(RecorderUnless(options.recorder)),
      recorder_(options.recorder ? options.recorder : owned_recorder_.get()),
      handler_(std::make_unique<Handler>(
          source, options.clock ? options.clock : SystemClock::Default(),
          recorder_, options.authorizer)) {}

MasterService::~MasterService() = default;

grpc::Service* MasterService::grpc_service() { return handler_.get(); }

void MasterService::SetControlLane(std::string address) {
  handler_->SetControlLane(std::move(address));
}

Status MasterService::ServeLaneCall(MasterMethod method,
                                    std::string_view request,
                                    std::string* response) {
  return handler_->ServeLaneCall(method, request, response);
}

}  // namespace mooncake_tier::rpc
