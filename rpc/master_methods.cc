#include "rpc/master_methods.h"

namespace mooncake_tier::rpc {

std::string_view MasterMethodName(MasterMethod method) {
  switch (method) {
#define MOONCAKE_TIER_RPC_NAME(name) \
  case MasterMethod::k##name:        \
    return #name;
    MOONCAKE_TIER_MASTER_RPCS(MOONCAKE_TIER_RPC_NAME)
#undef MOONCAKE_TIER_RPC_NAME
  }
  return "Unknown";
}

std::vector<std::string> MasterMethodNames() {
  std::vector<std::string> names;
  names.reserve(kMasterMethodCount);
  for (uint32_t i = 0; i < kMasterMethodCount; ++i) {
    names.emplace_back(MasterMethodName(static_cast<MasterMethod>(i)));
  }
  return names;
}

}  // namespace mooncake_tier::rpc
