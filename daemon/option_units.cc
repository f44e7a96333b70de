#include "daemon/option_units.h"

#include <array>
#include <cctype>
#include <map>

#include "base/byte_units.h"

namespace mooncake_tier::daemon {
namespace {

// Refuses a leading minus sign, which unsigned parsing would wrap around.
// Added as a transform after the unit transform so that it runs first
// (CLI11 runs transforms in reverse order of addition, before checks).
CLI::Validator NotNegative() {
  return CLI::Validator(
      [](std::string& value) {
        const size_t first = value.find_first_not_of(" \t");
        if (first != std::string::npos && value[first] == '-') {
          return std::string("must not be negative");
        }
        return std::string();
      },
      "", "");
}

// A clearer message than CLI11's for a duration without its unit.
CLI::Validator UnitGiven() {
  return CLI::Validator(
      [](std::string& value) {
        const size_t last = value.find_last_not_of(" \t");
        if (last == std::string::npos ||
            !std::isalpha(static_cast<unsigned char>(value[last]))) {
          return std::string("needs a unit: ms, s, m or h (as in 10s)");
        }
        return std::string();
      },
      "", "");
}

CLI::Validator DurationUnits() {
  const std::map<std::string, int64_t> ms_per_unit = {
      {"ms", 1}, {"s", 1000}, {"m", 60'000}, {"min", 60'000}, {"h", 3'600'000}};
  CLI::Validator units = CLI::AsNumberWithUnit(
      ms_per_unit, static_cast<CLI::AsNumberWithUnit::Options>(
                       CLI::AsNumberWithUnit::CASE_INSENSITIVE |
                       CLI::AsNumberWithUnit::UNIT_REQUIRED));
  units.description("");  // the help footer explains the units
  return units;
}

// The longest duration a flag takes, ~69 years (as the admin API's config
// PATCH): far beyond any timeout, and far below where milliseconds
// overflow the engine's nanosecond Duration (or a deadline now + it).
constexpr int64_t kMaxDurationMs = int64_t{1} << 41;

CLI::Option* AddMillisecondsOption(CLI::App* app, const std::string& name,
                                   std::function<void(int64_t)> store,
                                   const std::string& description,
                                   const std::string& default_text) {
  CLI::Option* option =
      app->add_option_function<int64_t>(name, std::move(store), description);
  option->transform(DurationUnits())
      ->transform(UnitGiven())
      ->check([](const std::string& ms) {
        const long long value = std::stoll(ms);
        if (value <= 0) return std::string("must be positive");
        if (value > kMaxDurationMs) {
          return "must be at most " + std::to_string(kMaxDurationMs) +
                 "ms (about 69 years)";
        }
        return std::string();
      })
      ->type_name("DURATION")
      ->default_str(default_text);
  return option;
}

}  // namespace

const char* const kUnitsHelp =
    "SIZE: bytes, with an optional binary unit (1048576, 512MiB, 4GiB; "
    "k, m, g, t are powers of 1024). DURATION: a whole number with a unit "
    "(250ms, 10s, 5m, 1h). Flags may also come from --config FILE.";

CLI::Option* AddSizeOption(CLI::App* app, const std::string& name,
                           uint64_t* target, const std::string& description,
                           uint64_t min_bytes) {
  CLI::Option* option = app->add_option(name, *target, description);
  CLI::Validator units = CLI::AsSizeValue(/*kb_is_1000=*/false);
  units.description("");  // the help footer explains the units
  option->transform(units)
      ->transform(NotNegative())
      ->type_name("SIZE")
      ->default_str(FormatSizeFlag(*target));
  if (min_bytes > 0) {
    option->check(
        [min_bytes](const std::string& bytes) {
          return std::stoull(bytes) >= min_bytes ? std::string()
                 : min_bytes == 1
                     ? std::string("must be positive")
                     : "must be at least " + FormatSizeFlag(min_bytes);
        },
        "", "");
  }
  return option;
}

CLI::Option* AddDurationOption(CLI::App* app, const std::string& name,
                               Duration* target,
                               const std::string& description) {
  return AddMillisecondsOption(
      app, name,
      [target](int64_t ms) { *target = std::chrono::milliseconds(ms); },
      description, FormatDurationFlag(*target));
}

CLI::Option* AddDurationOption(CLI::App* app, const std::string& name,
                               std::chrono::milliseconds* target,
                               const std::string& description) {
  return AddMillisecondsOption(
      app, name,
      [target](int64_t ms) { *target = std::chrono::milliseconds(ms); },
      description, FormatDurationFlag(*target));
}

std::string FormatSizeFlag(uint64_t bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"TiB", "GiB", "MiB",
                                                        "KiB", ""};
  if (bytes == 0) return "0";
  for (size_t i = 0; i < kUnits.size() - 1; ++i) {
    const uint64_t unit = uint64_t{1} << (10 * (kUnits.size() - 1 - i));
    if (bytes % unit == 0) return std::to_string(bytes / unit) + kUnits[i];
  }
  return std::to_string(bytes);
}

// Up to TiB; the CLI's HumanBytes goes on to PiB.
std::string FormatSizeHuman(uint64_t bytes) {
  return HumanBytes(bytes, ByteUnit::kTiB);
}

std::string FormatDurationFlag(Duration duration) {
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
  if (ms != 0 && ms % 3'600'000 == 0)
    return std::to_string(ms / 3'600'000) + "h";
  if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace mooncake_tier::daemon
