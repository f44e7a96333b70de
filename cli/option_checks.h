#pragma once

// Checks of numeric flags whose failures read as sentences ("--group-size:
// must be a whole number of at least 1, not '0'") rather than CLI11's own
// "Value 0 not in range 0.000000 to 1.79e308".
//
// Thread safety: the validators are values; use them while building the
// command line, from one thread.

#include <cstdint>
#include <limits>
#include <string>

#include "CLI/CLI.hpp"

namespace mooncake_tier::cli {

// A whole decimal number from `lo` to `hi`. `unit`, if given, follows the
// bounds in the message ("at least 1 ms"); put it after any transform that
// turns "2s" into milliseconds.
CLI::Validator WholeNumber(uint64_t lo,
                           uint64_t hi = std::numeric_limits<uint64_t>::max(),
                           std::string unit = "");

}  // namespace mooncake_tier::cli
