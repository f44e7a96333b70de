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
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "core/node_registry.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/credentials.h"
#include "mooncake_tier/status.h"
#include "protocol/types.h"
#include "rpc/call_recorder.h"
#include "rpc/grpc_channel_options.h"
#include "rpc/master_methods.h"
#include "rpc/proto/master.grpc.pb.h"
#include "rpc/status_convert.h"

namespace mooncake_tier::rpc {

class MasterStub {
 public:
  // `options.target` is one master's "host:port" or several, comma-
  // separated (the masters of a high-availability cluster).
  // INVALID_ARGUMENT for an empty target or entry, more than
  // kMaxMasterAddresses addresses, or a deadline <= 0. Channels connect
  // lazily: an unreachable master shows up as call errors.
  static Result<std::unique_ptr<MasterStub>> Create(GrpcChannelOptions options);
  ~MasterStub();

  // Issues one call, `rpc(stub, context)` -> grpc::Status, with the
  // deadline set, records it, and returns its call-level outcome (OK, or
  // the failure as a Status naming the method and the master). With
  // `items` == 0 nothing is sent and OK is returned.
  //
  // Following the leader: a call refused by a standby (NOT_LEADER) is
  // sent again to the leader it names, or to the next address; a call that
  // finds its master unreachable is sent again to the next address when
  // there is more than one. Attempts pause briefly (growing to
  // kMaxRedirectPause) unless a leader was named, and stop at the call's
  // deadline with the last failure. `rpc` must therefore be callable more
  // than once; it gets a fresh context each time.
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
    const auto deadline = std::chrono::system_clock::now() +
                          std::chrono::duration_cast<std::chrono::microseconds>(
                              options_.deadline + extra);
    Attempts attempts;
    while (true) {
      Endpoint& endpoint = Current();
      grpc::ClientContext context;
      context.set_deadline(deadline);
      if (!authorization_.empty()) {
        context.AddMetadata("authorization", authorization_);
      }
      const grpc::Status status =
          recorder_->Time(static_cast<size_t>(method),
                          [&]() { return rpc(*endpoint.stub, &context); });
      if (status.ok() ||
          !Redirect(endpoint, status, context, deadline, &attempts)) {
        return FromGrpcStatus(status, MasterMethodName(method),
                              endpoint.target);
      }
    }
  }

  // The caller's now, against which reply offsets are read.
  TimePoint Now() const { return SystemClock::Default()->Now(); }
  const CallRecorder& recorder() const { return *recorder_; }
  // Records a call made another way (the control lane) beside the stub's.
  void Record(MasterMethod method, const Status& outcome, Duration latency) {
    recorder_->Record(static_cast<size_t>(method),
                      static_cast<int>(ToGrpcCode(outcome.code())), latency);
  }
  // The per-call deadline.
  Duration deadline() const { return options_.deadline; }
  // The address calls go to now.
  std::string target() const;

  static constexpr size_t kMaxMasterAddresses = 16;
  static constexpr Duration kMaxRedirectPause = std::chrono::milliseconds(200);
  // How long one attempt to connect to a master may take with one address
  // (with several: twice GrpcChannelOptions::keepalive).
  static constexpr Duration kConnectTimeout = std::chrono::seconds(2);

 private:
  struct Endpoint {
    std::string target;
    std::unique_ptr<proto::MasterService::Stub> stub;
  };
  struct Attempts {
    Duration pause = std::chrono::milliseconds(20);
  };

  explicit MasterStub(GrpcChannelOptions options);
  Endpoint& Current() ABSL_LOCKS_EXCLUDED(mu_);
  // After a failed attempt on `endpoint`: whether to try again (then the
  // next endpoint is chosen and any pause taken).
  bool Redirect(const Endpoint& endpoint, const grpc::Status& status,
                const grpc::ClientContext& context,
                std::chrono::system_clock::time_point deadline,
                Attempts* attempts) ABSL_LOCKS_EXCLUDED(mu_);
  Endpoint& AddEndpointLocked(const std::string& target)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const GrpcChannelOptions options_;
  // "Bearer <token>", or empty.
  const std::string authorization_;
  // Every channel's: TLS or plaintext.
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  std::unique_ptr<CallRecorder> owned_recorder_;
  CallRecorder* recorder_;
  // Several addresses were given: connections are probed (keepalive).
  bool probe_ = false;
  mutable Mutex mu_;
  // Never shrinks, so references stay valid; at most kMaxMasterAddresses
  // (leaders named by redirects are added up to that bound).
  std::vector<std::unique_ptr<Endpoint>> endpoints_ ABSL_GUARDED_BY(mu_);
  size_t current_ ABSL_GUARDED_BY(mu_) = 0;
};

// The GetNode call, shared by GrpcMasterApi and GrpcMasterLink.
Result<NodeView> GetNodeOver(MasterStub& stub, NodeId node);

}  // namespace mooncake_tier::rpc
