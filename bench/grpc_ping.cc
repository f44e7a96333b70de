#include "bench/grpc_ping.h"

#include <chrono>

#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/byte_buffer.h"

namespace mooncake_tier::bench {

GrpcPing::GrpcPing(const std::string& target, const rpc::TlsIdentity* tls)
    : channel_(grpc::CreateChannel(
          target, tls != nullptr ? rpc::MakeChannelCredentials(*tls)
                                 : grpc::InsecureChannelCredentials())),
      stub_(channel_) {}

GrpcPing::~GrpcPing() {
  cq_.Shutdown();
  void* tag;
  bool ok;
  while (cq_.Next(&tag, &ok)) {
  }
}

Status GrpcPing::Ping() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  // An empty message is a HealthCheckRequest for the whole server.
  grpc::Slice empty;
  grpc::ByteBuffer request(&empty, 1);
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub_.PrepareUnaryCall(&context, "/grpc.health.v1.Health/Check", request,
                             &cq_);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  call->Finish(&response, &status, this);
  void* tag = nullptr;
  bool ok = false;
  if (!cq_.Next(&tag, &ok) || !ok || tag != this) {
    return Status(ErrorReason::kUnavailable, "ping: the call did not finish");
  }
  if (!status.ok()) {
    return Status(ErrorReason::kUnavailable,
                  "ping: " + status.error_message() + " (gRPC code " +
                      std::to_string(status.error_code()) + ")");
  }
  return Status::Ok();
}

}  // namespace mooncake_tier::bench
