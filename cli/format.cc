#include "cli/format.h"

#include <cmath>
#include <cstdio>

#include "base/byte_units.h"

namespace mooncake_tier::cli {

// Up to PiB; the daemon's FormatSizeHuman stops at TiB.
std::string HumanBytes(uint64_t bytes) {
  return mooncake_tier::HumanBytes(bytes, ByteUnit::kPiB);
}

std::string HumanMillis(int64_t ms) {
  if (ms < 0) return "-" + HumanMillis(-ms);
  char buffer[32];
  if (ms < 1000) {
    std::snprintf(buffer, sizeof(buffer), "%lldms", static_cast<long long>(ms));
  } else if (ms < 60'000) {
    std::snprintf(buffer, sizeof(buffer), "%.1fs", ms / 1000.0);
  } else if (ms < 3'600'000) {
    std::snprintf(buffer, sizeof(buffer), "%lldm%02llds",
                  static_cast<long long>(ms / 60'000),
                  static_cast<long long>(ms / 1000 % 60));
  } else if (ms < 86'400'000) {
    std::snprintf(buffer, sizeof(buffer), "%lldh%02lldm",
                  static_cast<long long>(ms / 3'600'000),
                  static_cast<long long>(ms / 60'000 % 60));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%lldd%02lldh",
                  static_cast<long long>(ms / 86'400'000),
                  static_cast<long long>(ms / 3'600'000 % 24));
  }
  return buffer;
}

std::string Percent(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f%%", ratio * 100);
  return buffer;
}

std::string Rate(double per_second) {
  if (!std::isfinite(per_second)) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f/s", per_second);
  return buffer;
}

const nlohmann::json& Field(const nlohmann::json& object, const char* field) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(field);
  return it == object.end() ? kNull : *it;
}

std::string Cell(const nlohmann::json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) {
    return value.get_ref<const std::string&>().empty()
               ? "-"
               : value.get<std::string>();
  }
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Cell(const nlohmann::json& object, const char* field) {
  if (!object.is_object()) return "-";
  auto it = object.find(field);
  return it == object.end() ? "-" : Cell(*it);
}

double Number(const nlohmann::json& object, const char* field,
              double fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(field);
  if (it == object.end() || !it->is_number()) return fallback;
  return it->get<double>();
}

std::string TierUse(const nlohmann::json& tier) {
  if (!tier.is_object()) return "-";
  const auto used = static_cast<uint64_t>(Number(tier, "used_bytes"));
  const auto capacity = static_cast<uint64_t>(Number(tier, "capacity_bytes"));
  return HumanBytes(used) + " / " + HumanBytes(capacity) + " (" +
         Percent(Number(tier, "used_ratio")) + ")";
}

}  // namespace mooncake_tier::cli
