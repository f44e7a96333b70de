#include "mooncake_tier/status.h"

#include <array>
#include <string>
#include <utility>

namespace mooncake_tier {
namespace {

struct ReasonEntry {
  std::string_view name;
  StatusCode code;
};

constexpr std::array kReasons = {
#define MOONCAKE_TIER_REASON_ENTRY(name, wire, code) \
  ReasonEntry{wire, StatusCode::code},
    MOONCAKE_TIER_ERROR_REASONS(MOONCAKE_TIER_REASON_ENTRY)
#undef MOONCAKE_TIER_REASON_ENTRY
};

constexpr std::array<std::string_view, 12> kCodeNames = {
    "OK",
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "FAILED_PRECONDITION",
    "RESOURCE_EXHAUSTED",
    "UNAVAILABLE",
    "DEADLINE_EXCEEDED",
    "ABORTED",
    "DATA_LOSS",
    "INTERNAL",
    "UNAUTHENTICATED",
};

}  // namespace

Status::Status(ErrorReason reason, std::string message)
    : reason_(reason), message_(std::move(message)) {}

std::string_view ReasonName(ErrorReason reason) {
  const auto index = static_cast<size_t>(reason);
  return index < kReasons.size() ? kReasons[index].name : "INTERNAL";
}

StatusCode ReasonCode(ErrorReason reason) {
  const auto index = static_cast<size_t>(reason);
  return index < kReasons.size() ? kReasons[index].code : StatusCode::kInternal;
}

std::string_view CodeName(StatusCode code) {
  const auto index = static_cast<size_t>(code);
  return index < kCodeNames.size() ? kCodeNames[index] : "INTERNAL";
}

ErrorReason ReasonFromName(std::string_view name) {
  for (size_t i = 0; i < kReasons.size(); ++i) {
    if (kReasons[i].name == name) return static_cast<ErrorReason>(i);
  }
  return ErrorReason::kInternal;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(CodeName(code()));
  out += '/';
  out += ReasonName(reason_);
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace mooncake_tier
