#include "cli/config_patch.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;

// "'TEXT'" and then WHY: the shape of every refusal of a user's text here.
Status InvalidText(std::string_view text, std::string_view why) {
  std::string message = "'";
  message.append(text).append("'").append(why);
  return Status::InvalidArgument(std::move(message));
}

// The whole of `text` as a double; nullopt for anything else.
std::optional<double> ParseDouble(std::string_view text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) {
    return std::nullopt;
  }
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(copy.c_str(), &end);
  if (errno != 0 || end != copy.c_str() + copy.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// The whole of `text` as a decimal integer; nullopt for anything else.
std::optional<int64_t> ParseInteger(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(copy.c_str(), &end, 10);
  if (errno != 0 || end != copy.c_str() + copy.size() ||
      std::isspace(static_cast<unsigned char>(copy.front()))) {
    return std::nullopt;
  }
  return value;
}

std::optional<bool> ParseBoolean(std::string_view text) {
  for (std::string_view yes : {"true", "on", "yes", "1"}) {
    if (text == yes) return true;
  }
  for (std::string_view no : {"false", "off", "no", "0"}) {
    if (text == no) return false;
  }
  return std::nullopt;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

// The JSON of `value` for a field whose current value is `current`.
Result<json> TypedValue(const std::string& key, const json& current,
                        const std::string& value, bool duration) {
  if (duration) {
    Result<int64_t> ms = ParseDurationMs(value);
    if (!ms.ok())
      return Status::InvalidArgument(key + ": " + ms.status().message());
    return json(static_cast<uint64_t>(*ms));
  }
  if (current.is_boolean()) {
    if (std::optional<bool> b = ParseBoolean(value)) return json(*b);
    return Status::InvalidArgument(key + " takes true or false, not '" + value +
                                   "'");
  }
  if (current.is_number_integer()) {
    std::optional<int64_t> n = ParseInteger(value);
    if (!n || (current.is_number_unsigned() && *n < 0)) {
      return Status::InvalidArgument(
          key + " takes a whole number" +
          (current.is_number_unsigned() ? " >= 0" : "") + ", not '" + value +
          "'");
    }
    return current.is_number_unsigned() ? json(static_cast<uint64_t>(*n))
                                        : json(*n);
  }
  if (current.is_number()) {
    if (std::optional<double> d = ParseDouble(value)) return json(*d);
    return Status::InvalidArgument(key + " takes a number, not '" + value +
                                   "'");
  }
  if (current.is_string()) return json(value);
  if (current.is_object()) {
    return Status::InvalidArgument(
        key + " is a section; set its fields, e.g. " + key + "." +
        (current.empty() ? std::string("FIELD") : current.begin().key()) +
        "=VALUE");
  }
  return Status::InvalidArgument(key + " cannot be set from the command line");
}

void Flatten(const json& node, const std::string& prefix,
             std::vector<std::pair<std::string, json>>& out) {
  for (const auto& [name, value] : node.items()) {
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    if (value.is_object()) {
      Flatten(value, key, out);
    } else {
      out.emplace_back(key, value);
    }
  }
}

}  // namespace

Result<ConfigAssignment> ParseAssignment(std::string_view text) {
  const size_t equals = text.find('=');
  if (equals == std::string_view::npos) {
    return InvalidText(text, " is not KEY=VALUE");
  }
  if (equals == 0) {
    return InvalidText(text, " has no KEY before '='");
  }
  return ConfigAssignment{std::string(text.substr(0, equals)),
                          std::string(text.substr(equals + 1))};
}

Result<int64_t> ParseDurationMs(std::string_view text) {
  size_t unit_start = text.size();
  while (unit_start > 0 &&
         std::isalpha(static_cast<unsigned char>(text[unit_start - 1]))) {
    --unit_start;
  }
  const std::string_view unit = text.substr(unit_start);
  std::optional<double> number = ParseDouble(text.substr(0, unit_start));
  double scale = 0;
  if (unit.empty() || unit == "ms") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1000;
  } else if (unit == "m" || unit == "min") {
    scale = 60'000;
  } else if (unit == "h") {
    scale = 3'600'000;
  }
  if (!number || scale == 0 || *number < 0) {
    return InvalidText(text,
                       " is not a duration (e.g. 250ms, 30s, 2min, 1h; a bare "
                       "number is milliseconds)");
  }
  const double ms = *number * scale;
  if (ms != std::floor(ms) || ms > static_cast<double>(1ull << 41)) {
    return InvalidText(text, " is not a whole number of milliseconds in range");
  }
  return static_cast<int64_t>(ms);
}

Result<json> BuildConfigPatch(
    const json& current, const std::vector<ConfigAssignment>& assignments) {
  if (!current.is_object()) {
    return Status(ErrorReason::kInternal,
                  "the server's configuration is not a JSON object");
  }
  json patch = json::object();
  std::set<std::string> seen;
  for (const ConfigAssignment& assignment : assignments) {
    // Walk the dotted key through the current document.
    std::vector<std::string> path;
    for (size_t start = 0;;) {
      const size_t dot = assignment.key.find('.', start);
      path.push_back(assignment.key.substr(start, dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    const json* parent = &current;
    for (size_t i = 0; i + 1 < path.size(); ++i) {
      auto it = parent->find(path[i]);
      if (it == parent->end() || !it->is_object()) {
        return Status::InvalidArgument("unknown knob '" + assignment.key + "'");
      }
      parent = &*it;
    }
    std::string& leaf = path.back();
    bool duration = EndsWith(leaf, "_ms");
    if (!parent->contains(leaf) && parent->contains(leaf + "_ms")) {
      leaf += "_ms";  // "task_timeout=30s" names task_timeout_ms
      duration = true;
    }
    auto field = parent->find(leaf);
    if (leaf.empty() || field == parent->end()) {
      return Status::InvalidArgument("unknown knob '" + assignment.key + "'");
    }
    std::string canonical;
    for (const std::string& part : path) {
      canonical += (canonical.empty() ? "" : ".") + part;
    }
    if (!seen.insert(canonical).second) {
      return Status::InvalidArgument("'" + canonical + "' is given twice");
    }
    MT_ASSIGN_OR_RETURN(
        json value, TypedValue(canonical, *field, assignment.value, duration));
    json* target = &patch;
    for (size_t i = 0; i + 1 < path.size(); ++i) target = &(*target)[path[i]];
    (*target)[leaf] = std::move(value);
  }
  return patch;
}

std::vector<std::pair<std::string, json>> FlattenConfig(const json& config) {
  std::vector<std::pair<std::string, json>> out;
  if (config.is_object()) Flatten(config, "", out);
  return out;
}

json ConfigChanges(const json& before, const json& after) {
  json changes = json::object();
  const auto old_values = FlattenConfig(before);
  for (const auto& [key, value] : FlattenConfig(after)) {
    for (const auto& [old_key, old_value] : old_values) {
      if (old_key == key && old_value != value) {
        changes[key] = json::array({old_value, value});
      }
    }
  }
  return changes;
}

}  // namespace mooncake_tier::cli
