#include "rpc/master_stub.h"

#include <algorithm>
#include <utility>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "rpc/batch_util.h"
#include "rpc/convert.h"

namespace mooncake_tier::rpc {

Result<std::unique_ptr<MasterStub>> MasterStub::Create(
    GrpcChannelOptions options) {
  if (options.target.empty()) {
    return Status(ErrorReason::kInvalidArgument, "master address is empty");
  }
  if (options.deadline <= Duration::zero()) {
    return Status(ErrorReason::kInvalidArgument,
                  "RPC deadline must be positive");
  }
  return std::unique_ptr<MasterStub>(new MasterStub(std::move(options)));
}

MasterStub::MasterStub(GrpcChannelOptions options)
    : options_(std::move(options)) {
  if (options_.recorder == nullptr) {
    owned_recorder_ = std::make_unique<CallRecorder>(MasterMethodNames());
  }
  recorder_ = options_.recorder ? options_.recorder : owned_recorder_.get();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  const int backoff_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          options_.max_reconnect_backoff)
          .count());
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, std::max(backoff_ms, 1));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              std::clamp(backoff_ms / 10, 1, 100));
  // Without this a channel whose master went away waits far longer than
  // the backoff before it dials again: re-resolving the target is
  // rate-limited to once per 30 s by default.
  args.SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS,
              std::max(backoff_ms, 1));
  stub_ = proto::MasterService::NewStub(grpc::CreateCustomChannel(
      options_.target, grpc::InsecureChannelCredentials(), args));
}

Result<NodeView> GetNodeOver(MasterStub& stub, NodeId node) {
  proto::GetNodeRequest req;
  req.add_node_ids(node);
  proto::GetNodeResponse resp;
  const Status call =
      stub.Call(MasterMethod::kGetNode, 1,
                [&](proto::MasterService::Stub& s, grpc::ClientContext* c) {
                  return s.GetNode(c, req, &resp);
                });
  const TimePoint now = stub.Now();
  return std::move(ItemResults<NodeView>(
      call, 1, resp.results(),
      [now](const proto::GetNodeResult& r) -> Result<NodeView> {
        if (!r.has_node()) {
          return Status(ErrorReason::kInvalidArgument,
                        "node missing from an OK result");
        }
        return FromProto(r.node(), now);
      })[0]);
}

}  // namespace mooncake_tier::rpc
