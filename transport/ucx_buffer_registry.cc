#include "transport/ucx_buffer_registry.h"

#include <iterator>
#include <string>

namespace mooncake_tier {
namespace {

uint64_t AddressOf(const std::byte* p) { return reinterpret_cast<uint64_t>(p); }

}  // namespace

Status UcxBufferRegistry::Register(std::span<std::byte> buffer) {
  if (buffer.empty() || buffer.data() == nullptr) {
    return Status(ErrorReason::kInvalidArgument,
                  "cannot register an empty buffer");
  }
  const uint64_t begin = AddressOf(buffer.data());
  const uint64_t end = begin + buffer.size();
  {
    MutexLock lock(&mu_);
    if (OverlapsLocked(begin, end)) {
      return Status(ErrorReason::kInvalidArgument,
                    "buffer overlaps a buffer registered before");
    }
  }
  // Registration can take long (pinning); do it without the lock and check
  // again before publishing.
  MT_ASSIGN_OR_RETURN(
      std::unique_ptr<UcxRegisteredMemory> registered,
      UcxRegisteredMemory::Create(context_, buffer.data(), buffer.size()));
  MutexLock lock(&mu_);
  if (OverlapsLocked(begin, end)) {
    return Status(ErrorReason::kInvalidArgument,
                  "buffer overlaps a buffer registered concurrently");
  }
  buffers_.emplace(begin, std::move(registered));
  return Status();
}

bool UcxBufferRegistry::OverlapsLocked(uint64_t begin, uint64_t end) const {
  auto next = buffers_.lower_bound(begin);
  if (next != buffers_.end() && next->first < end) return true;
  if (next == buffers_.begin()) return false;
  const UcxRegisteredMemory& prev = *std::prev(next)->second;
  return prev.address() + prev.size() > begin;
}

Status UcxBufferRegistry::Unregister(std::span<std::byte> buffer) {
  MutexLock lock(&mu_);
  auto it = buffers_.find(AddressOf(buffer.data()));
  if (it == buffers_.end() || it->second->size() != buffer.size()) {
    return Status(ErrorReason::kInvalidArgument,
                  "buffer of " + std::to_string(buffer.size()) +
                      " bytes was not registered");
  }
  buffers_.erase(it);
  return Status();
}

std::shared_ptr<const UcxRegisteredMemory> UcxBufferRegistry::Find(
    const std::byte* data, uint64_t size) const {
  const uint64_t begin = AddressOf(data);
  MutexLock lock(&mu_);
  auto it = buffers_.upper_bound(begin);
  if (it == buffers_.begin()) return nullptr;
  --it;
  const UcxRegisteredMemory& buffer = *it->second;
  if (begin + size > buffer.address() + buffer.size()) return nullptr;
  return it->second;
}

size_t UcxBufferRegistry::size() const {
  MutexLock lock(&mu_);
  return buffers_.size();
}

}  // namespace mooncake_tier
