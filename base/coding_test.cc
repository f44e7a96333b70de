#include "base/coding.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <limits>

namespace mooncake_tier {
namespace coding_test {
namespace {

TEST(CodingTest, FixedWidthIsLittleEndianWhateverTheByteType) {
  std::array<char, 4> chars{};
  EncodeFixed<uint32_t>(chars.data(), 0x04030201u);
  EXPECT_EQ(chars, (std::array<char, 4>{1, 2, 3, 4}));
  std::array<std::byte, 2> bytes{};
  EncodeFixed<uint16_t>(bytes.data(), 0xbeefu);
  EXPECT_EQ(bytes[0], std::byte{0xef});
  EXPECT_EQ(bytes[1], std::byte{0xbe});
  EXPECT_EQ(DecodeFixed<uint16_t>(bytes.data()), 0xbeefu);
  EXPECT_EQ(DecodeFixed<uint32_t>(chars.data()), 0x04030201u);
}

TEST(CodingTest, EveryWidthRoundTripsItsExtremes) {
  std::string out;
  PutFixed<uint8_t>(out, std::numeric_limits<uint8_t>::max());
  PutFixed<uint16_t>(out, std::numeric_limits<uint16_t>::max());
  PutFixed<uint32_t>(out, 0);
  PutFixed<uint64_t>(out, std::numeric_limits<uint64_t>::max());
  PutFixed<uint64_t>(out, 0x8000000000000001ull);
  ASSERT_EQ(out.size(), 1u + 2 + 4 + 8 + 8);
  ByteReader r(out);
  uint8_t a = 0;
  uint16_t b = 0;
  uint32_t c = 1;
  uint64_t d = 0;
  uint64_t e = 0;
  ASSERT_TRUE(r.GetFixed(&a) && r.GetFixed(&b) && r.GetFixed(&c) &&
              r.GetFixed(&d) && r.GetFixed(&e));
  EXPECT_EQ(a, 0xffu);
  EXPECT_EQ(b, 0xffffu);
  EXPECT_EQ(c, 0u);
  EXPECT_EQ(d, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(e, 0x8000000000000001ull);
  EXPECT_TRUE(r.empty());
}

TEST(CodingTest, TheReaderNeverReadsPastTheEndAndConsumesNothingWhenShort) {
  std::string out;
  PutFixed<uint16_t>(out, 7);
  ByteReader r(std::string_view(out).substr(0, 1));
  uint16_t v = 0;
  EXPECT_FALSE(r.GetFixed(&v));
  EXPECT_EQ(r.remaining(), 1u);
  std::string_view bytes;
  EXPECT_FALSE(r.GetBytes(2, &bytes));
  EXPECT_TRUE(r.GetBytes(1, &bytes));
  EXPECT_EQ(bytes.size(), 1u);
  EXPECT_TRUE(r.empty());
}

TEST(CodingTest, LengthPrefixedStringsAreBoundedByTheCallerAndTheMessage) {
  std::string out;
  PutLengthPrefixed<uint16_t>(out, "hello");
  PutLengthPrefixed<uint32_t>(out, "");
  ByteReader ok(out);
  std::string_view s;
  ASSERT_TRUE(ok.GetLengthPrefixed<uint16_t>(5, &s));
  EXPECT_EQ(s, "hello");
  ASSERT_TRUE(ok.GetLengthPrefixed<uint32_t>(0, &s));
  EXPECT_EQ(s, "");
  EXPECT_TRUE(ok.empty());
  // Longer than the caller allows.
  ByteReader too_long(out);
  EXPECT_FALSE(too_long.GetLengthPrefixed<uint16_t>(4, &s));
  // A length that runs past the message.
  std::string cut;
  PutFixed<uint32_t>(cut, 1000);
  cut += "abc";
  ByteReader past(cut);
  EXPECT_FALSE(past.GetLengthPrefixed<uint32_t>(1 << 20, &s));
}

}  // namespace
}  // namespace coding_test
}  // namespace mooncake_tier
