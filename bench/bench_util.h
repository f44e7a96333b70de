#pragma once

// Small helpers the bench scenarios share: names that spread over a hash
// space and percentiles of measured samples.
//
// Thread safety: pure functions.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace mooncake_tier::bench {

// `prefix` + 16 hex digits of a mixed `i`: names share no long prefix, so
// they spread over hash shards as real keys do.
inline std::string HashedName(std::string_view prefix, uint64_t i) {
  char hex[20];
  std::snprintf(
      hex, sizeof(hex), "%016llx",
      static_cast<unsigned long long>((i + 1) * 0x9E3779B97F4A7C15ull));
  return std::string(prefix) + hex;
}

// num / den, or 0 when den is not positive (a phase that took no time or
// did nothing).
inline double Ratio(double num, double den) { return den > 0 ? num / den : 0; }

// The nearest-rank q-quantile (0 < q <= 1) of `values`: the smallest value
// with at least q of the samples at or below it. 0 for no samples.
inline double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(q * values.size()));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

}  // namespace mooncake_tier::bench
