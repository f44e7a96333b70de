#include "rpc/grpc_master_api.h"

#include <algorithm>
#include <utility>

#include "rpc/batch_util.h"
#include "rpc/convert.h"
#include "rpc/master_stub.h"

namespace mooncake_tier::rpc {

namespace {

using Stub = proto::MasterService::Stub;
using Context = grpc::ClientContext;

template <typename Field>
void AddAll(std::span<const std::string> values, Field* out) {
  out->Reserve(static_cast<int>(values.size()));
  for (const std::string& v : values) out->Add(std::string(v));
}

}  // namespace

Result<std::unique_ptr<GrpcMasterApi>> GrpcMasterApi::Create(
    GrpcChannelOptions options) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<MasterStub> stub,
                      MasterStub::Create(std::move(options)));
  return std::unique_ptr<GrpcMasterApi>(new GrpcMasterApi(std::move(stub)));
}

GrpcMasterApi::GrpcMasterApi(std::unique_ptr<MasterStub> stub)
    : stub_(std::move(stub)) {}

GrpcMasterApi::~GrpcMasterApi() = default;

const CallRecorder& GrpcMasterApi::recorder() const {
  return stub_->recorder();
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
  proto::GetReplicaListRequest req;
  AddAll(keys, req.mutable_keys());
  proto::GetReplicaListResponse resp;
  const Status call = stub_->Call(
      MasterMethod::kGetReplicaList, keys.size(),
      [&](Stub& s, Context* c) { return s.GetReplicaList(c, req, &resp); });
  const TimePoint now = stub_->Now();
  return ItemResults<ObjectReplicas>(
      call, keys.size(), resp.results(),
      [now](const proto::GetReplicaListResult& r) -> Result<ObjectReplicas> {
        if (!r.has_object()) return MissingPayload("object");
        return FromProto(r.object(), now);
      });
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
      stub_->Call(MasterMethod::kExists, keys.size(),
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
  MT_RETURN_IF_ERROR(stub_->Call(
      MasterMethod::kProbePrefix, std::max<size_t>(keys.size(), 1),
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

}  // namespace mooncake_tier::rpc
