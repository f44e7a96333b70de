#include "cli/metrics_filter.h"

#include <cmath>
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

}  // namespace

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
