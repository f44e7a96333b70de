// SharedGroupStatus's reference counting, out of the public header.

#include <atomic>
#include <utility>

#include "mooncake_tier/types.h"
#include "protocol/group_status_owner.h"

namespace mooncake_tier {
namespace {

// A status made from a value: its own owner.
struct OwnedStatus final : GroupStatusOwner {
  explicit OwnedStatus(GroupStatus s) : status(std::move(s)) {}
  void Ref() const noexcept override {
    refs.fetch_add(1, std::memory_order_relaxed);
  }
  void Unref() const noexcept override {
    // acq_rel: the last owner sees every other owner's use.
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  GroupStatus status;
  mutable std::atomic<uint32_t> refs{0};
};

}  // namespace

SharedGroupStatus::SharedGroupStatus(GroupStatus status) {
  const OwnedStatus* owned = new OwnedStatus(std::move(status));
  *this = SharedGroupStatus(&owned->status, owned);
}

void SharedGroupStatus::Retain(const GroupStatusOwner* owner) noexcept {
  owner->Ref();
}

void SharedGroupStatus::Release(const GroupStatusOwner* owner) noexcept {
  owner->Unref();
}

}  // namespace mooncake_tier
