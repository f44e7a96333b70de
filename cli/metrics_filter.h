#pragma once

// The Prometheus text exposition of /metrics, cut into metric families so
// `mooncake-tierctl metrics --match RE` can keep the sample lines that
// match and the # HELP / # TYPE lines of their families, and render the
// result as text or JSON.
//
// Thread safety: pure functions.

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace mooncake_tier::cli {

struct MetricFamily {
  std::string name;  // from # HELP / # TYPE, else the first sample's name
  std::string type;  // "counter", "gauge", "histogram", ... or ""
  std::string help;
  std::vector<std::string> comments;  // the # lines, as given
  std::vector<std::string> samples;   // the sample lines, as given
};

// Every family of `text` in order. Blank lines are dropped; a sample with
// no # line before it opens a family of its own name.
std::vector<MetricFamily> ParseExposition(std::string_view text);

// Each family keeping only the samples whose line `pattern` finds
// (regex_search, so "promotion" matches anywhere, "^mooncake_get" a name
// prefix, 'tier="memory"' a label); families left without samples are
// dropped.
std::vector<MetricFamily> FilterFamilies(std::vector<MetricFamily> families,
                                         const std::regex& pattern);

// Each histogram family as a summary, per label set (`le` aside): the
// series' _count and _sum, and its 0.5 and 0.99 quantiles estimated from
// the buckets as Prometheus's histogram_quantile does (linear within the
// bucket; the highest finite bound when it falls in +Inf; NaN with no
// observations):
//   name{l="v",quantile="0.5"} X / name{l="v",quantile="0.99"} Y /
//   name_sum{l="v"} S / name_count{l="v"} N
// The HELP line is kept, TYPE becomes summary. Other families unchanged.
std::vector<MetricFamily> CollapseHistograms(
    std::vector<MetricFamily> families);

// The families as exposition text (comments, then samples).
std::string RenderExposition(const std::vector<MetricFamily>& families);

// {"families":[{"name","type","help","samples":[{"name","labels":{...},
// "value"}]}]}; a value is a JSON number, or a string for NaN and +-Inf.
nlohmann::json FamiliesJson(const std::vector<MetricFamily>& families);

}  // namespace mooncake_tier::cli
