#pragma once

// One record of an SSD store data file: its on-disk format, encoding and
// verification. The format is described in docs/design/ssd-store.md:
//
//   [64-byte header][key][group id][zeros to value_offset()][value][zeros]
//
// A record of format 2 or 3 holding a value of at least
// kAlignedValueMinBytes is a whole number of 4096-byte blocks, starts on a
// block boundary of its file and has its value start on one (so that an
// O_DIRECT read can land it straight in a caller's aligned buffer); any
// other record is a whole number of granules and starts on one, so that
// small values share blocks: kSmallAlignment (64) bytes in format 3,
// kFormat2Alignment (512) bytes in format 2. Format 1 records are whole
// blocks, always.
// Two XXH3-64 checksums protect it: the header checksum covers the header
// fields, key and group id (so lengths and the key can be trusted before the
// value is read); the record checksum covers header fields, key, group id and
// value. Integers are little-endian.
//
// Thread safety: a value; const methods may run concurrently.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"

namespace mooncake_tier {

class SsdRecord {
 public:
  static constexpr uint64_t kAlignment = 4096;
  // Granule of records that are not whole blocks, in the format this build
  // writes (3): small enough that a 16 KiB value's record wastes under
  // 1 % of its bytes on padding.
  static constexpr uint64_t kSmallAlignment = 64;
  // The same granule in format 2 (512-byte sectors), still read.
  static constexpr uint64_t kFormat2Alignment = 512;
  static constexpr size_t kHeaderBytes = 64;
  static constexpr uint32_t kMagic = 0x5253544du;  // "MTSR"
  // Written by this build; Decode also reads kOldestFormatVersion onwards.
  static constexpr uint16_t kFormatVersion = 3;
  static constexpr uint16_t kOldestFormatVersion = 1;
  static constexpr uint64_t kAlignedValueMinBytes = 64 << 10;
  // Bound on a value's length, so that sizes never overflow.
  static constexpr uint64_t kMaxValueBytes = uint64_t{1} << 40;

  // A record holding a value of `value_len` bytes.
  static SsdRecord Value(std::string_view key,
                         const std::optional<GroupSpec>& group,
                         uint64_t value_len, uint64_t sequence);
  // A record saying `key` was removed at `sequence`.
  static SsdRecord Tombstone(std::string_view key, uint64_t sequence);
  // A record saying each of `removed` (key, sequence) was removed, with
  // the first in its header and the others in its value (EncodeRemovals):
  // one record for a batch of removals instead of a block each.
  // REQUIRES: removed is not empty.
  struct Removal {
    std::string_view key;
    uint64_t sequence = 0;
  };
  static SsdRecord TombstoneList(std::span<const Removal> removed);
  // The value of a TombstoneList record: removed[1..] as
  // [u64 sequence][u16 key length][key] each.
  static std::vector<std::byte> EncodeRemovals(
      std::span<const Removal> removed);
  // Every (key, sequence) a tombstone says was removed: its own, then those
  // of its value (`value`, of a list). CHECKSUM_MISMATCH for a list that
  // does not parse. The keys view the record and `value`.
  Result<std::vector<Removal>> Removals(std::span<const std::byte> value) const;
  // Bytes a TombstoneList of these removals takes in its file.
  static uint64_t TombstoneListBytes(std::span<const Removal> removed);

  // Parses and validates the header found at the start of `bytes`, which
  // holds the start of a record (one 4096-byte block always suffices).
  // Returns TORN_RECORD when `bytes` ends before the header, key and group id
  // do, CHECKSUM_MISMATCH when they are not a valid header (magic, version,
  // flags, lengths or header checksum).
  static Result<SsdRecord> Decode(std::span<const std::byte> bytes);

  // Writes the whole record, size() bytes: header, key, group id, value and
  // zero padding, with both checksums.
  // REQUIRES: out.size() >= size(), value.size() == value_len().
  void Encode(std::span<const std::byte> value, std::span<std::byte> out) const;

  // Writes only the first value_offset() bytes (header, key, group id, zero
  // gap), with checksums computed over `value`, so that the value can be
  // written from where it already is.
  // REQUIRES: out.size() >= value_offset(), value.size() == value_len().
  void EncodeMeta(std::span<const std::byte> value,
                  std::span<std::byte> out) const;

  // True when `meta` (the record's first meta_bytes() bytes as stored) and
  // `value` match the record checksum. Only meaningful on a decoded record.
  bool VerifyChecksum(std::span<const std::byte> meta,
                      std::span<const std::byte> value) const;

  // The same record in format `version` (kOldestFormatVersion up to
  // kFormatVersion): what an older build wrote, for tests that read it.
  SsdRecord AtFormatVersion(uint16_t version) const;

  // Hash under which the store remembers which files hold a key.
  static uint64_t KeyHash(std::string_view key);

  bool tombstone() const { return tombstone_; }
  // A tombstone listing more removals in its value.
  bool tombstone_list() const { return tombstone_ && value_len_ > 0; }
  const std::string& key() const { return key_; }
  const std::optional<GroupSpec>& group() const { return group_; }
  uint64_t value_len() const { return value_len_; }
  uint64_t sequence() const { return sequence_; }

  // Bytes of header, key and group id.
  uint64_t meta_bytes() const;
  // Offset of the value within the record.
  uint64_t value_offset() const;
  // Bytes the record takes in its file: a multiple of kAlignment when
  // block_aligned(), of granule() otherwise.
  uint64_t size() const;
  // The record must start on a kAlignment boundary of its file (its value
  // is aligned within it, or it is of format 1); otherwise on a granule()
  // boundary.
  bool block_aligned() const;
  // The unit a record that is not block_aligned() is rounded up to in its
  // format: kSmallAlignment, or kFormat2Alignment for format 2.
  uint64_t granule() const;
  uint16_t format_version() const { return version_; }

 private:
  SsdRecord() = default;
  uint64_t RecordChecksum(std::span<const std::byte> meta,
                          std::span<const std::byte> value) const;

  uint16_t version_ = kFormatVersion;
  bool tombstone_ = false;
  std::string key_;
  std::optional<GroupSpec> group_;
  uint64_t value_len_ = 0;
  uint64_t sequence_ = 0;
  uint64_t record_checksum_ = 0;  // as decoded; unused when encoding
};

}  // namespace mooncake_tier
