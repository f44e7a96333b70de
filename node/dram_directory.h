#pragma once

// A storage node's DRAM directory: which committed object lies where in its
// segment (key, offset, size, group), as the master tells it
// (MasterLink::SyncDirectory). The node reports it when it registers, so a
// restarted master, or a new leader, rebuilds the DRAM tier from the nodes
// (docs/design/ha.md). It lives in the node's memory: it dies with the
// segment it describes, which is the DRAM tier's contract.
//
// Entries never overlap: an add over a range still listed replaces what it
// overlaps (the master frees a range only after the node dropped its entry,
// so this happens only when a drop was lost, and the newer entry is the
// truth).
//
// Thread safety: not thread-safe; StorageNode serialises calls.

#include <cstdint>
#include <map>
#include <vector>

#include "protocol/messages.h"

namespace mooncake_tier {

class DramDirectory {
 public:
  // Entries must lie within [0, segment_size).
  explicit DramDirectory(uint64_t segment_size) : segment_size_(segment_size) {}

  // Applies one change. Returns false, changing nothing, for one that does
  // not fit the segment, or a drop naming another key than the entry at
  // its offset. Applying a change twice changes nothing the second time.
  bool Apply(const DirectoryOp& op);

  // Every entry, by offset.
  std::vector<DramEntry> Entries() const;
  size_t size() const { return entries_.size(); }
  uint64_t bytes() const { return bytes_; }

 private:
  const uint64_t segment_size_;
  std::map<uint64_t, DramEntry> entries_;  // by offset
  uint64_t bytes_ = 0;
};

}  // namespace mooncake_tier
