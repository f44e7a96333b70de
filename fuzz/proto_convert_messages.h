#pragma once

// The message a proto_convert_fuzz input holds, by its first byte (modulo
// kCount): shared by the harness and the corpus generator so that seeds
// keep their meaning when messages are added (append only).

#include <cstdint>

namespace mooncake_tier::fuzz {

enum class ProtoFuzzMessage : uint8_t {
  // Requests, as the master's service decodes them.
  kPutStartRequest,
  kPutEndRequest,
  kPutRevokeRequest,
  kGetReplicaListRequest,
  kExistsRequest,
  kProbePrefixRequest,
  kReleaseLeasesRequest,
  kRemoveRequest,
  kGetGroupRequest,
  kRemoveGroupRequest,
  kRegisterNodeRequest,
  kHeartbeatRequest,
  kNotifyOffloadFailureRequest,
  kNotifyPromotionFailureRequest,
  kReportSsdCorruptionRequest,
  // Replies, as the stubs decode them.
  kPutStartResponse,
  kGetReplicaListResponse,
  kProbePrefixResponse,
  kExistsResponse,
  kGetGroupResponse,
  kGetNodeResponse,
  kPullTasksResponse,
  kSyncDirectoryResponse,
  kPromotionAllocStartResponse,
  kRemoveResponse,
  // A call-level failure: [gRPC code byte][serialized ItemStatus details].
  kCallFailure,
  kCount,
};

}  // namespace mooncake_tier::fuzz
