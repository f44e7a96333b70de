#include "core/group_record.h"

#include <cstring>
#include <new>
#include <string>

namespace mooncake_tier {

GroupRecord::GroupRecord(std::string_view id, uint32_t size, size_t id_hash)
    : group_size_(size),
      id_hash_(id_hash),
      id_size_(static_cast<uint32_t>(id.size())) {
  std::memcpy(reinterpret_cast<char*>(this + 1), id.data(), id.size());
}

GroupRecord::~GroupRecord() {
  delete complete_status_.load(std::memory_order_relaxed);
}

GroupRef GroupRecord::Make(std::string_view id, uint32_t size) {
  return Make(HashedKey(id), size);
}

GroupRef GroupRecord::Make(const HashedKey& id, uint32_t size) {
  // One allocation: the record, then the id's bytes.
  void* memory = ::operator new(sizeof(GroupRecord) + id.key.size());
  return GroupRef(new (memory) GroupRecord(id.key, size, id.hash));
}

SharedGroupStatus GroupRecord::CompleteStatus() const {
  const GroupStatus* status = complete_status_.load(std::memory_order_acquire);
  if (status == nullptr) {
    // Made on first use: a group no one probes never pays for it. Racing
    // first callers each make one; the first to install it wins.
    const GroupStatus* made = new GroupStatus{
        std::string(group_id()), GroupState::kComplete, group_size_,
        group_size_};
    if (complete_status_.compare_exchange_strong(status, made,
                                                 std::memory_order_acq_rel,
                                                 std::memory_order_acquire)) {
      status = made;
    } else {
      delete made;  // `status` now holds the winner's
    }
  }
  return SharedGroupStatus(status, this);
}

void GroupRecord::Unref() const noexcept {
  // acq_rel: the last owner sees every other owner's use of the record.
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    this->~GroupRecord();
    ::operator delete(const_cast<void*>(static_cast<const void*>(this)));
  }
}

}  // namespace mooncake_tier
