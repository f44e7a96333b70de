// UcxError: the reason a status maps to, and UCX's own last complaint on the
// thread carried in the message (once, and only while fresh).

#include "transport/ucx_status.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "transport/ucx_context.h"
#include "ucs/debug/log_def.h"

namespace mooncake_tier {
namespace ucx_status_test {
namespace {

TEST(UcxStatusTest, ReasonsFollowTheStatus) {
  EXPECT_EQ(UcxError(UCS_ERR_UNREACHABLE, "x").reason(),
            ErrorReason::kUnavailable);
  EXPECT_EQ(UcxError(UCS_ERR_TIMED_OUT, "x").reason(), ErrorReason::kTimeout);
  EXPECT_EQ(UcxError(UCS_ERR_INVALID_PARAM, "x").reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ(UcxError(UCS_ERR_NO_MEMORY, "x").reason(), ErrorReason::kInternal);
}

TEST(UcxStatusTest, UcxsLastComplaintOnTheThreadIsPassedOnOnce) {
  NoteUcxProblem("no active messages transport to <no debug data>");
  const Status first = UcxError(UCS_ERR_UNREACHABLE, "connecting to node");
  EXPECT_EQ(first.message(),
            "connecting to node: Destination is unreachable (UCX: no active "
            "messages transport to <no debug data>)");
  // Consumed: the next failure does not inherit it.
  EXPECT_EQ(UcxError(UCS_ERR_UNREACHABLE, "connecting to node").message(),
            "connecting to node: Destination is unreachable");
  // Another thread's complaint is not this thread's reason.
  std::thread([] { NoteUcxProblem("elsewhere"); }).join();
  EXPECT_EQ(UcxError(UCS_ERR_CANCELED, "reading").message().find("elsewhere"),
            std::string::npos);
}

TEST(UcxStatusTest, ALoggedWarningReachesTheErrorThroughTheLogHandler) {
  // Through UCX's own dispatch: the handler RouteUcxLogToStderr installs
  // keeps what UCX warned about.
  RouteUcxLogToStderr();
  ucs_log_dispatch(__FILE__, __LINE__, __func__, UCS_LOG_LEVEL_WARN,
                   &ucs_global_opts.log_component, "interface %s unusable",
                   "eth9");
  EXPECT_NE(UcxError(UCS_ERR_NO_DEVICE, "opening")
                .message()
                .find("(UCX: interface eth9 unusable)"),
            std::string::npos);
}

}  // namespace
}  // namespace ucx_status_test
}  // namespace mooncake_tier
