#include "base/byte_units.h"

#include <cstddef>
#include <cstdio>
#include <iterator>

namespace mooncake_tier {

std::string HumanBytes(uint64_t bytes, ByteUnit largest) {
  // Indexed by the power of 1024, as ByteUnit's values are.
  static constexpr const char* kUnits[] = {"B",   "KiB", "MiB",
                                           "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  size_t last = static_cast<size_t>(largest);
  if (last < 1 || last >= std::size(kUnits)) last = std::size(kUnits) - 1;
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit < last) {
    value /= 1024;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f %s", value, kUnits[unit]);
  return buffer;
}

}  // namespace mooncake_tier
