#include "admin_server/admin_route.h"

namespace mooncake_tier::admin {

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:  // NOT_APPLICABLE, OBJECT_LEASED
    case StatusCode::kAborted:
      return 409;
    case StatusCode::kResourceExhausted:  // QUEUE_FULL, NO_SPACE
      return 429;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kDataLoss:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

int CanonicalCodeOfHttp(int http_status) {
  // gRPC canonical codes: OK 0, INVALID_ARGUMENT 3, NOT_FOUND 5,
  // FAILED_PRECONDITION 9, RESOURCE_EXHAUSTED 8, UNIMPLEMENTED 12,
  // INTERNAL 13, UNAVAILABLE 14, DEADLINE_EXCEEDED 4, UNAUTHENTICATED 16.
  if (http_status < 400) return 0;
  switch (http_status) {
    case 401:
      return 16;
    case 404:
      return 5;
    case 409:
      return 9;
    case 413:
    case 414:
    case 429:
    case 431:
      return 8;
    case 501:
      return 12;
    case 503:
      return 14;
    case 504:
      return 4;
    default:
      return http_status < 500 ? 3 : 13;
  }
}

AdminResponse AdminResponse::Json(int status, const nlohmann::json& body) {
  AdminResponse response;
  response.status = status;
  // Keys are bytes; replace what is not UTF-8 rather than fail to render.
  response.body =
      body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  response.body.push_back('\n');
  return response;
}

AdminResponse AdminResponse::Text(int status, std::string body,
                                  std::string content_type) {
  AdminResponse response;
  response.status = status;
  response.body = std::move(body);
  response.content_type = std::move(content_type);
  return response;
}

AdminResponse AdminResponse::Error(int http_status, std::string_view code,
                                   std::string_view reason,
                                   std::string_view message) {
  nlohmann::json error = {
      {"code", code}, {"reason", reason}, {"message", message}};
  return Json(http_status, {{"error", std::move(error)}});
}

AdminResponse AdminResponse::Error(const Status& status) {
  return Error(HttpStatusOf(status.code()), CodeName(status.code()),
               ReasonName(status.reason()), status.message());
}

AdminResponse AdminResponse::BadRequest(std::string_view message,
                                        std::string_view reason) {
  return Error(400, "INVALID_ARGUMENT", reason, message);
}

AdminResponse AdminResponse::NotImplemented(FacadeOp op) {
  return Error(
      501, "NOT_IMPLEMENTED", "NOT_IMPLEMENTED",
      std::string(FacadeOpName(op)) + " is not supported by this server yet");
}

}  // namespace mooncake_tier::admin
