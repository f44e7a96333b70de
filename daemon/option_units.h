#pragma once

// Flags with units, as mooncake-tierd spells them.
//
// Sizes: a whole number of bytes with an optional binary unit, case
// insensitive: "1073741824", "512MiB", "4GiB", "64k" (k, m, g, t with or
// without "i"/"b" all mean powers of 1024).
// Durations: a whole number with a required unit: "250ms", "10s", "5m",
// "1h". Every duration flag must be positive.
//
// Thread safety: plain functions over values; the options they add are
// bound to caller-owned variables that CLI11 writes while parsing.

#include <cstdint>
#include <string>

#include "CLI/CLI.hpp"
#include "base/clock.h"

namespace mooncake_tier::daemon {

// A size flag bound to `*target`; its current value is shown as the
// default. Values below `min_bytes` are refused.
CLI::Option* AddSizeOption(CLI::App* app, const std::string& name,
                           uint64_t* target, const std::string& description,
                           uint64_t min_bytes = 0);

// A duration flag bound to `*target` (millisecond resolution); its current
// value is shown as the default.
CLI::Option* AddDurationOption(CLI::App* app, const std::string& name,
                               Duration* target,
                               const std::string& description);
// The same for a milliseconds field.
CLI::Option* AddDurationOption(CLI::App* app, const std::string& name,
                               std::chrono::milliseconds* target,
                               const std::string& description);

// What SIZE and DURATION mean, for the help text.
extern const char* const kUnitsHelp;

// A size as a flag takes it, exact: "1GiB", "1536MiB", "1000".
std::string FormatSizeFlag(uint64_t bytes);
// A size for people: "1.0 GiB", "512.0 MiB", "100 B", up to TiB
// (base/byte_units.h).
std::string FormatSizeHuman(uint64_t bytes);
// A duration as a flag takes it, exact: "10s", "100ms", "2m".
std::string FormatDurationFlag(Duration duration);

}  // namespace mooncake_tier::daemon
