#include "base/byte_units.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace mooncake_tier {
namespace byte_units_test {
namespace {

constexpr uint64_t kTiB = kKiB * kKiB * kKiB * kKiB;
constexpr uint64_t kPiB = kTiB * kKiB;

TEST(ByteUnitsTest, CountsBelowAKibibyteAreWholeBytes) {
  for (ByteUnit largest : {ByteUnit::kKiB, ByteUnit::kTiB, ByteUnit::kPiB}) {
    EXPECT_EQ(HumanBytes(0, largest), "0 B");
    EXPECT_EQ(HumanBytes(1, largest), "1 B");
    EXPECT_EQ(HumanBytes(1023, largest), "1023 B");
  }
}

TEST(ByteUnitsTest, LargerCountsTakeOneDecimalOfTheirUnit) {
  EXPECT_EQ(HumanBytes(1024, ByteUnit::kPiB), "1.0 KiB");
  EXPECT_EQ(HumanBytes(1536, ByteUnit::kPiB), "1.5 KiB");
  EXPECT_EQ(HumanBytes(4096, ByteUnit::kPiB), "4.0 KiB");
  EXPECT_EQ(HumanBytes(512 * kKiB * kKiB, ByteUnit::kPiB), "512.0 MiB");
  EXPECT_EQ(HumanBytes(3ull << 29, ByteUnit::kPiB), "1.5 GiB");
  EXPECT_EQ(HumanBytes(1536ull << 20, ByteUnit::kTiB), "1.5 GiB");
  EXPECT_EQ(HumanBytes(2 * kTiB, ByteUnit::kTiB), "2.0 TiB");
  EXPECT_EQ(HumanBytes(kPiB, ByteUnit::kPiB), "1.0 PiB");
}

// The unit is chosen before rounding: just under 1 MiB stays in KiB.
TEST(ByteUnitsTest, RoundingNeverMovesToTheNextUnit) {
  EXPECT_EQ(HumanBytes(1048535, ByteUnit::kPiB), "1024.0 KiB");
  EXPECT_EQ(HumanBytes(kKiB * kKiB - 1, ByteUnit::kPiB), "1024.0 KiB");
  EXPECT_EQ(HumanBytes(kKiB * kKiB, ByteUnit::kPiB), "1.0 MiB");
}

// The CLI formats up to PiB, the daemon up to TiB: the same count differs
// only beyond the smaller limit.
TEST(ByteUnitsTest, TheLargestUnitCapsTheScale) {
  EXPECT_EQ(HumanBytes(kPiB, ByteUnit::kTiB), "1024.0 TiB");
  EXPECT_EQ(HumanBytes(kPiB, ByteUnit::kPiB), "1.0 PiB");
  EXPECT_EQ(HumanBytes(kTiB, ByteUnit::kTiB), HumanBytes(kTiB, ByteUnit::kPiB));
  EXPECT_EQ(HumanBytes(1ull << 30, ByteUnit::kKiB), "1048576.0 KiB");
  EXPECT_EQ(HumanBytes(2048, ByteUnit::kKiB), "2.0 KiB");
  const uint64_t most = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(HumanBytes(most, ByteUnit::kPiB), "16384.0 PiB");
  EXPECT_EQ(HumanBytes(most, ByteUnit::kTiB), "16777216.0 TiB");
}

TEST(ByteUnitsTest, AnUnknownLargestUnitActsAsPebibytes) {
  EXPECT_EQ(HumanBytes(kPiB, static_cast<ByteUnit>(0)), "1.0 PiB");
  EXPECT_EQ(HumanBytes(kPiB, static_cast<ByteUnit>(9)), "1.0 PiB");
}

}  // namespace
}  // namespace byte_units_test
}  // namespace mooncake_tier
