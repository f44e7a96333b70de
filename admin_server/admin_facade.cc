#include "admin_server/admin_facade.h"

namespace mooncake_tier::admin {

std::string_view FacadeOpName(FacadeOp op) {
  switch (op) {
    case FacadeOp::kListGroups:
      return "group listing";
    case FacadeOp::kEvictObject:
      return "forced eviction of an object";
    case FacadeOp::kEvictGroup:
      return "forced eviction of a group";
    case FacadeOp::kSetRuntimeConfig:
      return "changing this knob at run time";
  }
  return "this operation";
}

bool RuntimeConfigChange::empty() const {
  return !eviction_high_watermark && !eviction_ratio && !ssd_high_watermark &&
         !ssd_eviction_ratio && !group_fill_timeout && !group_broken_ttl &&
         !offload_max_per_heartbeat && !offload_queue_limit;
}

}  // namespace mooncake_tier::admin
