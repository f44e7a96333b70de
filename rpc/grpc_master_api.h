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

#include <atomic>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "protocol/master_api.h"
#include "rpc/call_recorder.h"
#include "rpc/grpc_channel_options.h"
#include "rpc/master_methods.h"

namespace mooncake_tier::rpc {

class MasterStub;
class ControlLaneClient;

// The control lane (docs/design/control-path.md): Exists, GetReplicaList
// and ProbePrefix go as UCX active messages to the master's lane, found
// through GetControlLane, instead of gRPC.
struct ControlLaneOptions {
  // Default: off (the remote client turns it on; RemoteClientOptions).
  bool enabled = false;
  // UCX transports as UCX_TLS spells them; empty keeps UCX's configuration.
  std::string transports;
  // After the lane failed or could not be found, calls go over gRPC and
  // the lane is looked for again this much later. Default: 1 s.
  Duration retry = std::chrono::seconds(1);
};

class GrpcMasterApi final : public MasterApi {
 public:
  // INVALID_ARGUMENT for an empty target or a non-positive deadline.
  // Connects lazily.
  // With `lane.enabled`, the hot lookups take the control lane when the
  // master offers one. The lane is looked for after a gRPC call that
  // reached the master, at most once per `retry`, backing off (doubling, up
  // to a minute) while looks find no working lane. A call that finds the
  // lane down, failed, unreachable, refused by a master that no longer
  // leads, or too large for it goes over gRPC (Exists, GetReplicaList and
  // ProbePrefix are safe to send twice; ReleaseLeases never takes the
  // lane). A call the lane took and did not answer in time fails TIMEOUT,
  // as over gRPC. UNAVAILABLE when UCX cannot start.
  static Result<std::unique_ptr<GrpcMasterApi>> Create(
      GrpcChannelOptions options, ControlLaneOptions lane = {});
  ~GrpcMasterApi() override;

  std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests) override;
  std::vector<Status> PutEnd(const ClientId& client,
                             std::span<const std::string> keys) override;
  std::vector<Status> PutRevoke(const ClientId& client,
                                std::span<const std::string> keys) override;
  std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys) override;
  Result<size_t> ReleaseLeases(std::span<const LeaseRelease> releases) override;
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
  // One GetReplicaList (or ProbePrefix with locations) call.
  Result<ReadLookup> LookupForRead(
      std::span<const std::string> keys, bool probe,
      const std::vector<NodeId>* known_nodes) override;

  // Calls made, by MasterMethod (over the lane too).
  const CallRecorder& recorder() const;
  // Calls that went over the control lane and came back answered.
  uint64_t lane_calls() const;

 private:
  GrpcMasterApi(std::unique_ptr<MasterStub> stub, ControlLaneOptions lane);
  // Whether it is time to look for the lane (not connected, back-off over);
  // claims the look.
  bool LaneDue();
  // A lane call was answered: the back-off starts again from `retry`.
  void LaneWorked();
  // Asks the master for its lane (GetControlLane) and connects to it.
  void FindLane();
  // One unary call: over the lane when ready (and `Resp` parses its
  // answer), else `rpc` over gRPC.
  template <typename Req, typename Resp, typename Rpc>
  Status Unary(MasterMethod method, size_t items, const Req& req, Resp* resp,
               Rpc&& rpc);

  std::unique_ptr<MasterStub> stub_;
  const ControlLaneOptions lane_options_;
  std::unique_ptr<ControlLaneClient> lane_;
  Mutex lane_mu_;
  std::chrono::steady_clock::time_point next_lane_try_
      ABSL_GUARDED_BY(lane_mu_);
  std::chrono::steady_clock::duration lane_backoff_ ABSL_GUARDED_BY(lane_mu_);
  std::atomic<uint64_t> lane_calls_{0};
};

}  // namespace mooncake_tier::rpc
