#pragma once

// Caller memory registered once with a UCP context for many transfers: the
// registered-buffer API of the client (Client::RegisterBuffer). Transfers
// whose local range lies inside a registered buffer reuse its memory handle
// and remote key instead of registering (on a fabric: pinning) per call.
//
// Thread safety: thread-safe. Find hands out shared ownership, so a buffer
// unregistered while a call still uses it is unmapped when that call ends.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "mooncake_tier/status.h"
#include "transport/ucx_registered_memory.h"

namespace mooncake_tier {

class UcxBufferRegistry {
 public:
  // `context` must outlive the registry.
  explicit UcxBufferRegistry(ucp_context_h context) : context_(context) {}

  // INVALID_ARGUMENT for an empty buffer or one that overlaps a registered
  // buffer; the UCX error when the registration fails.
  Status Register(std::span<std::byte> buffer);
  // INVALID_ARGUMENT unless `buffer` is exactly a registered buffer.
  Status Unregister(std::span<std::byte> buffer);
  // The registered buffer holding all of [data, data + size), or null.
  std::shared_ptr<const UcxRegisteredMemory> Find(const std::byte* data,
                                                  uint64_t size) const;
  size_t size() const;

 private:
  bool OverlapsLocked(uint64_t begin, uint64_t end) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ucp_context_h const context_;
  mutable Mutex mu_;
  // By start address; registered ranges never overlap.
  std::map<uint64_t, std::shared_ptr<const UcxRegisteredMemory>> buffers_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier
