#include "transport/ucx_status.h"

#include <chrono>
#include <string>

namespace mooncake_tier {

namespace {

struct UcxProblem {
  std::string line;
  std::chrono::steady_clock::time_point when;
};
thread_local UcxProblem t_problem;

}  // namespace

void NoteUcxProblem(std::string_view line) {
  t_problem.line.assign(line.substr(0, 400));
  t_problem.when = std::chrono::steady_clock::now();
}

Status UcxError(ucs_status_t status, std::string_view what) {
  ErrorReason reason = ErrorReason::kInternal;
  switch (status) {
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_REJECTED:
    case UCS_ERR_CANCELED:
    case UCS_ERR_IO_ERROR:
    case UCS_ERR_SOME_CONNECTS_FAILED:
    case UCS_ERR_NO_DEVICE:
      reason = ErrorReason::kUnavailable;
      break;
    case UCS_ERR_TIMED_OUT:
      reason = ErrorReason::kTimeout;
      break;
    case UCS_ERR_INVALID_PARAM:
    case UCS_ERR_INVALID_ADDR:
    case UCS_ERR_MESSAGE_TRUNCATED:
      reason = ErrorReason::kInvalidArgument;
      break;
    default:
      break;
  }
  std::string message(what);
  message += ": ";
  message += ucs_status_string(status);
  if (!t_problem.line.empty()) {
    if (std::chrono::steady_clock::now() - t_problem.when <
        std::chrono::seconds(1)) {
      message += " (UCX: " + t_problem.line + ")";
    }
    t_problem.line.clear();
  }
  return Status(reason, std::move(message));
}

Status SegmentGone() {
  return Status(ErrorReason::kUnavailable,
                "the node no longer exports this segment (it exited or "
                "withdrew it)");
}

Status NodeTimedOut(std::chrono::milliseconds timeout, std::string_view what) {
  return Status(ErrorReason::kTimeout,
                std::string(what) + ": no answer from node within " +
                    std::to_string(timeout.count()) + " ms");
}

}  // namespace mooncake_tier
