#pragma once

// Walks the records of one SSD store data file from its start, reading in
// large aligned windows. The recovery scan at SsdStore::Open and compaction
// both use it. What it reports for each stretch of the file:
//
//   kRecord        a record whose header and record checksums hold.
//   kDamagedRecord a valid header (so key, lengths and sequence are known)
//                  whose record checksum fails; skipped by its length.
//   kDamagedRegion bytes that hold no valid header, up to the next
//                  512-aligned offset that does (resync). `zeros` tells a
//                  never-written hole from garbage.
//
// Zeros from the end of a record to the next 4096-byte boundary are the
// padding that ends a batch of writes: skipped, not reported.
//   kTornTail      from here to the end of the file nothing is usable: a
//                  record that runs past the end, or no valid header
//                  follows. Always the last entry; the file's good data ends
//                  at its offset.
//
// Thread safety: not thread-safe; one scanner per thread. The file must not
// be written in the scanned range while the scan runs.

#include <cstdint>
#include <optional>
#include <span>

#include "mooncake_tier/status.h"
#include "node/aligned_buffer.h"
#include "node/ssd_device.h"
#include "node/ssd_record.h"

namespace mooncake_tier {

class SsdFileScanner {
 public:
  enum class Kind { kRecord, kDamagedRecord, kDamagedRegion, kTornTail };

  struct Entry {
    Kind kind = Kind::kRecord;
    uint64_t offset = 0;
    uint64_t bytes = 0;  // record size, or length of the skipped stretch
    bool zeros = false;  // kDamagedRegion: its first block is all zero
    // kRecord and kDamagedRecord.
    std::optional<SsdRecord> record;
    // kRecord: the record's bytes as stored; valid until the next Next().
    std::span<const std::byte> data;
  };

  // Scans [0, file_size) of `file`, which outlives the scanner.
  SsdFileScanner(SsdFile& file, uint64_t file_size);

  // Fills `entry` with the next stretch of the file; false at the end.
  // IO_ERROR when the file cannot be read.
  Result<bool> Next(Entry* entry);

 private:
  // Makes [offset, offset + len) (clipped to the file) readable from the
  // window; returns a view of it.
  Result<std::span<const std::byte>> Load(uint64_t offset, uint64_t len);
  // First 512-aligned offset after `offset` holding a valid header, or the
  // file size when there is none.
  Result<uint64_t> Resync(uint64_t offset);

  SsdFile& file_;
  const uint64_t file_size_;
  uint64_t offset_ = 0;
  bool done_ = false;
  AlignedBuffer window_;
  uint64_t window_offset_ = 0;
  uint64_t window_len_ = 0;
};

}  // namespace mooncake_tier
