#include "node/ssd_record.h"

#include <gtest/gtest.h>

#include <vector>

#include "node/aligned_buffer.h"

namespace mooncake_tier {
namespace ssd_record_test {
namespace {

std::vector<std::byte> Bytes(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = std::byte(static_cast<uint8_t>(seed + i * 7));
  return v;
}

struct Encoded {
  SsdRecord record;
  AlignedBuffer bytes;
};

Encoded EncodeValue(std::string_view key, std::optional<GroupSpec> group,
                    const std::vector<std::byte>& value, uint64_t sequence) {
  SsdRecord record = SsdRecord::Value(key, group, value.size(), sequence);
  AlignedBuffer bytes(record.size());
  record.Encode(value, bytes.span());
  return {std::move(record), std::move(bytes)};
}

bool Verifies(const SsdRecord& decoded, const AlignedBuffer& bytes) {
  return decoded.VerifyChecksum(
      bytes.span().first(decoded.meta_bytes()),
      bytes.span().subspan(decoded.value_offset(), decoded.value_len()));
}

TEST(SsdRecordTest, RoundTripsValueWithGroup) {
  const GroupSpec group{"block-7", 4, 2};
  const std::vector<std::byte> value = Bytes(1000, 3);
  Encoded e = EncodeValue("layer0/k", group, value, 42);
  Result<SsdRecord> decoded = SsdRecord::Decode(e.bytes.span());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_FALSE(decoded->tombstone());
  EXPECT_EQ(decoded->key(), "layer0/k");
  EXPECT_EQ(decoded->group(), group);
  EXPECT_EQ(decoded->value_len(), 1000u);
  EXPECT_EQ(decoded->sequence(), 42u);
  EXPECT_EQ(decoded->size(), e.record.size());
  EXPECT_TRUE(Verifies(*decoded, e.bytes));
  const auto stored = e.bytes.span().subspan(decoded->value_offset(), 1000);
  EXPECT_TRUE(std::equal(stored.begin(), stored.end(), value.begin()));
}

TEST(SsdRecordTest, RoundTripsEmptyValueAndTombstone) {
  Encoded empty = EncodeValue("k", std::nullopt, {}, 1);
  Result<SsdRecord> decoded = SsdRecord::Decode(empty.bytes.span());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->value_len(), 0u);
  EXPECT_FALSE(decoded->group().has_value());
  EXPECT_TRUE(Verifies(*decoded, empty.bytes));

  SsdRecord tombstone = SsdRecord::Tombstone("gone", 9);
  AlignedBuffer bytes(tombstone.size());
  tombstone.Encode({}, bytes.span());
  decoded = SsdRecord::Decode(bytes.span());
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->tombstone());
  EXPECT_EQ(decoded->key(), "gone");
  EXPECT_EQ(decoded->sequence(), 9u);
  // A 64-byte header and a 4-byte key: two granules.
  EXPECT_EQ(decoded->size(), 2 * SsdRecord::kSmallAlignment);
}

TEST(SsdRecordTest, SmallRecordsAreSectorsAndLargeValuesStartOnABlock) {
  for (uint64_t len : {0ull, 1ull, 4000ull, 4096ull, 16384ull, 65535ull,
                       65536ull, 100000ull, 1ull << 20}) {
    SsdRecord r = SsdRecord::Value("key", std::nullopt, len, 1);
    EXPECT_GE(r.size(), r.value_offset() + len) << len;
    if (len >= SsdRecord::kAlignedValueMinBytes) {
      EXPECT_TRUE(r.block_aligned()) << len;
      EXPECT_EQ(r.size() % SsdRecord::kAlignment, 0u) << len;
      EXPECT_EQ(r.value_offset(), SsdRecord::kAlignment) << len;
    } else {
      EXPECT_FALSE(r.block_aligned()) << len;
      EXPECT_EQ(r.size() % SsdRecord::kSmallAlignment, 0u) << len;
      EXPECT_LT(r.size() - r.value_offset() - len, SsdRecord::kSmallAlignment)
          << len;
      EXPECT_EQ(r.value_offset(), r.meta_bytes()) << len;
    }
  }
  // A 16 KiB value (a KV block's piece) takes its header, key and one
  // granule's padding at most: under 1 % more, where format 2 took 3 %
  // (16.5 KiB) and format 1 25 % (20 KiB).
  EXPECT_EQ(SsdRecord::Value("key", std::nullopt, 16384, 1).size(),
            16384u + 128u);
  EXPECT_EQ(SsdRecord::Value("key", std::nullopt, 100, 1).size(), 192u);
  const SsdRecord engine_piece = SsdRecord::Value(
      "trace-1234-0123456789abcdef/b123456/3",
      GroupSpec{"trace-1234-0123456789abcdef/b123456", 4, 3}, 16384, 1);
  EXPECT_LT(static_cast<double>(engine_piece.size()) / 16384, 1.02);
}

TEST(SsdRecordTest, FormatTwoRecordsAreStillReadOnSectors) {
  const SsdRecord old =
      SsdRecord::Value("key", std::nullopt, 100, 7).AtFormatVersion(2);
  EXPECT_FALSE(old.block_aligned());
  EXPECT_EQ(old.granule(), SsdRecord::kFormat2Alignment);
  EXPECT_EQ(old.size(), 512u);
  AlignedBuffer bytes(old.size());
  const std::vector<std::byte> value(100, std::byte{7});
  old.Encode(value, bytes.span());
  Result<SsdRecord> decoded = SsdRecord::Decode(bytes.span());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->format_version(), 2);
  EXPECT_EQ(decoded->size(), 512u);
}

TEST(SsdRecordTest, FormatOneRecordsAreStillReadAsWholeBlocks) {
  const SsdRecord old =
      SsdRecord::Value("key", std::nullopt, 100, 7).AtFormatVersion(1);
  EXPECT_EQ(old.size(), SsdRecord::kAlignment);
  EXPECT_TRUE(old.block_aligned());
  const std::vector<std::byte> value = Bytes(100, 3);
  AlignedBuffer bytes(old.size());
  old.Encode(value, bytes.span());
  Result<SsdRecord> decoded = SsdRecord::Decode(bytes.span());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->format_version(), 1);
  EXPECT_EQ(decoded->size(), SsdRecord::kAlignment);
  EXPECT_TRUE(Verifies(*decoded, bytes));
  // A version this build does not know is a damaged header.
  for (uint16_t version :
       {uint16_t{0}, static_cast<uint16_t>(SsdRecord::kFormatVersion + 1)}) {
    const SsdRecord other =
        SsdRecord::Value("key", std::nullopt, 100, 7).AtFormatVersion(version);
    AlignedBuffer b(SsdRecord::kAlignment);
    other.Encode(value, b.span());
    EXPECT_EQ(SsdRecord::Decode(b.span()).status().reason(),
              ErrorReason::kChecksumMismatch)
        << version;
  }
}

TEST(SsdRecordTest, FlippedValueByteFailsTheRecordChecksumOnly) {
  Encoded e = EncodeValue("k", std::nullopt, Bytes(70000, 1), 5);
  e.bytes.data()[e.record.value_offset() + 12345] ^= std::byte{0x01};
  Result<SsdRecord> decoded = SsdRecord::Decode(e.bytes.span());
  ASSERT_TRUE(decoded.ok());  // the header is intact: the key is known
  EXPECT_EQ(decoded->key(), "k");
  EXPECT_FALSE(Verifies(*decoded, e.bytes));
}

TEST(SsdRecordTest, FlippedHeaderOrKeyByteFailsDecode) {
  for (size_t at : {0u, 8u, 24u, 33u, 50u, 60u, 64u, 66u}) {
    Encoded e = EncodeValue("key", GroupSpec{"g", 2, 1}, Bytes(10, 1), 5);
    e.bytes.data()[at] ^= std::byte{0x10};
    Result<SsdRecord> decoded = SsdRecord::Decode(e.bytes.span());
    EXPECT_FALSE(decoded.ok()) << "byte " << at;
    EXPECT_EQ(decoded.status().reason(), ErrorReason::kChecksumMismatch) << at;
  }
}

TEST(SsdRecordTest, GarbageAndShortInputAreRejected) {
  AlignedBuffer zeros(4096);
  std::fill(zeros.data(), zeros.data() + zeros.size(), std::byte{0});
  EXPECT_EQ(SsdRecord::Decode(zeros.span()).status().reason(),
            ErrorReason::kChecksumMismatch);
  Encoded e = EncodeValue("a-longer-key", std::nullopt, Bytes(10, 1), 5);
  EXPECT_EQ(SsdRecord::Decode(e.bytes.span().first(40)).status().reason(),
            ErrorReason::kTornRecord);
  EXPECT_EQ(SsdRecord::Decode(e.bytes.span().first(70)).status().reason(),
            ErrorReason::kTornRecord);
}

TEST(SsdRecordTest, ChecksumCoversSequenceAndKey) {
  const std::vector<std::byte> value = Bytes(100, 9);
  Encoded a = EncodeValue("k", std::nullopt, value, 1);
  Encoded b = EncodeValue("k", std::nullopt, value, 2);
  Result<SsdRecord> da = SsdRecord::Decode(a.bytes.span());
  ASSERT_TRUE(da.ok());
  // A's checksum does not match B's bytes (same value, other sequence).
  EXPECT_FALSE(
      da->VerifyChecksum(b.bytes.span().first(da->meta_bytes()),
                         b.bytes.span().subspan(da->value_offset(), 100)));
  EXPECT_NE(SsdRecord::KeyHash("a"), SsdRecord::KeyHash("b"));
}

}  // namespace
}  // namespace ssd_record_test
}  // namespace mooncake_tier
