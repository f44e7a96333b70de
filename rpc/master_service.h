#pragma once

// The server side of the control plane: MasterService
// (rpc/proto/master.proto) served over a master's MasterApi (client calls)
// and MasterLink (node calls), the interfaces of protocol/. Each handler
// validates the request, calls the master once with the items that passed,
// and encodes one result per item in order. A request refused as a whole (too
// many items, a missing node id or spec) fails the call with INVALID_ARGUMENT
// and the reason attached; nothing in a request can make the server assert.
//
// Host it in a grpc::Server through grpc_service() (RpcServer does this).
// The generated gRPC headers stay inside master_service.cc.
//
// Thread safety: thread-safe; gRPC calls the handlers from many threads and
// the interfaces' implementations are thread-safe.

#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "protocol/master_api.h"
#include "protocol/master_link.h"
#include "rpc/call_authorizer.h"
#include "rpc/call_recorder.h"
#include "rpc/master_methods.h"
#include "rpc/master_source.h"

namespace grpc {
class Service;
}  // namespace grpc

namespace mooncake_tier::rpc {

struct MasterServiceOptions {
  // The master's clock: replies carry points in time (lease deadlines,
  // heartbeat ages) as offsets from its now. Null means the system clock.
  // Must outlive the service. Default: null.
  const Clock* clock = nullptr;
  // Records every call. Null: the service keeps its own (see recorder()).
  // Must outlive the service. Default: null.
  CallRecorder* recorder = nullptr;
  // Checks every call's credentials before it reaches a master (refused:
  // UNAUTHENTICATED, recorded); also turns the control lane off. Null
  // allows every call (a loopback or --insecure plane). Must outlive the
  // service. Default: null.
  const CallAuthorizer* authorizer = nullptr;
};

class MasterService {
 public:
  // Serves client calls through `api` and node calls through `link` (for
  // an in-process master, core/local_master.h); both must outlive the
  // service.
  MasterService(MasterApi* api, MasterLink* link,
                MasterServiceOptions options = {});
  // Serves each call through the master `source` gives for it (a master
  // of a high-availability cluster: rpc/master_source.h); `source` must
  // outlive the service.
  MasterService(MasterSource* source, MasterServiceOptions options = {});
  MasterService(const MasterService&) = delete;
  MasterService& operator=(const MasterService&) = delete;
  ~MasterService();

  // The service to register with a grpc::ServerBuilder; owned by this
  // object. REQUIRES: the server is shut down before this object dies.
  grpc::Service* grpc_service();

  // Calls served, by MasterMethod.
  const CallRecorder& recorder() const { return *recorder_; }

  // The control lane's worker address, answered by GetControlLane; empty
  // (the default) answers NOT_APPLICABLE.
  void SetControlLane(std::string address);
  // Serves one call that came in on the control lane
  // (rpc/control_lane_server.h): `request` is the serialized request of
  // `method`'s gRPC twin; on OK *response is its serialized response. The
  // call goes through the same handler, leader check and recorder as over
  // gRPC. Only calls that never wait are served (Exists, GetReplicaList,
  // ProbePrefix); others answer NOT_APPLICABLE. A request
  // that does not parse answers INVALID_ARGUMENT.
  Status ServeLaneCall(MasterMethod method, std::string_view request,
                       std::string* response);

 private:
  class Handler;
  std::unique_ptr<MasterSource> fixed_source_;  // for (api, link)
  std::unique_ptr<CallRecorder> owned_recorder_;
  CallRecorder* const recorder_;
  std::unique_ptr<Handler> handler_;
};

}  // namespace mooncake_tier::rpc
