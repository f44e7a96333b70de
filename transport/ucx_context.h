#pragma once

// One UCP context: the UCX library instance a client transport or a node
// exporter runs on, with RMA, active messages and wake-up enabled. Memory
// registrations and workers hang off it and must be released first.
//
// Thread safety: created with mt_workers_shared, so workers of one context
// may run on different threads; the handle itself is immutable.

#include <ucp/api/ucp.h>

#include <memory>
#include <string>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

// A UCX setting this project changes from UCX's default.
struct UcxTunedSetting {
  const char* uct_name;  // as the transport's table names it
  const char* env;       // the variable that, when set, wins
  const char* value;
};

// The settings, applied to every context (docs/design/ucx-transport.md):
// - TCP's TX_SEG_SIZE 8K -> 64K: an RMA read over TCP comes back in
//   fragments of this size. On loopback with 8K a 1 MiB get took 1.0 ms at
//   the median and 4 MiB gets ran at ~1.1 GB/s; with 64K, 0.25-0.4 ms and
//   2.5-3.5 GB/s (RX_SEG_SIZE is 64K already).
inline constexpr UcxTunedSetting kUcxTunedSettings[] = {
    {"TX_SEG_SIZE", "UCX_TCP_TX_SEG_SIZE", "64K"},
};

// Applies kUcxTunedSettings to `config`, each unless its variable is set.
Status ApplyUcxTunedSettings(ucp_config_t* config);

// UCX prints its log to standard output unless UCX_LOG_FILE says
// otherwise, which mixes it into a command's result (`mooncake-tierctl kv
// get KEY > FILE`). Unless UCX_LOG_FILE is set, this routes every UCX log
// line to standard error instead, in UCX's own layout. Idempotent and
// thread-safe; UcxContext::Create calls it before UCX starts, so lines
// printed while libucs loads (none at the default level) still go to
// standard output.
void RouteUcxLogToStderr();

class UcxContext {
 public:
  // `transports` as UCX_TLS spells it; empty keeps UCX's configuration.
  static Result<std::unique_ptr<UcxContext>> Create(
      const std::string& transports);
  ~UcxContext();

  UcxContext(const UcxContext&) = delete;
  UcxContext& operator=(const UcxContext&) = delete;

  ucp_context_h handle() const { return context_; }

 private:
  explicit UcxContext(ucp_context_h context) : context_(context) {}

  ucp_context_h const context_;
};

}  // namespace mooncake_tier
