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
// The two halves of ValidateGroupSpec, for callers that check an id shared
// by many specs (a run of one group's members) once:
// INVALID_GROUP unless the id is 1..kMaxGroupIdBytes bytes without NUL;
Status ValidateGroupId(std::string_view id);
// INVALID_GROUP unless group_size > 0 and group_index < group_size.
Status ValidateGroupShape(const GroupSpec& group);

}  // namespace mooncake_tier
