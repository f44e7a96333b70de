#include "core/group_record.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <string>

namespace mooncake_tier {

GroupRecord::GroupRecord(std::string_view id, uint32_t size, size_t id_hash)
    : group_size_(size),
      id_hash_(id_hash),
      id_size_(static_cast<uint32_t>(id.size())) {
  static_assert(sizeof(GroupRecord) % alignof(std::atomic<uint64_t>) == 0,
                "the present bits follow the record");
  std::atomic<uint64_t>* words = Words();
  for (size_t w = 0; w < WordCount(size); ++w) {
    new (&words[w]) std::atomic<uint64_t>(0);
  }
  std::memcpy(const_cast<char*>(group_id().data()), id.data(), id.size());
}

GroupRecord::~GroupRecord() {
  delete complete_status_.load(std::memory_order_relaxed);
  // (std::atomic<uint64_t> is trivially destructible: the bits need no
  // destructor call.)
}

bool GroupRecord::CountPresent(uint32_t index) {
  // acq_rel: the put that counts last sees every earlier count, and with
  // it every earlier member's completed object.
  if (counted_.fetch_add(1, std::memory_order_acq_rel) + 1 == group_size_) {
    return true;  // the caller sets the bit with the group's completion
  }
  SetPresent(index);
  return false;
}

uint32_t GroupRecord::PresentCount() const {
  uint32_t present = 0;
  for (size_t w = 0; w < WordCount(group_size_); ++w) {
    present += static_cast<uint32_t>(
        std::popcount(Words()[w].load(std::memory_order_acquire)));
  }
  return present;
}

void GroupRecord::SetAllPresent() {
  for (size_t w = 0; w < WordCount(group_size_); ++w) {
    const uint32_t bits = std::min<uint32_t>(64, group_size_ - 64 * w);
    const uint64_t all = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    Words()[w].fetch_or(all, std::memory_order_acq_rel);
  }
}

GroupRef GroupRecord::Make(std::string_view id, uint32_t size) {
  return Make(HashedKey(id), size);
}

GroupRef GroupRecord::Make(const HashedKey& id, uint32_t size,
                           size_t extra_bytes) {
  // One allocation: the record, its present bits, the id's bytes, then the
  // extra space from the next multiple of 8.
  const size_t id_bytes =
      extra_bytes == 0 ? id.key.size() : RoundUp8(id.key.size());
  void* memory =
      ::operator new(sizeof(GroupRecord) + WordCount(size) * sizeof(uint64_t) +
                     id_bytes + extra_bytes);
  GroupRecord* record = new (memory) GroupRecord(id.key, size, id.hash);
  if (extra_bytes != 0) std::memset(record->extra(), 0, extra_bytes);
  return GroupRef(record);
}

SharedGroupStatus GroupRecord::CompleteStatus() const {
  const GroupStatus* status = complete_status_.load(std::memory_order_acquire);
  if (status == nullptr) {
    // Made on first use: a group no one probes never pays for it. Racing
    // first callers each make one; the first to install it wins.
    const GroupStatus* made =
        new GroupStatus{std::string(group_id()), GroupState::kComplete,
                        group_size_, group_size_};
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
