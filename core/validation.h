#pragma once

// Checks of outside input shared by every entry point (client API, engine,
// SSD store): one place decides what a valid key or group is.

#include <string_view>

#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"

namespace mooncake_tier {

// INVALID_KEY unless 1..kMaxKeyBytes bytes without NUL.
Status ValidateKey(std::string_view key);
// INVALID_GROUP unless the id is 1..kMaxGroupIdBytes bytes without NUL,
// group_size > 0 and group_index < group_size.
Status ValidateGroupSpec(const GroupSpec& group);

// The two halves of ValidateGroupSpec, below, are for callers that check an
// id shared by many specs (a run of one group's members) once. Both run for
// every member put: they are inline so that an accepted spec costs its
// comparisons and nothing else (no call, and no OK Status made and
// destroyed out of sight of the caller's check of it). The errors are built
// out of line.
namespace validation_internal {
Status GroupIdError();
Status GroupShapeError(const GroupSpec& group);
}  // namespace validation_internal

// INVALID_GROUP unless the id is 1..kMaxGroupIdBytes bytes without NUL;
inline Status ValidateGroupId(std::string_view id) {
  if (id.empty() || id.size() > kMaxGroupIdBytes ||
      id.find('\0') != std::string_view::npos) {
    return validation_internal::GroupIdError();
  }
  return Status();
}

// INVALID_GROUP unless group_size > 0 and group_index < group_size.
inline Status ValidateGroupShape(const GroupSpec& group) {
  if (group.group_index >= group.group_size) {  // also group_size == 0
    return validation_internal::GroupShapeError(group);
  }
  return Status();
}

}  // namespace mooncake_tier
