#include "cli/metrics_filter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() &&
         (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// "# HELP name text" / "# TYPE name type": the keyword, name and rest.
bool ParseComment(std::string_view line, std::string* keyword,
                  std::string* name, std::string* rest) {
  line.remove_prefix(1);  // '#'
  line = Trim(line);
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) return false;
  *keyword = std::string(line.substr(0, space));
  if (*keyword != "HELP" && *keyword != "TYPE") return false;
  line = Trim(line.substr(space + 1));
  const size_t name_end = line.find(' ');
  *name = std::string(line.substr(0, name_end));
  *rest = name_end == std::string_view::npos
              ? std::string()
              : std::string(Trim(line.substr(name_end + 1)));
  return !name->empty();
}

std::string SampleName(std::string_view line) {
  const size_t end = line.find_first_of("{ \t");
  return std::string(line.substr(0, end));
}

// Sample `line` as {"name","labels","value"}; labels unescaped.
json SampleJson(std::string_view line) {
  json sample = {{"name", SampleName(line)}, {"labels", json::object()}};
  size_t pos = sample["name"].get<std::string>().size();
  if (pos < line.size() && line[pos] == '{') {
    ++pos;
    while (pos < line.size() && line[pos] != '}') {
      const size_t equals = line.find('=', pos);
      if (equals == std::string_view::npos) break;
      std::string label(Trim(line.substr(pos, equals - pos)));
      pos = equals + 1;
      if (pos >= line.size() || line[pos] != '"') break;
      ++pos;
      std::string value;
      while (pos < line.size() && line[pos] != '"') {
        if (line[pos] == '\\' && pos + 1 < line.size()) {
          ++pos;
          value.push_back(line[pos] == 'n' ? '\n' : line[pos]);
        } else {
          value.push_back(line[pos]);
        }
        ++pos;
      }
      ++pos;  // closing quote
      sample["labels"][label] = value;
      while (pos < line.size() && (line[pos] == ',' || line[pos] == ' ')) {
        ++pos;
      }
    }
    ++pos;  // '}'
  }
  std::string_view rest = Trim(line.substr(std::min(pos, line.size())));
  const std::string value(rest.substr(0, rest.find(' ')));
  char* end = nullptr;
  const double number = std::strtod(value.c_str(), &end);
  if (!value.empty() && end == value.c_str() + value.size() &&
      std::isfinite(number)) {
    sample["value"] = number;
  } else {
    sample["value"] = value;
  }
  return sample;
}

// `value` as an exposition number: shortest round-tripping form; NaN and
// infinities as Prometheus spells them.
std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

// {a="x",b="y"} from `labels` (in their order) plus `extra`, escaped.
std::string RenderLabels(const json& labels, const std::string& extra_name,
                         const std::string& extra_value) {
  std::string out;
  auto add = [&out](const std::string& name, const std::string& value) {
    out += out.empty() ? "{" : ",";
    out += name + "=\"";
    for (char c : value) {
      if (c == '\\' || c == '"') {
        out += '\\';
        out += c;
      } else if (c == '\n') {
        out += "\\n";
      } else {
        out += c;
      }
    }
    out += '"';
  };
  for (const auto& [name, value] : labels.items()) {
    add(name, value.get<std::string>());
  }
  if (!extra_name.empty()) add(extra_name, extra_value);
  return out.empty() ? "" : out + "}";
}

double SampleValue(const json& sample) {
  const json& value = sample["value"];
  if (value.is_number()) return value.get<double>();
  const std::string text = value.get<std::string>();
  if (text == "+Inf" || text == "Inf") return INFINITY;
  if (text == "-Inf") return -INFINITY;
  return NAN;
}

// One histogram series: cumulative bucket counts by upper bound.
struct Series {
  json labels;                                     // without le
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
  double sum = NAN;
  double count = NAN;
};

// histogram_quantile's estimate for `q` over `buckets` (sorted by bound).
double Quantile(double q, std::vector<std::pair<double, double>> buckets) {
  std::sort(buckets.begin(), buckets.end());
  if (buckets.empty() || !std::isinf(buckets.back().first)) return NAN;
  const double total = buckets.back().second;
  if (!(total > 0)) return NAN;
  const double rank = q * total;
  double lower = 0, below = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const auto [bound, cumulative] = buckets[i];
    if (cumulative >= rank) {
      if (std::isinf(bound)) {
        return i > 0 ? buckets[i - 1].first : NAN;
      }
      if (i == 0 && bound <= 0) return bound;
      const double in_bucket = cumulative - below;
      return in_bucket > 0
                 ? lower + (bound - lower) * (rank - below) / in_bucket
                 : bound;
    }
    lower = bound;
    below = cumulative;
  }
  return NAN;
}

}  // namespace

std::vector<MetricFamily> CollapseHistograms(
    std::vector<MetricFamily> families) {
  for (MetricFamily& family : families) {
    if (family.type != "histogram") continue;
    std::vector<Series> series;
    auto series_of = [&series](const json& labels) -> Series& {
      for (Series& s : series) {
        if (s.labels == labels) return s;
      }
      series.push_back(Series{labels, {}, NAN, NAN});
      return series.back();
    };
    for (const std::string& line : family.samples) {
      json sample = SampleJson(line);
      const std::string name = sample["name"].get<std::string>();
      json labels = sample["labels"];
      if (name == family.name + "_bucket" && labels.contains("le")) {
        const std::string le = labels["le"].get<std::string>();
        labels.erase("le");
        const double bound =
            le == "+Inf" ? INFINITY : std::strtod(le.c_str(), nullptr);
        series_of(labels).buckets.emplace_back(bound, SampleValue(sample));
      } else if (name == family.name + "_sum") {
        series_of(labels).sum = SampleValue(sample);
      } else if (name == family.name + "_count") {
        series_of(labels).count = SampleValue(sample);
      }
    }
    std::vector<std::string> samples;
    for (const Series& s : series) {
      for (const auto& [q, text] :
           {std::pair<double, const char*>{0.5, "0.5"}, {0.99, "0.99"}}) {
        samples.push_back(family.name +
                          RenderLabels(s.labels, "quantile", text) + " " +
                          FormatValue(Quantile(q, s.buckets)));
      }
      samples.push_back(family.name + "_sum" + RenderLabels(s.labels, "", "") +
                        " " + FormatValue(s.sum));
      samples.push_back(family.name + "_count" +
                        RenderLabels(s.labels, "", "") + " " +
                        FormatValue(s.count));
    }
    std::vector<std::string> comments;
    for (const std::string& comment : family.comments) {
      comments.push_back(comment.find("# TYPE ") == 0
                             ? "# TYPE " + family.name + " summary"
                             : comment);
    }
    family.type = "summary";
    family.comments = std::move(comments);
    family.samples = std::move(samples);
  }
  return families;
}

std::vector<MetricFamily> ParseExposition(std::string_view text) {
  std::vector<MetricFamily> families;
  // A sample belongs to the family of the last # line whose name prefixes
  // it (histograms: name_bucket, name_sum, name_count).
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = Trim(text.substr(0, newline));
    text.remove_prefix(newline == std::string_view::npos ? text.size()
                                                         : newline + 1);
    if (line.empty()) continue;
    if (line.front() == '#') {
      std::string keyword, name, rest;
      if (!ParseComment(line, &keyword, &name, &rest)) {
        if (!families.empty()) families.back().comments.emplace_back(line);
        continue;
      }
      if (families.empty() || families.back().name != name) {
        families.push_back(MetricFamily{name, "", "", {}, {}});
      }
      (keyword == "HELP" ? families.back().help : families.back().type) = rest;
      families.back().comments.emplace_back(line);
      continue;
    }
    const std::string name = SampleName(line);
    if (families.empty() || name.rfind(families.back().name, 0) != 0) {
      families.push_back(MetricFamily{name, "", "", {}, {}});
    }
    families.back().samples.emplace_back(line);
  }
  return families;
}

std::vector<MetricFamily> FilterFamilies(std::vector<MetricFamily> families,
                                         const std::regex& pattern) {
  std::vector<MetricFamily> kept;
  for (MetricFamily& family : families) {
    std::vector<std::string> samples;
    for (std::string& sample : family.samples) {
      if (std::regex_search(sample, pattern)) {
        samples.push_back(std::move(sample));
      }
    }
    if (samples.empty()) continue;
    family.samples = std::move(samples);
    kept.push_back(std::move(family));
  }
  return kept;
}

std::string RenderExposition(const std::vector<MetricFamily>& families) {
  std::string out;
  for (const MetricFamily& family : families) {
    for (const std::string& line : family.comments) out += line + "\n";
    for (const std::string& line : family.samples) out += line + "\n";
  }
  return out;
}

json FamiliesJson(const std::vector<MetricFamily>& families) {
  json out = json::array();
  for (const MetricFamily& family : families) {
    json samples = json::array();
    for (const std::string& line : family.samples) {
      samples.push_back(SampleJson(line));
    }
    out.push_back({{"name", family.name},
                   {"type", family.type},
                   {"help", family.help},
                   {"samples", std::move(samples)}});
  }
  return {{"families", std::move(out)}};
}

}  // namespace mooncake_tier::cli
