#include "transport/ucx_context.h"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "transport/ucx_status.h"

namespace mooncake_tier {

namespace {

ucs_log_func_rc_t UcxLogToStderr(const char* file, unsigned line,
                                 const char* function, ucs_log_level_t level,
                                 const ucs_log_component_config_t* component,
                                 const char* format, va_list ap) {
  // UCX has filtered by level before dispatching. One write per line, so
  // lines of different threads do not interleave.
  char message[1024];
  std::vsnprintf(message, sizeof(message), format, ap);
  const char* base = std::strrchr(file, '/');
  char out[1280];
  const int n = std::snprintf(out, sizeof(out), "%s %-5s %s:%u %s\n",
                              component != nullptr ? component->name : "UCX",
                              ucs_log_level_names[level],
                              base != nullptr ? base + 1 : file, line, message);
  if (n > 0) {
    std::fwrite(out, 1, std::min(static_cast<size_t>(n), sizeof(out) - 1),
                stderr);
  }
  // A warning or an error often says why the call that logged it fails:
  // the error made from its status carries it on.
  if (level <= UCS_LOG_LEVEL_WARN) NoteUcxProblem(message);
  return UCS_LOG_FUNC_RC_STOP;
}

}  // namespace

void RouteUcxLogToStderr() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("UCX_LOG_FILE") != nullptr) return;
    ucs_log_push_handler(&UcxLogToStderr);
  });
}

Status ApplyUcxTunedSettings(ucp_config_t* config) {
  for (const UcxTunedSetting& tuned : kUcxTunedSettings) {
    if (std::getenv(tuned.env) != nullptr) continue;
    // A name the UCP table lacks is kept and applied to each transport
    // that has it, as it opens.
    const ucs_status_t status =
        ucp_config_modify(config, tuned.uct_name, tuned.value);
    if (status != UCS_OK) {
      return UcxError(status, std::string("setting ") + tuned.env);
    }
  }
  return Status::Ok();
}

Result<std::unique_ptr<UcxContext>> UcxContext::Create(
    const std::string& transports) {
  RouteUcxLogToStderr();
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) return UcxError(status, "reading UCX configuration");
  if (!transports.empty()) {
    status = ucp_config_modify(config, "TLS", transports.c_str());
    if (status != UCS_OK) {
      ucp_config_release(config);
      return Status(ErrorReason::kInvalidArgument,
                    "UCX transports '" + transports +
                        "' rejected: " + ucs_status_string(status));
    }
  }
  if (Status tuned = ApplyUcxTunedSettings(config); !tuned.ok()) {
    ucp_config_release(config);
    return tuned;
  }
  ucp_params_t params{};
  params.field_mask =
      UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 1;
  ucp_context_h context = nullptr;
  status = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (status != UCS_OK) return UcxError(status, "initialising UCX");
  return std::unique_ptr<UcxContext>(new UcxContext(context));
}

UcxContext::~UcxContext() { ucp_cleanup(context_); }

}  // namespace mooncake_tier
