#pragma once

// Byte counts for people, in binary units: "512 B", "4.0 KiB", "1.5 GiB".
// The one formatter behind the CLI's tables (cli/format.h HumanBytes) and
// the daemon's start-up lines (daemon/option_units.h FormatSizeHuman).
//
// Thread safety: a pure function.

#include <cstdint>
#include <string>

namespace mooncake_tier {

// Binary byte units, for sizes written in code.
inline constexpr uint64_t kKiB = uint64_t{1} << 10;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// The largest unit a formatted count may use; its value is the power of
// 1024 it stands for. Counts beyond it stay in it ("2048.0 TiB").
enum class ByteUnit : uint8_t {
  kKiB = 1,
  kMiB = 2,
  kGiB = 3,
  kTiB = 4,
  kPiB = 5,
};

// `bytes` below 1024 as the whole number and " B" ("0 B", "1023 B");
// otherwise divided by 1024 until it is below 1024 or the unit is
// `largest`, printed with one decimal (rounded) and the unit: "1.0 KiB",
// "1.5 GiB", "1024.0 TiB" (1 PiB with `largest` = kTiB). The unit is chosen
// before rounding, so a count just under a unit prints as "1024.0" of the
// unit below it (1048535 bytes: "1024.0 KiB").
//
// The callers keep their own `largest`: the CLI formats up to PiB, the
// daemon up to TiB. A value outside ByteUnit acts as kPiB.
std::string HumanBytes(uint64_t bytes, ByteUnit largest);

}  // namespace mooncake_tier
