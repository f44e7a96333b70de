#include "node/dram_directory.h"

#include <iterator>

namespace mooncake_tier {

bool DramDirectory::Apply(const DirectoryOp& op) {
  const DramEntry& e = op.entry;
  if (op.kind == DirectoryOp::Kind::kDrop) {
    auto it = entries_.find(e.offset);
    if (it == entries_.end()) return true;  // already dropped
    if (!e.key.empty() && it->second.key != e.key) return false;
    bytes_ -= it->second.size;
    entries_.erase(it);
    return true;
  }
  if (e.size == 0 || e.offset >= segment_size_ ||
      e.size > segment_size_ - e.offset) {
    return false;
  }
  const uint64_t end = e.offset + e.size;
  // Entries overlapping [offset, end): the one starting before it that
  // reaches into it, and every one starting inside it.
  auto it = entries_.lower_bound(e.offset);
  if (it != entries_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second.size > e.offset) it = prev;
  }
  while (it != entries_.end() && it->first < end) {
    bytes_ -= it->second.size;
    it = entries_.erase(it);
  }
  bytes_ += e.size;
  entries_.emplace(e.offset, e);
  return true;
}

std::vector<DramEntry> DramDirectory::Entries() const {
  std::vector<DramEntry> out;
  out.reserve(entries_.size());
  for (const auto& [offset, entry] : entries_) out.push_back(entry);
  return out;
}

}  // namespace mooncake_tier
