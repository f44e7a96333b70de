#include "transport/ucx_context.h"

#include <cstdlib>
#include <string>

#include "transport/ucx_status.h"

namespace mooncake_tier {

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
