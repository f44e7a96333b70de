#pragma once

// Errors at the gRPC edge, mapped once:
// - ErrorReason -> gRPC canonical code (through the reason's StatusCode);
// - Status <-> proto::ItemStatus (in-band, per item: the reason travels by
//   its wire name, so the proto never needs editing when core adds one);
// - Status <-> grpc::Status (call-level failures; the server attaches a
//   serialized ItemStatus as error details, the client reads it back or,
//   for transport failures, derives a reason from the code).
//
// rpc-internal: includes generated headers; never include it from a header
// outside rpc/.
//
// Thread safety: pure functions.

#include <string_view>

#include "grpcpp/support/status.h"
#include "mooncake_tier/status.h"
#include "rpc/proto/master.pb.h"

namespace mooncake_tier::rpc {

// The one mapping of the core's canonical codes to gRPC's.
grpc::StatusCode ToGrpcCode(StatusCode code);
inline grpc::StatusCode GrpcCodeOf(ErrorReason reason) {
  return ToGrpcCode(ReasonCode(reason));
}
// The reason a call-level gRPC failure without attached details stands
// for: UNAVAILABLE -> UNAVAILABLE, DEADLINE_EXCEEDED -> TIMEOUT,
// CANCELLED/ABORTED -> ABORTED, INVALID_ARGUMENT/OUT_OF_RANGE/
// RESOURCE_EXHAUSTED (a message over the size limit) -> INVALID_ARGUMENT,
// UNAUTHENTICATED/PERMISSION_DENIED -> UNAUTHENTICATED, anything else ->
// INTERNAL.
ErrorReason ReasonForGrpcCode(grpc::StatusCode code);

// OK encodes as an empty message.
void ToProto(const Status& status, proto::ItemStatus* out);
// An empty reason or "OK" is OK. A reason name this build does not know
// becomes INTERNAL, with the name kept in the message.
Status FromProto(const proto::ItemStatus& status);

// A call-level failure as the server returns it. REQUIRES: !status.ok().
grpc::Status ToGrpcStatus(const Status& status);
// A failed call as the client sees it: the server's reason when it sent
// one, else ReasonForGrpcCode. The message names `method` and `target`.
Status FromGrpcStatus(const grpc::Status& status, std::string_view method,
                      std::string_view target);

}  // namespace mooncake_tier::rpc
