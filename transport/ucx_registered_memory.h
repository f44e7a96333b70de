#pragma once

// A memory range registered with a UCP context for remote access
// (ucp_mem_map), with its packed remote key: what a peer needs, together
// with the address, to put into or get from the range one-sided. Unmapped
// on destruction.
//
// Thread safety: immutable after Create; destroy it only once no peer
// operation on the range can still be in flight.

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

class UcxRegisteredMemory {
 public:
  // REQUIRES: base != nullptr, size > 0; `context` outlives the result.
  static Result<std::unique_ptr<UcxRegisteredMemory>> Create(
      ucp_context_h context, std::byte* base, uint64_t size);
  ~UcxRegisteredMemory();

  UcxRegisteredMemory(const UcxRegisteredMemory&) = delete;
  UcxRegisteredMemory& operator=(const UcxRegisteredMemory&) = delete;

  // For operations from this range (UCP_OP_ATTR_FIELD_MEMH).
  ucp_mem_h handle() const { return memh_; }
  uint64_t address() const { return reinterpret_cast<uint64_t>(base_); }
  uint64_t size() const { return size_; }
  // Opaque bytes for ucp_ep_rkey_unpack on the peer.
  const std::string& packed_key() const { return packed_key_; }

 private:
  UcxRegisteredMemory(ucp_context_h context, ucp_mem_h memh, std::byte* base,
                      uint64_t size, std::string packed_key)
      : context_(context),
        memh_(memh),
        base_(base),
        size_(size),
        packed_key_(std::move(packed_key)) {}

  ucp_context_h const context_;
  ucp_mem_h const memh_;
  std::byte* const base_;
  const uint64_t size_;
  const std::string packed_key_;
};

}  // namespace mooncake_tier
