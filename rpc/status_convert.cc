#include "rpc/status_convert.h"

#include <string>

#include "rpc/call_recorder.h"

namespace mooncake_tier::rpc {

grpc::StatusCode ToGrpcCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return grpc::StatusCode::OK;
    case StatusCode::kInvalidArgument:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case StatusCode::kNotFound:
      return grpc::StatusCode::NOT_FOUND;
    case StatusCode::kAlreadyExists:
      return grpc::StatusCode::ALREADY_EXISTS;
    case StatusCode::kFailedPrecondition:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case StatusCode::kResourceExhausted:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case StatusCode::kUnavailable:
      return grpc::StatusCode::UNAVAILABLE;
    case StatusCode::kDeadlineExceeded:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    case StatusCode::kAborted:
      return grpc::StatusCode::ABORTED;
    case StatusCode::kDataLoss:
      return grpc::StatusCode::DATA_LOSS;
    case StatusCode::kInternal:
      return grpc::StatusCode::INTERNAL;
    case StatusCode::kUnauthenticated:
      return grpc::StatusCode::UNAUTHENTICATED;
  }
  return grpc::StatusCode::INTERNAL;
}

ErrorReason ReasonForGrpcCode(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return ErrorReason::kNone;
    case grpc::StatusCode::UNAVAILABLE:
      return ErrorReason::kUnavailable;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return ErrorReason::kTimeout;
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::ABORTED:
      return ErrorReason::kAborted;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return ErrorReason::kInvalidArgument;
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return ErrorReason::kUnauthenticated;
    default:
      return ErrorReason::kInternal;
  }
}

void ToProto(const Status& status, proto::ItemStatus* out) {
  out->Clear();
  if (status.ok()) return;
  out->set_reason(std::string(ReasonName(status.reason())));
  out->set_code(static_cast<int32_t>(GrpcCodeOf(status.reason())));
  out->set_message(status.message());
}

Status FromProto(const proto::ItemStatus& status) {
  if (status.reason().empty()) return Status::Ok();
  const ErrorReason reason = ReasonFromName(status.reason());
  if (reason == ErrorReason::kNone) return Status::Ok();
  if (reason == ErrorReason::kInternal &&
      status.reason() != ReasonName(ErrorReason::kInternal)) {
    return Status(ErrorReason::kInternal,
                  "unknown reason '" + status.reason() + "' (gRPC code " +
                      std::to_string(status.code()) + "): " + status.message());
  }
  return Status(reason, status.message());
}

grpc::Status ToGrpcStatus(const Status& status) {
  proto::ItemStatus details;
  ToProto(status, &details);
  return grpc::Status(GrpcCodeOf(status.reason()), status.ToString(),
                      details.SerializeAsString());
}

Status FromGrpcStatus(const grpc::Status& status, std::string_view method,
                      std::string_view target) {
  if (status.ok()) return Status::Ok();
  std::string where =
      std::string(method) + " to master at " + std::string(target) + ": ";
  proto::ItemStatus details;
  if (!status.error_details().empty() &&
      details.ParseFromString(status.error_details()) &&
      !details.reason().empty()) {
    Status sent = FromProto(details);
    if (!sent.ok()) return Status(sent.reason(), where + sent.message());
  }
  const ErrorReason reason = ReasonForGrpcCode(status.error_code());
  std::string what;
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      what = "master unreachable";
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      what = "no answer within the deadline";
      break;
    default:
      what = "call failed";
      break;
  }
  return Status(reason == ErrorReason::kNone ? ErrorReason::kInternal : reason,
                where + what + " (gRPC " +
                    std::string(GrpcCodeName(status.error_code())) + ": " +
                    status.error_message() + ")");
}

}  // namespace mooncake_tier::rpc
