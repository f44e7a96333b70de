#include "node/ssd_record.h"

#include <cstring>

#include "base/align.h"
#include "base/coding.h"
#include "core/validation.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

namespace mooncake_tier {
namespace {

// Header layout (offsets in bytes).
constexpr size_t kMagicOffset = 0;        // u32
constexpr size_t kVersionOffset = 4;      // u16
constexpr size_t kFlagsOffset = 6;        // u16
constexpr size_t kKeyLenOffset = 8;       // u32
constexpr size_t kGroupIdLenOffset = 12;  // u32
constexpr size_t kGroupSizeOffset = 16;   // u32
constexpr size_t kGroupIndexOffset = 20;  // u32
constexpr size_t kValueLenOffset = 24;    // u64
constexpr size_t kSequenceOffset = 32;    // u64
// 40..48 reserved, zero.
constexpr size_t kRecordChecksumOffset = 48;  // u64
constexpr size_t kHeaderChecksumOffset = 56;  // u64

// The record checksum covers the header up to itself; the header checksum
// covers the header up to itself (record checksum included).
constexpr size_t kRecordChecksumCovers = kRecordChecksumOffset;
constexpr size_t kHeaderChecksumCovers = kHeaderChecksumOffset;

constexpr uint16_t kFlagTombstone = 1u << 0;
constexpr uint16_t kFlagGroup = 1u << 1;
// A tombstone whose value lists more removed keys (TombstoneList).
constexpr uint16_t kFlagRemovalList = 1u << 2;
constexpr uint16_t kKnownFlags = kFlagTombstone | kFlagGroup | kFlagRemovalList;
// One listed removal: [u64 sequence][u16 key length][key].
constexpr size_t kRemovalHeaderBytes = 10;

Status BadHeader(std::string_view why) {
  return Status(ErrorReason::kChecksumMismatch,
                "invalid record header: " + std::string(why));
}

}  // namespace

SsdRecord SsdRecord::Value(std::string_view key,
                           const std::optional<GroupSpec>& group,
                           uint64_t value_len, uint64_t sequence) {
  SsdRecord r;
  r.key_ = std::string(key);
  r.group_ = group;
  r.value_len_ = value_len;
  r.sequence_ = sequence;
  return r;
}

SsdRecord SsdRecord::Tombstone(std::string_view key, uint64_t sequence) {
  SsdRecord r;
  r.tombstone_ = true;
  r.key_ = std::string(key);
  r.sequence_ = sequence;
  return r;
}

SsdRecord SsdRecord::TombstoneList(std::span<const Removal> removed) {
  SsdRecord r = Tombstone(removed.front().key, removed.front().sequence);
  for (const Removal& more : removed.subspan(1)) {
    r.value_len_ += kRemovalHeaderBytes + more.key.size();
  }
  return r;
}

std::vector<std::byte> SsdRecord::EncodeRemovals(
    std::span<const Removal> removed) {
  std::vector<std::byte> out;
  for (const Removal& more : removed.subspan(1)) {
    const size_t at = out.size();
    out.resize(at + kRemovalHeaderBytes + more.key.size());
    EncodeFixed<uint64_t>(out.data() + at, more.sequence);
    EncodeFixed<uint16_t>(out.data() + at + 8,
                          static_cast<uint16_t>(more.key.size()));
    std::memcpy(out.data() + at + kRemovalHeaderBytes, more.key.data(),
                more.key.size());
  }
  return out;
}

uint64_t SsdRecord::TombstoneListBytes(std::span<const Removal> removed) {
  return TombstoneList(removed).size();
}

Result<std::vector<SsdRecord::Removal>> SsdRecord::Removals(
    std::span<const std::byte> value) const {
  std::vector<Removal> out;
  out.push_back({key_, sequence_});
  if (!tombstone_list()) return out;
  if (value.size() != value_len_) return BadHeader("removal list length");
  for (size_t at = 0; at < value.size();) {
    if (value.size() - at < kRemovalHeaderBytes) {
      return BadHeader("removal list entry");
    }
    const uint64_t sequence = DecodeFixed<uint64_t>(value.data() + at);
    const uint16_t len = DecodeFixed<uint16_t>(value.data() + at + 8);
    at += kRemovalHeaderBytes;
    if (len == 0 || len > kMaxKeyBytes || value.size() - at < len) {
      return BadHeader("removal list key");
    }
    out.push_back({std::string_view(
                       reinterpret_cast<const char*>(value.data() + at), len),
                   sequence});
    at += len;
  }
  return out;
}

uint64_t SsdRecord::meta_bytes() const {
  return kHeaderBytes + key_.size() + (group_ ? group_->group_id.size() : 0);
}

uint64_t SsdRecord::value_offset() const {
  return value_len_ >= kAlignedValueMinBytes ? AlignUp(meta_bytes(), kAlignment)
                                             : meta_bytes();
}

bool SsdRecord::block_aligned() const {
  return version_ < 2 || value_len_ >= kAlignedValueMinBytes;
}

uint64_t SsdRecord::granule() const {
  return version_ >= 3 ? kSmallAlignment : kFormat2Alignment;
}

uint64_t SsdRecord::size() const {
  return AlignUp(value_offset() + value_len_,
                 block_aligned() ? kAlignment : granule());
}

SsdRecord SsdRecord::AtFormatVersion(uint16_t version) const {
  SsdRecord r = *this;
  r.version_ = version;
  return r;
}

uint64_t SsdRecord::KeyHash(std::string_view key) {
  return XXH3_64bits(key.data(), key.size());
}

uint64_t SsdRecord::RecordChecksum(std::span<const std::byte> meta,
                                   std::span<const std::byte> value) const {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, meta.data(), kRecordChecksumCovers);
  XXH3_64bits_update(&state, meta.data() + kHeaderBytes,
                     meta.size() - kHeaderBytes);
  XXH3_64bits_update(&state, value.data(), value.size());
  return XXH3_64bits_digest(&state);
}

void SsdRecord::Encode(std::span<const std::byte> value,
                       std::span<std::byte> out) const {
  EncodeMeta(value, out);
  std::byte* p = out.data();
  const uint64_t value_at = value_offset();
  if (value_len_ > 0) std::memcpy(p + value_at, value.data(), value_len_);
  std::memset(p + value_at + value_len_, 0, size() - value_at - value_len_);
}

void SsdRecord::EncodeMeta(std::span<const std::byte> value,
                           std::span<std::byte> out) const {
  std::byte* p = out.data();
  const uint64_t meta = meta_bytes();
  std::memset(p, 0, kHeaderBytes);
  EncodeFixed<uint32_t>(p + kMagicOffset, kMagic);
  EncodeFixed<uint16_t>(p + kVersionOffset, version_);
  EncodeFixed<uint16_t>(
      p + kFlagsOffset,
      static_cast<uint16_t>((tombstone_ ? kFlagTombstone : 0) |
                            (group_ ? kFlagGroup : 0) |
                            (tombstone_list() ? kFlagRemovalList : 0)));
  EncodeFixed<uint32_t>(p + kKeyLenOffset, static_cast<uint32_t>(key_.size()));
  if (group_) {
    EncodeFixed<uint32_t>(p + kGroupIdLenOffset,
                          static_cast<uint32_t>(group_->group_id.size()));
    EncodeFixed<uint32_t>(p + kGroupSizeOffset, group_->group_size);
    EncodeFixed<uint32_t>(p + kGroupIndexOffset, group_->group_index);
  }
  EncodeFixed<uint64_t>(p + kValueLenOffset, value_len_);
  EncodeFixed<uint64_t>(p + kSequenceOffset, sequence_);
  std::memcpy(p + kHeaderBytes, key_.data(), key_.size());
  if (group_) {
    std::memcpy(p + kHeaderBytes + key_.size(), group_->group_id.data(),
                group_->group_id.size());
  }
  std::memset(p + meta, 0, value_offset() - meta);

  EncodeFixed<uint64_t>(p + kRecordChecksumOffset,
                        RecordChecksum({p, meta}, value.first(value_len_)));
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, p, kHeaderChecksumCovers);
  XXH3_64bits_update(&state, p + kHeaderBytes, meta - kHeaderBytes);
  EncodeFixed<uint64_t>(p + kHeaderChecksumOffset, XXH3_64bits_digest(&state));
}

Result<SsdRecord> SsdRecord::Decode(std::span<const std::byte> bytes) {
  if (bytes.size() < kHeaderBytes) {
    return Status(ErrorReason::kTornRecord, "record header cut short");
  }
  const std::byte* p = bytes.data();
  if (DecodeFixed<uint32_t>(p + kMagicOffset) != kMagic)
    return BadHeader("magic");
  const uint16_t version = DecodeFixed<uint16_t>(p + kVersionOffset);
  if (version < kOldestFormatVersion || version > kFormatVersion) {
    return BadHeader("format version");
  }
  const uint16_t flags = DecodeFixed<uint16_t>(p + kFlagsOffset);
  const uint32_t key_len = DecodeFixed<uint32_t>(p + kKeyLenOffset);
  const uint32_t group_id_len = DecodeFixed<uint32_t>(p + kGroupIdLenOffset);
  const uint32_t group_size = DecodeFixed<uint32_t>(p + kGroupSizeOffset);
  const uint32_t group_index = DecodeFixed<uint32_t>(p + kGroupIndexOffset);
  const uint64_t value_len = DecodeFixed<uint64_t>(p + kValueLenOffset);
  const bool has_group = (flags & kFlagGroup) != 0;
  const bool tombstone = (flags & kFlagTombstone) != 0;
  const bool removal_list = (flags & kFlagRemovalList) != 0;
  if ((flags & ~kKnownFlags) != 0) return BadHeader("flags");
  // A removal list is a tombstone with a value, and only that.
  if (removal_list != (tombstone && value_len > 0)) {
    return BadHeader("removal list flag");
  }
  if (key_len == 0 || key_len > kMaxKeyBytes) return BadHeader("key length");
  if (has_group ? (group_id_len == 0 || group_id_len > kMaxGroupIdBytes ||
                   group_size == 0 || group_index >= group_size)
                : (group_id_len != 0 || group_size != 0 || group_index != 0)) {
    return BadHeader("group");
  }
  if (value_len > kMaxValueBytes ||
      (tombstone && ((value_len && !removal_list) || has_group))) {
    return BadHeader("value length");
  }
  const uint64_t meta = kHeaderBytes + key_len + group_id_len;
  if (bytes.size() < meta) {
    return Status(ErrorReason::kTornRecord, "record key cut short");
  }
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, p, kHeaderChecksumCovers);
  XXH3_64bits_update(&state, p + kHeaderBytes, meta - kHeaderBytes);
  if (XXH3_64bits_digest(&state) !=
      DecodeFixed<uint64_t>(p + kHeaderChecksumOffset)) {
    return BadHeader("header checksum");
  }

  SsdRecord r;
  r.version_ = version;
  r.tombstone_ = tombstone;
  r.key_.assign(reinterpret_cast<const char*>(p + kHeaderBytes), key_len);
  if (has_group) {
    r.group_ = GroupSpec{
        std::string(reinterpret_cast<const char*>(p + kHeaderBytes + key_len),
                    group_id_len),
        group_size, group_index};
  }
  r.value_len_ = value_len;
  r.sequence_ = DecodeFixed<uint64_t>(p + kSequenceOffset);
  r.record_checksum_ = DecodeFixed<uint64_t>(p + kRecordChecksumOffset);
  if (!ValidateKey(r.key_).ok() ||
      (r.group_ && !ValidateGroupSpec(*r.group_).ok())) {
    return BadHeader("key or group id");
  }
  return r;
}

bool SsdRecord::VerifyChecksum(std::span<const std::byte> meta,
                               std::span<const std::byte> value) const {
  if (meta.size() != meta_bytes() || value.size() != value_len_) return false;
  return RecordChecksum(meta, value) == record_checksum_;
}

}  // namespace mooncake_tier
