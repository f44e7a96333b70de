#pragma once

// The wire format of SSD-tier reads over UCX active messages.
//
// A client sends an SsdReadRequest to the node's worker (AM id
// kSsdReadRequestAmId): per key, the address, length and packed remote key
// of a buffer it registered, plus its own worker address for the answer.
// The node reads the values, writes each into its buffer with a one-sided
// put, flushes, and sends an SsdReadReply (AM id kSsdReadReplyAmId) to the
// client's worker: one result per key, the value size or an error.
//
// Encoding: little-endian fixed-width integers; strings as a length prefix
// and bytes. Every message starts with a magic, a version and its kind.
// Decoding checks every length against the message and the limits below
// and returns INVALID_ARGUMENT for anything malformed; it never reads past
// the input.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

inline constexpr unsigned kSsdReadRequestAmId = 1;
inline constexpr unsigned kSsdReadReplyAmId = 2;

inline constexpr uint32_t kMaxSsdReadOps = 4096;
inline constexpr size_t kMaxSsdReadKeyBytes = 1024;
inline constexpr size_t kMaxPackedKeyBytes = 4096;
inline constexpr size_t kMaxWorkerAddressBytes = 64 * 1024;
inline constexpr size_t kMaxStatusMessageBytes = 512;

struct SsdReadRequestOp {
  std::string key;
  uint64_t address = 0;  // of the client's buffer
  uint64_t length = 0;   // of the client's buffer
  std::string packed_key;
};

// What a node needs to answer even a request whose body is damaged.
struct SsdReadRequestHeader {
  uint64_t request_id = 0;
  uint32_t budget_ms = 0;  // how long the client still waits
  std::string reply_address;
};

struct SsdReadRequest {
  SsdReadRequestHeader header;
  std::vector<SsdReadRequestOp> ops;
};

struct SsdReadReply {
  uint64_t request_id = 0;
  // Not OK when the whole request failed (queue full, malformed, ...);
  // `results` is then empty.
  Status status;
  std::vector<Result<uint64_t>> results;
};

std::string EncodeSsdReadRequest(const SsdReadRequest& request);
Result<SsdReadRequestHeader> DecodeSsdReadRequestHeader(std::string_view in);
Result<SsdReadRequest> DecodeSsdReadRequest(std::string_view in);

std::string EncodeSsdReadReply(const SsdReadReply& reply);
// The request id of a reply, if its header is intact.
Result<uint64_t> DecodeSsdReadReplyId(std::string_view in);
Result<SsdReadReply> DecodeSsdReadReply(std::string_view in);

}  // namespace mooncake_tier
