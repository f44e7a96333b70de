#pragma once

// The wire format of the control lane (docs/design/control-path.md): the
// hot client calls to the master as UCX active messages beside gRPC.
//
// A request (AM id kControlLaneRequestAmId) is a fixed header (magic,
// version, method, request id) followed by the serialized protobuf request
// of the call's gRPC twin. The answer (AM id kControlLaneReplyAmId) goes
// back on the endpoint the request came in on: a header (magic, version,
// request id), the call-level status (its reason by name, so that the
// numbering of reasons is no part of the wire, and its message), then on OK
// the serialized protobuf response.
//
// Encoding: little-endian fixed-width integers; strings as a length prefix
// and bytes. Decoding checks every length against the message and the
// limits below and returns INVALID_ARGUMENT for anything malformed; it
// never reads past its input.
//
// Thread safety: free functions on values.

#include <cstdint>
#include <string>
#include <string_view>

#include "mooncake_tier/status.h"

namespace mooncake_tier::rpc {

inline constexpr unsigned kControlLaneRequestAmId = 20;
inline constexpr unsigned kControlLaneReplyAmId = 21;

// The largest request or reply the lane carries (a batch of kMaxBatchItems
// keys of the longest length fits; larger calls go over gRPC).
inline constexpr size_t kMaxControlLaneBytes = 8u << 20;
// A status message is cut to this many bytes on the wire.
inline constexpr size_t kMaxControlLaneMessageBytes = 1024;

struct ControlLaneRequest {
  uint32_t method = 0;  // a MasterMethod
  uint64_t request_id = 0;
  std::string_view payload;  // into the decoded message
};

struct ControlLaneReply {
  uint64_t request_id = 0;
  Status status;
  std::string_view payload;  // into the decoded message; empty unless OK
};

std::string EncodeControlLaneRequest(uint32_t method, uint64_t request_id,
                                     std::string_view payload);
// The views of the result point into `in`.
Result<ControlLaneRequest> DecodeControlLaneRequest(std::string_view in);

// The status message is cut to kMaxControlLaneMessageBytes; the payload is
// sent only when `status` is OK.
std::string EncodeControlLaneReply(uint64_t request_id, const Status& status,
                                   std::string_view payload);
Result<ControlLaneReply> DecodeControlLaneReply(std::string_view in);

}  // namespace mooncake_tier::rpc
