#pragma once

// A bare gRPC round trip to a server: grpc.health.v1.Health/Check with an
// empty request through gRPC's generic stub, answered by gRPC's own health
// service (RpcServer enables it). No code of the store runs on either side:
// the floor that the store's unary calls are compared with in the metadata
// scenario.
//
// Thread safety: one GrpcPing per thread (each has its completion queue).

#include <memory>
#include <string>

#include "grpcpp/channel.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/generic/generic_stub.h"
#include "mooncake_tier/status.h"
#include "rpc/tls_credentials.h"

namespace mooncake_tier::bench {

class GrpcPing {
 public:
  // A channel to `target` ("host:port"); connects on the first Ping. With
  // `tls`, over TLS as the store's stubs dial (rpc/tls_credentials.h).
  explicit GrpcPing(const std::string& target,
                    const rpc::TlsIdentity* tls = nullptr);
  ~GrpcPing();
  GrpcPing(const GrpcPing&) = delete;
  GrpcPing& operator=(const GrpcPing&) = delete;

  // One call, waited for (5 s deadline). UNAVAILABLE with gRPC's message
  // when it fails (a server without the health service answers
  // UNIMPLEMENTED).
  Status Ping();

 private:
  std::shared_ptr<grpc::Channel> channel_;
  grpc::GenericStub stub_;
  grpc::CompletionQueue cq_;
};

}  // namespace mooncake_tier::bench
