#pragma once

// The methods of MasterService (rpc/proto/master.proto), declared once. The
// server and the stubs index their CallRecorder with MasterMethod; metrics
// label calls with MasterMethodName.
//
// Thread safety: constants and pure functions.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mooncake_tier::rpc {

// X(name): one entry per rpc of MasterService, in proto order. New rpcs
// are appended, so a method's index (and its metric label) never moves.
#define MOONCAKE_TIER_MASTER_RPCS(X) \
  X(PutStart)                        \
  X(PutEnd)                          \
  X(PutRevoke)                       \
  X(GetReplicaList)                  \
  X(Exists)                          \
  X(Remove)                          \
  X(GetGroup)                        \
  X(RemoveGroup)                     \
  X(GetNode)                         \
  X(RegisterNode)                    \
  X(Heartbeat)                       \
  X(NotifyOffloadSuccess)            \
  X(NotifyOffloadFailure)            \
  X(ReportSsdCorruption)             \
  X(PromotionAllocStart)             \
  X(NotifyPromotionSuccess)          \
  X(NotifyPromotionFailure)          \
  X(DeregisterNode)                  \
  X(PullTasks)                       \
  X(ReleaseLeases)                   \
  X(SyncDirectory)                   \
  X(ProbePrefix)                     \
  X(GetControlLane)

enum class MasterMethod : uint32_t {
#define MOONCAKE_TIER_RPC_ENUM(name) k##name,
  MOONCAKE_TIER_MASTER_RPCS(MOONCAKE_TIER_RPC_ENUM)
#undef MOONCAKE_TIER_RPC_ENUM
};

inline constexpr uint32_t kMasterMethodCount = 0
#define MOONCAKE_TIER_RPC_COUNT(name) +1
    MOONCAKE_TIER_MASTER_RPCS(MOONCAKE_TIER_RPC_COUNT)
#undef MOONCAKE_TIER_RPC_COUNT
    ;

// "PutStart" for MasterMethod::kPutStart: the rpc's name in the proto.
std::string_view MasterMethodName(MasterMethod method);
// Every method name, indexed by MasterMethod: what a CallRecorder for the
// master service is built with.
std::vector<std::string> MasterMethodNames();

}  // namespace mooncake_tier::rpc
