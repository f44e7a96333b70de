#pragma once

// Rounding to a multiple: record and block layout on SSD, staging buffers.
//
// Thread safety: pure functions.

#include <cstdint>

namespace mooncake_tier {

// `n` rounded up to a multiple of `a` (a > 0); `n` itself when it is one.
constexpr uint64_t AlignUp(uint64_t n, uint64_t a) {
  return (n + a - 1) / a * a;
}

// `n` rounded down to a multiple of `a` (a > 0).
constexpr uint64_t AlignDown(uint64_t n, uint64_t a) { return n / a * a; }

}  // namespace mooncake_tier
