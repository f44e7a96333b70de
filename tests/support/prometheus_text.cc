#include "tests/support/prometheus_text.h"

#include <cstdlib>
#include <sstream>

namespace mooncake_tier::testing {
namespace {

// Parses `{a="x",b="y"}` starting at text[pos] == '{'; returns the position
// after '}' or npos.
size_t ParseLabels(std::string_view text, size_t pos,
                   std::map<std::string, std::string>* labels) {
  ++pos;
  while (pos < text.size() && text[pos] != '}') {
    const size_t eq = text.find('=', pos);
    if (eq == std::string_view::npos || eq + 1 >= text.size() ||
        text[eq + 1] != '"') {
      return std::string_view::npos;
    }
    std::string name(text.substr(pos, eq - pos));
    std::string value;
    size_t i = eq + 2;
    for (; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        ++i;
        value.push_back(text[i] == 'n' ? '\n' : text[i]);
      } else {
        value.push_back(text[i]);
      }
    }
    if (i >= text.size()) return std::string_view::npos;
    (*labels)[name] = value;
    pos = i + 1;
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
  return pos < text.size() ? pos + 1 : std::string_view::npos;
}

}  // namespace

std::optional<double> PromText::Value(
    std::string_view name,
    const std::map<std::string, std::string>& labels) const {
  std::optional<double> found;
  for (const PromSample& s : samples) {
    if (s.name != name) continue;
    bool match = true;
    for (const auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      if (it == s.labels.end() || it->second != v) match = false;
    }
    if (!match) continue;
    if (found.has_value()) return std::nullopt;
    found = s.value;
  }
  return found;
}

size_t PromText::Count(std::string_view name) const {
  size_t n = 0;
  for (const PromSample& s : samples) n += s.name == name ? 1 : 0;
  return n;
}

PromText ParsePromText(std::string_view text,
                       std::vector<std::string>* errors) {
  PromText out;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream fields(line.substr(7));
      std::string name, type;
      fields >> name >> type;
      out.types[name] = type;
      continue;
    }
    if (line[0] == '#') continue;
    PromSample sample;
    size_t pos = line.find_first_of("{ ");
    if (pos == std::string::npos) {
      if (errors) errors->push_back(line);
      continue;
    }
    sample.name = line.substr(0, pos);
    if (line[pos] == '{') {
      pos = ParseLabels(line, pos, &sample.labels);
      if (pos == std::string_view::npos) {
        if (errors) errors->push_back(line);
        continue;
      }
    }
    const std::string value = line.substr(pos);
    char* end = nullptr;
    sample.value = std::strtod(value.c_str(), &end);
    if (end == value.c_str()) {
      if (errors) errors->push_back(line);
      continue;
    }
    out.samples.push_back(std::move(sample));
  }
  return out;
}

}  // namespace mooncake_tier::testing
