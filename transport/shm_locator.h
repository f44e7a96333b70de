#pragma once

// How a node tells clients on its own host where its segment's shared
// memory is, inside the opaque `SegmentEndpoint::remote_key` bytes, so that
// neither the master nor the gRPC schema change (docs/design/ucx-transport.md,
// "Same-host shared memory").
//
// A remote key is either a raw packed UCX key (a node that shares nothing)
// or an envelope, all integers little-endian:
//
//   u64 magic (kShmEnvelopeMagic) | u16 version | u16 reserved (0)
//   | u32 locator length L | L bytes locator | u32 key length R | R bytes key
//
// and nothing after. The framing is the same for every version: a reader
// that does not know `version` ignores the locator and still finds the UCX
// key. Locator version 1 (kShmLocatorV1Bytes bytes):
//
//   16 bytes boot id | u32 pid | i32 fd | 16 bytes token | u64 inode
//   | u64 file size | u64 file offset of the segment's first byte
//
// The magic cannot begin a packed UCX key: UCX 1.13 starts one with the
// bitmap of its memory domains (at most 16 of them), and the magic's high
// bytes are not zero.
//
// Thread safety: free functions on values; HostBootId() is thread-safe.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

inline constexpr uint64_t kShmEnvelopeMagic = 0x314D48535F544D89ull;
inline constexpr uint16_t kShmEnvelopeVersion = 1;
inline constexpr size_t kShmLocatorV1Bytes = 16 + 4 + 4 + 16 + 8 + 8 + 8;
// Shared-memory files this project creates are named this prefix followed
// by the 32 hex digits of their token.
inline constexpr std::string_view kShmNamePrefix = "mooncake-tier-segment-";

using ShmToken = std::array<uint8_t, 16>;
using BootId = std::array<uint8_t, 16>;

// Where a segment's memory can be mapped on the node's host.
struct ShmLocator {
  BootId boot_id{};    // host identity (/proc/sys/kernel/random/boot_id)
  uint32_t pid = 0;    // the node process
  int32_t fd = -1;     // its descriptor of the shared-memory file
  ShmToken token{};    // random, part of the file's name
  uint64_t inode = 0;  // of the file
  uint64_t file_size = 0;
  uint64_t file_offset = 0;  // where the segment's byte 0 is in the file

  bool operator==(const ShmLocator&) const = default;
};

// A remote key taken apart.
struct DecodedRemoteKey {
  // Into the decoded bytes, which must outlive it.
  std::string_view ucx_key;
  // Set when the envelope carries a locator this reader understands.
  std::optional<ShmLocator> locator;
  // Why a present locator was ignored (unknown version, bad length, bad
  // fields); empty otherwise. The UCX key is still usable.
  std::string ignored_locator;
};

// The envelope around `ucx_key`.
std::string EncodeShmEnvelope(const ShmLocator& locator,
                              std::string_view ucx_key);

// Raw keys (no magic) come back whole with no locator. INVALID_ARGUMENT
// when the bytes start with the magic but the framing is broken (lengths
// that do not add up, an empty UCX key): such a key must not reach UCX,
// whose unpacker trusts its input.
Result<DecodedRemoteKey> DecodeRemoteKey(std::string_view remote_key);

// "mooncake-tier-segment-<32 hex digits>".
std::string ShmFileName(const ShmToken& token);

// A fresh random token (getrandom). IO_ERROR if the kernel gives none.
Result<ShmToken> NewShmToken();

// This host's boot id, read once; an all-zero id when it cannot be read
// (then no locator is ever published or trusted).
const BootId& HostBootId();

}  // namespace mooncake_tier
