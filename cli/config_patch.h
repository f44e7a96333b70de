#pragma once

// `config set KEY=VALUE...` as a PATCH /api/v1/config body: the pure part,
// kept apart from the command so it can be tested without a server.
//
// KEY is a dotted path into the GET /api/v1/config document
// ("eviction_ratio", "promotion.admission_threshold"). VALUE is typed like
// the field's current value, since the server checks JSON types: booleans
// take true/false (also on/off, yes/no, 1/0), integers and numbers their
// decimal form, strings as given. Durations are integer milliseconds on
// the wire (fields named *_ms); their VALUE may carry a unit ("30s",
// "250ms", "2min", "1h"; a bare number is milliseconds), and the _ms may be
// left off the KEY ("promotion.task_timeout=30s").
//
// Thread safety: pure functions.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mooncake_tier/status.h"

namespace mooncake_tier::cli {

struct ConfigAssignment {
  std::string key;
  std::string value;
};

// "KEY=VALUE" (the first '=' splits; VALUE may be empty only for strings).
// INVALID_ARGUMENT without '=' or with an empty KEY.
Result<ConfigAssignment> ParseAssignment(std::string_view text);

// "30s" -> 30000, "250ms" -> 250, "2min"/"2m" -> 120000, "1h", "1.5s";
// a bare number is milliseconds. INVALID_ARGUMENT otherwise (negative,
// fractional milliseconds, unknown unit).
Result<int64_t> ParseDurationMs(std::string_view text);

// The merge patch that sets every assignment, typed after `current` (the
// GET document). INVALID_ARGUMENT for a key the server does not have, a
// section given a value, a key given twice, or a value of the wrong type;
// the message names the key.
Result<nlohmann::json> BuildConfigPatch(
    const nlohmann::json& current,
    const std::vector<ConfigAssignment>& assignments);

// {"a":1,"promotion":{"b":2}} -> [("a",1),("promotion.b",2)], in document
// order.
std::vector<std::pair<std::string, nlohmann::json>> FlattenConfig(
    const nlohmann::json& config);

// {"promotion.b": [old, new]} for every leaf that differs.
nlohmann::json ConfigChanges(const nlohmann::json& before,
                             const nlohmann::json& after);

}  // namespace mooncake_tier::cli
