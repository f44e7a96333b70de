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

}  // namespace mooncake_tier::admin
