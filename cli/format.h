#pragma once

// Formatting of values for people, shared by the admin command groups:
// byte counts, durations, ratios and JSON cells. Missing or mistyped JSON
// fields render as "-" rather than throw, so a server that adds or drops a
// field never breaks a table.
//
// Thread safety: pure functions.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace mooncake_tier::cli {

// "512 B", "4.0 KiB", "1.5 GiB", up to PiB (base/byte_units.h).
std::string HumanBytes(uint64_t bytes);
// Milliseconds as "250ms", "2.5s", "3m20s", "2h05m", "3d04h".
std::string HumanMillis(int64_t ms);
// 0.253 as "25.3%".
std::string Percent(double ratio);
// A rate per second as "12.5/s".
std::string Rate(double per_second);

// object[field], or null when `object` is not an object or lacks it (never
// throws, unlike json::at and json::value on a non-object).
const nlohmann::json& Field(const nlohmann::json& object, const char* field);

// A JSON value as a table cell: strings as they are, numbers and booleans
// in JSON form, null, absent or "" as "-".
std::string Cell(const nlohmann::json& value);
// object[field] as a cell; "-" when `object` is not an object or lacks it.
std::string Cell(const nlohmann::json& object, const char* field);
// Numeric object[field], or `fallback`.
double Number(const nlohmann::json& object, const char* field,
              double fallback = 0);
// "used / capacity (ratio)" of a {"capacity_bytes","used_bytes",
// "used_ratio"} object.
std::string TierUse(const nlohmann::json& tier);

}  // namespace mooncake_tier::cli
