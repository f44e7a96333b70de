#pragma once

// MasterApi over gRPC: what a client library uses to reach a remote master.
// Every call is one RPC carrying the whole batch, with the deadline of
// GrpcChannelOptions; a master that is down or silent fails every item of
// the call with UNAVAILABLE or TIMEOUT (naming the method and the master)
// within the deadline, never a hang.
//
// Lease deadlines in replies are translated to this process's clock (the
// remaining lease as the master saw it, counted from the reply's arrival).
//
// Thread safety: thread-safe.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "protocol/master_api.h"
#include "rpc/call_recorder.h"
#include "rpc/grpc_channel_options.h"

namespace mooncake_tier::rpc {

class MasterStub;

class GrpcMasterApi final : public MasterApi {
 public:
  // INVALID_ARGUMENT for an empty target or a non-positive deadline.
  // Connects lazily.
  static Result<std::unique_ptr<GrpcMasterApi>> Create(
      GrpcChannelOptions options);
  ~GrpcMasterApi() override;

  std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests) override;
  std::vector<Status> PutEnd(const ClientId& client,
                             std::span<const std::string> keys) override;
  std::vector<Status> PutRevoke(const ClientId& client,
                                std::span<const std::string> keys) override;
  std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys) override;
  Result<size_t> ReleaseLeases(
      std::span<const LeaseRelease> releases) override;
  std::vector<Result<ExistsInfo>> Exists(
      std::span<const std::string> keys) override;
  Result<PrefixInfo> ProbePrefix(std::span<const std::string> keys) override;
  std::vector<Status> Remove(std::span<const std::string> keys,
                             RemoveOptions options) override;
  std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) override;
  std::vector<Status> RemoveGroup(std::span<const std::string> group_ids,
                                  RemoveOptions options) override;
  Result<NodeView> GetNode(NodeId node) override;

  // Calls made, by MasterMethod.
  const CallRecorder& recorder() const;

 private:
  explicit GrpcMasterApi(std::unique_ptr<MasterStub> stub);
  std::unique_ptr<MasterStub> stub_;
};

}  // namespace mooncake_tier::rpc
