#include "rpc/grpc_master_api.h"

#include <algorithm>
#include <utility>

#include "rpc/batch_util.h"
#include "rpc/control_lane_client.h"
#include "rpc/control_lane_messages.h"
#include "rpc/convert.h"
#include "rpc/master_stub.h"

namespace mooncake_tier::rpc {

namespace {

using Stub = proto::MasterService::Stub;
using Context = grpc::ClientContext;

// A worker address longer than this is not a worker address.
constexpr size_t kMaxLaneAddressBytes = 64 * 1024;

template <typename Field>
void AddAll(std::span<const std::string> values, Field* out) {
  out->Reserve(static_cast<int>(values.size()));
  for (const std::string& v : values) out->Add(std::string(v));
}

}  // namespace

Result<std::unique_ptr<GrpcMasterApi>> GrpcMasterApi::Create(
    GrpcChannelOptions options, ControlLaneOptions lane) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<MasterStub> stub,
                      MasterStub::Create(std::move(options)));
  std::unique_ptr<GrpcMasterApi> api(new GrpcMasterApi(std::move(stub), lane));
  if (lane.enabled) {
    MT_ASSIGN_OR_RETURN(api->lane_, ControlLaneClient::Create(lane.transports));
  }
  return api;
}

GrpcMasterApi::GrpcMasterApi(std::unique_ptr<MasterStub> stub,
                             ControlLaneOptions lane)
    : stub_(std::move(stub)),
      lane_options_(std::move(lane)),
      lane_backoff_(
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              lane_options_.retry)) {}

GrpcMasterApi::~GrpcMasterApi() = default;

const CallRecorder& GrpcMasterApi::recorder() const {
  return stub_->recorder();
}

uint64_t GrpcMasterApi::lane_calls() const {
  return lane_calls_.load(std::memory_order_relaxed);
}

bool GrpcMasterApi::LaneDue() {
  if (lane_ == nullptr || lane_->connected()) return false;
  const auto now = std::chrono::steady_clock::now();
  // One caller looks at a time, and not before the back-off ran out.
  MutexLock lock(&lane_mu_);
  if (now < next_lane_try_) return false;
  next_lane_try_ = now + lane_backoff_;
  // Each look that does not end in a working lane doubles the wait, up to
  // a minute; a lane call answered resets it (LaneWorked).
  lane_backoff_ = std::min<std::chrono::steady_clock::duration>(
      lane_backoff_ * 2, std::chrono::minutes(1));
  return true;
}

void GrpcMasterApi::LaneWorked() {
  MutexLock lock(&lane_mu_);
  lane_backoff_ =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          lane_options_.retry);
}

void GrpcMasterApi::FindLane() {
  proto::GetControlLaneRequest req;
  proto::GetControlLaneResponse resp;
  const Status found = stub_->Call(
      MasterMethod::kGetControlLane, 1,
      [&](Stub& s, Context* c) { return s.GetControlLane(c, req, &resp); });
  if (!found.ok() || resp.worker_address().empty() ||
      resp.worker_address().size() > kMaxLaneAddressBytes) {
    return;
  }
  lane_->Connect(resp.worker_address()).IgnoreError();
}

template <typename Req, typename Resp, typename Rpc>
Status GrpcMasterApi::Unary(MasterMethod method, size_t items, const Req& req,
                            Resp* resp, Rpc&& rpc) {
  // Larger calls than the lane carries go over gRPC.
  if (items > 0 && lane_ != nullptr && lane_->connected() &&
      req.ByteSizeLong() + 64 <= kMaxControlLaneBytes) {
    const auto start = std::chrono::steady_clock::now();
    Result<std::string> answer =
        lane_->Call(static_cast<uint32_t>(method), req.SerializeAsString(),
                    stub_->deadline());
    const Duration took = std::chrono::duration_cast<Duration>(
        std::chrono::steady_clock::now() - start);
    const ErrorReason reason =
        answer.ok() ? ErrorReason::kNone : answer.status().reason();
    if (answer.ok()) {
      if (resp->ParseFromString(*answer)) {
        stub_->Record(method, Status::Ok(), took);
        lane_calls_.fetch_add(1, std::memory_order_relaxed);
        LaneWorked();
        return Status::Ok();
      }
      resp->Clear();
      lane_->Disconnect();  // an answer that does not parse: trust gRPC
    } else if (reason == ErrorReason::kTimeout) {
      // Delivered and not answered: the master is slow, and gRPC would wait
      // as long again. (The lane closed its endpoint.)
      stub_->Record(method, answer.status(), took);
      return Status(reason, std::string(MasterMethodName(method)) +
                                " to master: " + answer.status().message());
    } else if (reason == ErrorReason::kNotApplicable) {
      // Not for the lane (a reply too large, a method it does not carry):
      // this call goes over gRPC, the lane stays.
    } else if (reason == ErrorReason::kUnavailable ||
               reason == ErrorReason::kNotLeader) {
      // Down, failed, or a master that no longer leads: gRPC finds the
      // leader; the lane is looked for again later.
      lane_->Disconnect();
    } else {
      // The master's verdict on the call itself, as gRPC would carry it.
      stub_->Record(method, answer.status(), took);
      return Status(reason, std::string(MasterMethodName(method)) +
                                " to master: " + answer.status().message());
    }
  }
  const Status status = stub_->Call(method, items, std::forward<Rpc>(rpc));
  // The lane is looked for after a call that reached the master, so that
  // looking never delays a call to a master that is down.
  if (status.ok() && LaneDue()) FindLane();
  return status;
}

std::vector<Result<ReplicaDescriptor>> GrpcMasterApi::PutStart(
    std::span<const PutStartRequest> requests) {
  proto::PutStartRequest req;
  for (const PutStartRequest& r : requests) ToProto(r, req.add_items());
  proto::PutStartResponse resp;
  const Status call = stub_->Call(
      MasterMethod::kPutStart, requests.size(),
      [&](Stub& s, Context* c) { return s.PutStart(c, req, &resp); });
  return ItemResults<ReplicaDescriptor>(
      call, requests.size(), resp.results(),
      [](const proto::PutStartResult& r) -> Result<ReplicaDescriptor> {
        if (!r.has_replica()) return MissingPayload("replica");
        return FromProto(r.replica());
      });
}

std::vector<Status> GrpcMasterApi::PutEnd(const ClientId& client,
                                          std::span<const std::string> keys) {
  proto::PutEndRequest req;
  req.set_client_id(client);
  AddAll(keys, req.mutable_keys());
  proto::PutEndResponse resp;
  const Status call =
      stub_->Call(MasterMethod::kPutEnd, keys.size(),
                  [&](Stub& s, Context* c) { return s.PutEnd(c, req, &resp); });
  return ItemStatuses(call, keys.size(), resp.results());
}

std::vector<Status> GrpcMasterApi::PutRevoke(
    const ClientId& client, std::span<const std::string> keys) {
  proto::PutRevokeRequest req;
  req.set_client_id(client);
  AddAll(keys, req.mutable_keys());
  proto::PutRevokeResponse resp;
  const Status call = stub_->Call(
      MasterMethod::kPutRevoke, keys.size(),
      [&](Stub& s, Context* c) { return s.PutRevoke(c, req, &resp); });
  return ItemStatuses(call, keys.size(), resp.results());
}

std::vector<Result<ObjectReplicas>> GrpcMasterApi::GetReplicaList(
    std::span<const std::string> keys) {
  // Without a probe the lookup itself never fails (its items do).
  return std::move(LookupForRead(keys, false, nullptr)->objects);
}

Result<size_t> GrpcMasterApi::ReleaseLeases(
    std::span<const LeaseRelease> releases) {
  proto::ReleaseLeasesRequest req;
  req.mutable_releases()->Reserve(static_cast<int>(releases.size()));
  for (const LeaseRelease& r : releases) {
    proto::LeaseRelease* out = req.add_releases();
    out->set_key(r.key);
    out->set_lease_id(r.lease_id);
  }
  proto::ReleaseLeasesResponse resp;
  // Over gRPC only: a release must not be sent twice (each one ends a
  // reader's share of the lease), and a lane call that failed may have
  // been delivered. Releases are batched off the read path anyway.
  MT_RETURN_IF_ERROR(stub_->Call(
      MasterMethod::kReleaseLeases, releases.size(),
      [&](Stub& s, Context* c) { return s.ReleaseLeases(c, req, &resp); }));
  return static_cast<size_t>(resp.released());
}

std::vector<Result<ExistsInfo>> GrpcMasterApi::Exists(
    std::span<const std::string> keys) {
  proto::ExistsRequest req;
  AddAll(keys, req.mutable_keys());
  proto::ExistsResponse resp;
  const Status call =
      Unary(MasterMethod::kExists, keys.size(), req, &resp,
            [&](Stub& s, Context* c) { return s.Exists(c, req, &resp); });
  return ItemResults<ExistsInfo>(
      call, keys.size(), resp.results(),
      [](const proto::ExistsResult& r) -> Result<ExistsInfo> {
        if (!r.has_info()) return MissingPayload("exists info");
        return FromProto(r.info());
      });
}

Result<PrefixInfo> GrpcMasterApi::ProbePrefix(
    std::span<const std::string> keys) {
  proto::ProbePrefixRequest req;
  AddAll(keys, req.mutable_keys());
  proto::ProbePrefixResponse resp;
  // A probe of no keys is a client's health check: sent all the same.
  MT_RETURN_IF_ERROR(Unary(
      MasterMethod::kProbePrefix, std::max<size_t>(keys.size(), 1), req, &resp,
      [&](Stub& s, Context* c) { return s.ProbePrefix(c, req, &resp); }));
  if (resp.length() > keys.size()) {
    return Status(ErrorReason::kInternal,
                  "the master answered a prefix longer than the keys");
  }
  if (resp.memory_bytes() > resp.bytes()) {
    return Status(ErrorReason::kInternal,
                  "the master answered more DRAM bytes than prefix bytes");
  }
  return PrefixInfo{resp.length(), resp.bytes(), resp.memory_bytes()};
}

std::vector<Status> GrpcMasterApi::Remove(std::span<const std::string> keys,
                                          RemoveOptions options) {
  proto::RemoveRequest req;
  AddAll(keys, req.mutable_keys());
  req.set_force(options.force);
  proto::RemoveResponse resp;
  const Status call =
      stub_->Call(MasterMethod::kRemove, keys.size(),
                  [&](Stub& s, Context* c) { return s.Remove(c, req, &resp); });
  return ItemStatuses(call, keys.size(), resp.results());
}

std::vector<Result<GroupDescription>> GrpcMasterApi::GetGroup(
    std::span<const std::string> group_ids) {
  proto::GetGroupRequest req;
  AddAll(group_ids, req.mutable_group_ids());
  proto::GetGroupResponse resp;
  const Status call = stub_->Call(
      MasterMethod::kGetGroup, group_ids.size(),
      [&](Stub& s, Context* c) { return s.GetGroup(c, req, &resp); });
  return ItemResults<GroupDescription>(
      call, group_ids.size(), resp.results(),
      [](const proto::GetGroupResult& r) -> Result<GroupDescription> {
        if (!r.has_group()) return MissingPayload("group");
        return FromProto(r.group());
      });
}

std::vector<Status> GrpcMasterApi::RemoveGroup(
    std::span<const std::string> group_ids, RemoveOptions options) {
  proto::RemoveGroupRequest req;
  AddAll(group_ids, req.mutable_group_ids());
  req.set_force(options.force);
  proto::RemoveGroupResponse resp;
  const Status call = stub_->Call(
      MasterMethod::kRemoveGroup, group_ids.size(),
      [&](Stub& s, Context* c) { return s.RemoveGroup(c, req, &resp); });
  return ItemStatuses(call, group_ids.size(), resp.results());
}

Result<NodeView> GrpcMasterApi::GetNode(NodeId node) {
  return GetNodeOver(*stub_, node);
}

namespace {

Result<ObjectReplicas> DecodeObject(const proto::GetReplicaListResult& r,
                                    TimePoint now) {
  if (!r.has_object()) return MissingPayload("object");
  return FromProto(r.object(), now);
}

// The nodes of an answer; one that does not decode is left out (the reader
// asks GetNode for it).
template <typename Field>
std::vector<NodeView> DecodeNodes(const Field& nodes, TimePoint now) {
  std::vector<NodeView> out;
  out.reserve(nodes.size());
  for (const proto::NodeView& node : nodes) {
    Result<NodeView> view = FromProto(node, now);
    if (view.ok()) out.push_back(std::move(*view));
  }
  return out;
}

}  // namespace

Result<ReadLookup> GrpcMasterApi::LookupForRead(
    std::span<const std::string> keys, bool probe,
    const std::vector<NodeId>* known_nodes) {
  ReadLookup out;
  if (!probe) {
    proto::GetReplicaListRequest req;
    AddAll(keys, req.mutable_keys());
    if (known_nodes != nullptr) {
      req.set_with_nodes(true);
      req.mutable_known_nodes()->Add(known_nodes->begin(), known_nodes->end());
    }
    proto::GetReplicaListResponse resp;
    const Status call = Unary(
        MasterMethod::kGetReplicaList, keys.size(), req, &resp,
        [&](Stub& s, Context* c) { return s.GetReplicaList(c, req, &resp); });
    const TimePoint now = stub_->Now();
    out.objects = ItemResults<ObjectReplicas>(
        call, keys.size(), resp.results(),
        [now](const proto::GetReplicaListResult& r) {
          return DecodeObject(r, now);
        });
    if (call.ok()) out.nodes = DecodeNodes(resp.nodes(), now);
    return out;
  }
  proto::ProbePrefixRequest req;
  AddAll(keys, req.mutable_keys());
  req.set_with_locations(true);
  if (known_nodes != nullptr) {
    req.set_with_nodes(true);
    req.mutable_known_nodes()->Add(known_nodes->begin(), known_nodes->end());
  }
  proto::ProbePrefixResponse resp;
  MT_RETURN_IF_ERROR(Unary(
      MasterMethod::kProbePrefix, std::max<size_t>(keys.size(), 1), req, &resp,
      [&](Stub& s, Context* c) { return s.ProbePrefix(c, req, &resp); }));
  const TimePoint now = stub_->Now();
  if (resp.length() > keys.size() ||
      static_cast<uint64_t>(resp.objects_size()) != resp.length()) {
    return Status(ErrorReason::kInternal,
                  "the master answered a prefix probe whose locations do not "
                  "match its prefix");
  }
  if (resp.memory_bytes() > resp.bytes()) {
    return Status(ErrorReason::kInternal,
                  "the master answered more DRAM bytes than prefix bytes");
  }
  out.prefix = PrefixInfo{resp.length(), resp.bytes(), resp.memory_bytes()};
  out.objects.reserve(resp.objects_size());
  for (const proto::GetReplicaListResult& r : resp.objects()) {
    Status status = FromProto(r.status());
    if (status.ok()) {
      out.objects.push_back(DecodeObject(r, now));
    } else {
      out.objects.push_back(std::move(status));
    }
  }
  out.nodes = DecodeNodes(resp.nodes(), now);
  return out;
}

}  // namespace mooncake_tier::rpc
