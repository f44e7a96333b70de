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
