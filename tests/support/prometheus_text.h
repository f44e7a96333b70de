#pragma once

// A small reader of the Prometheus text exposition format, enough for tests
// to check what /metrics renders: TYPE lines and samples with their labels.
// Test-only.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mooncake_tier::testing {

struct PromSample {
  std::string name;  // with any _bucket/_sum/_count suffix
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct PromText {
  std::map<std::string, std::string> types;  // family name -> "counter", ...
  std::vector<PromSample> samples;

  // The value of the one sample named `name` whose labels include every
  // pair of `labels`; nullopt when there is none or more than one.
  std::optional<double> Value(
      std::string_view name,
      const std::map<std::string, std::string>& labels = {}) const;
  // Samples named `name`.
  size_t Count(std::string_view name) const;
};

// Parses `text`; lines it cannot read are reported in `*errors` if given.
PromText ParsePromText(std::string_view text,
                       std::vector<std::string>* errors = nullptr);

}  // namespace mooncake_tier::testing
