#include "cli/option_checks.h"

#include <charconv>

namespace mooncake_tier::cli {

CLI::Validator WholeNumber(uint64_t lo, uint64_t hi, std::string unit) {
  const std::string suffix = unit.empty() ? "" : " " + unit;
  const std::string bounds =
      hi == std::numeric_limits<uint64_t>::max()
          ? "of at least " + std::to_string(lo) + suffix
          : "from " + std::to_string(lo) + " to " + std::to_string(hi) + suffix;
  return CLI::Validator(
      [bounds, lo, hi](std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [at, error] = std::from_chars(text.data(), end, value);
        if (error == std::errc() && at == end && !text.empty() && value >= lo &&
            value <= hi) {
          return "";
        }
        return "must be a whole number " + bounds + ", not '" + text + "'";
      },
      "", "WholeNumber");
}

}  // namespace mooncake_tier::cli
