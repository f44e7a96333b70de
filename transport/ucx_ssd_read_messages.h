#pragma once

// The wire format of SSD-tier reads over UCX active messages.
//
// A client sends an SsdReadRequest to the node's worker (AM id
// kSsdReadRequestAmId) with its own worker address for the answer. Two
// kinds (docs/design/ucx-transport.md, "SSD-tier reads"):
//
// - Unstaged (any host): per key, the address, length and packed remote
//   key of a buffer the client registered. The node reads the values,
//   writes each into its buffer with a one-sided put, flushes, and sends an
//   SsdReadReply (AM id kSsdReadReplyAmId): one result per key, the value
//   size or an error.
// - Staged (kSsdReadFlagStaged; same host, the client mapped the node's
//   segment): per key only the key and the length the client can take. The
//   node reads each value into a range of its segment's staging tail and
//   replies with each value's size and offset in the segment, plus a lease
//   (id and duration) on those ranges. The client copies the values out and
//   sends an SsdReadRelease (AM id kSsdReadReleaseAmId, no answer) naming
//   the lease; the node frees the ranges then, or when the lease expires.
//   A node that cannot stage the request answers with `staging_refused`
//   set (QUEUE_FULL when the staging area cannot hold it now or at all,
//   NOT_APPLICABLE when it has none) and the client asks again unstaged.
//
// Encoding: little-endian fixed-width integers; strings as a length prefix
// and bytes. Every message starts with a magic, a version and its kind.
// Decoding checks every length against the message and the limits below
// and returns INVALID_ARGUMENT for anything malformed; it never reads past
// the input.
//
// Thread safety: free functions on values.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

inline constexpr unsigned kSsdReadRequestAmId = 1;
inline constexpr unsigned kSsdReadReplyAmId = 2;
inline constexpr unsigned kSsdReadReleaseAmId = 3;

inline constexpr uint32_t kMaxSsdReadOps = 4096;
// A node's staging ranges for staged reads start on this boundary (so that
// O_DIRECT reads land in them); a client sizes the area it asks for with it.
inline constexpr uint64_t kSsdReadStagingAlignment = 4096;
inline constexpr size_t kMaxSsdReadKeyBytes = 1024;
inline constexpr size_t kMaxPackedKeyBytes = 4096;
inline constexpr size_t kMaxWorkerAddressBytes = 64 * 1024;
inline constexpr size_t kMaxStatusMessageBytes = 512;

// SsdReadRequestHeader::flags: the node stages the values in its segment
// (ops carry no buffer address or key).
inline constexpr uint32_t kSsdReadFlagStaged = 1;

struct SsdReadRequestOp {
  std::string key;
  uint64_t length = 0;     // of the client's buffer: the largest value it takes
  uint64_t address = 0;    // unstaged only: the client's buffer
  std::string packed_key;  // unstaged only: its packed remote key
};

// What a node needs to answer even a request whose body is damaged.
struct SsdReadRequestHeader {
  uint64_t request_id = 0;
  uint32_t budget_ms = 0;  // how long the client still waits
  uint32_t flags = 0;      // kSsdReadFlag*; unknown bits are malformed
  std::string reply_address;

  bool staged() const { return (flags & kSsdReadFlagStaged) != 0; }
};

struct SsdReadRequest {
  SsdReadRequestHeader header;
  std::vector<SsdReadRequestOp> ops;
};

struct SsdReadReply {
  uint64_t request_id = 0;
  // Not OK when the whole request failed (queue full, malformed, staging
  // refused, ...); `results` is then empty.
  Status status;
  // The request asked for staging and the node could not stage it (status
  // says why); the client may ask again unstaged. REQUIRES: status not OK.
  bool staging_refused = false;
  // The values were staged: `offsets` holds, per result, where the value
  // lies in the node's segment (0 for failed results). REQUIRES: status OK.
  bool staged = false;
  // Staged: the lease on the staging ranges, released by an SsdReadRelease
  // naming `lease_id`; 0 when nothing was kept (no value to copy). The node
  // keeps the ranges for `lease_ms` after it received the request.
  uint64_t lease_id = 0;
  uint32_t lease_ms = 0;
  std::vector<Result<uint64_t>> results;
  std::vector<uint64_t> offsets;
};

std::string EncodeSsdReadRequest(const SsdReadRequest& request);
Result<SsdReadRequestHeader> DecodeSsdReadRequestHeader(std::string_view in);
Result<SsdReadRequest> DecodeSsdReadRequest(std::string_view in);

// REQUIRES: offsets.size() == results.size() when staged.
std::string EncodeSsdReadReply(const SsdReadReply& reply);
// The request id of a reply, if its header is intact.
Result<uint64_t> DecodeSsdReadReplyId(std::string_view in);
Result<SsdReadReply> DecodeSsdReadReply(std::string_view in);

// The release of a staged request's ranges. INVALID_ARGUMENT for anything
// malformed, lease id 0 included.
std::string EncodeSsdReadRelease(uint64_t lease_id);
Result<uint64_t> DecodeSsdReadRelease(std::string_view in);

}  // namespace mooncake_tier
