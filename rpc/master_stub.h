#pragma once

// The client end of one connection to MasterService, shared by
// GrpcMasterApi and GrpcMasterLink: the channel, the generated stub, the
// per-call deadline and the call recorder.
//
// rpc-internal: includes generated headers; only rpc/ .cc files include it.
//
// Thread safety: thread-safe (gRPC channels and stubs are).

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "base/clock.h"
#include "core/node_registry.h"
#include "protocol/types.h"
#include "grpcpp/client_context.h"
#include "mooncake_tier/status.h"
#include "rpc/call_recorder.h"
#include "rpc/grpc_channel_options.h"
#include "rpc/master_methods.h"
#include "rpc/proto/master.grpc.pb.h"
#include "rpc/status_convert.h"

namespace mooncake_tier::rpc {

class MasterStub {
 public:
  // INVALID_ARGUMENT for an empty target or a deadline <= 0. The channel
  // connects lazily: an unreachable master shows up as call errors.
  static Result<std::unique_ptr<MasterStub>> Create(GrpcChannelOptions options);

  // Issues one call, `rpc(stub, context)` -> grpc::Status, with the
  // deadline set, records it, and returns its call-level outcome (OK, or
  // the failure as a Status naming the method and the master). With
  // `items` == 0 nothing is sent and OK is returned.
  template <typename Rpc>
  Status Call(MasterMethod method, size_t items, Rpc&& rpc) {
    return CallWithin(method, items, Duration::zero(), std::forward<Rpc>(rpc));
  }
  // The same, with `extra` added to the deadline: a call the master may
  // hold that long on purpose (a long poll).
  template <typename Rpc>
  Status CallWithin(MasterMethod method, size_t items, Duration extra,
                    Rpc&& rpc) {
    if (items == 0) return Status::Ok();
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::microseconds>(
                             options_.deadline + extra));
    const grpc::Status status = recorder_->Time(
        static_cast<size_t>(method), [&]() { return rpc(*stub_, &context); });
    return FromGrpcStatus(status, MasterMethodName(method), options_.target);
  }

  // The caller's now, against which reply offsets are read.
  TimePoint Now() const { return SystemClock::Default()->Now(); }
  const CallRecorder& recorder() const { return *recorder_; }
  const std::string& target() const { return options_.target; }

 private:
  explicit MasterStub(GrpcChannelOptions options);

  const GrpcChannelOptions options_;
  std::unique_ptr<CallRecorder> owned_recorder_;
  CallRecorder* recorder_;
  std::unique_ptr<proto::MasterService::Stub> stub_;
};

// The GetNode call, shared by GrpcMasterApi and GrpcMasterLink.
Result<NodeView> GetNodeOver(MasterStub& stub, NodeId node);

}  // namespace mooncake_tier::rpc
