#include "core/group_record.h"

#include <cstring>
#include <new>

namespace mooncake_tier {

GroupRecord::GroupRecord(std::string_view id, uint32_t size)
    : group_size_(size),
      id_hash_(HashKey(id)),
      id_size_(static_cast<uint32_t>(id.size())) {
  std::memcpy(reinterpret_cast<char*>(this + 1), id.data(), id.size());
}

GroupRef GroupRecord::Make(std::string_view id, uint32_t size) {
  // One allocation: the record, then the id's bytes.
  void* memory = ::operator new(sizeof(GroupRecord) + id.size());
  return GroupRef(new (memory) GroupRecord(id, size));
}

void GroupRef::Release() {
  if (record_ == nullptr) return;
  // acq_rel: the last owner sees every other owner's use of the record.
  if (record_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    record_->~GroupRecord();
    ::operator delete(static_cast<void*>(record_));
  }
  record_ = nullptr;
}

}  // namespace mooncake_tier
