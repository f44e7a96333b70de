// Defaults of the Transport interface for transports that need no memory
// registration (in process): they validate and remember nothing.

#include "transport/transport.h"

namespace mooncake_tier {

Status Transport::RegisterBuffer(std::span<std::byte> buffer) {
  if (buffer.empty() || buffer.data() == nullptr) {
    return Status(ErrorReason::kInvalidArgument,
                  "cannot register an empty buffer");
  }
  return Status();
}

Status Transport::UnregisterBuffer(std::span<std::byte> buffer) {
  return Status();
}

}  // namespace mooncake_tier
