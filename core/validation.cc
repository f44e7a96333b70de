#include "core/validation.h"

#include <string>

namespace mooncake_tier {

Status ValidateKey(std::string_view key) {
  if (key.empty()) return Status(ErrorReason::kInvalidKey, "key is empty");
  if (key.size() > kMaxKeyBytes) {
    return Status(ErrorReason::kInvalidKey,
                  "key is " + std::to_string(key.size()) +
                      " bytes; the limit is " + std::to_string(kMaxKeyBytes));
  }
  if (key.find('\0') != std::string_view::npos) {
    return Status(ErrorReason::kInvalidKey, "key contains a NUL byte");
  }
  return Status::Ok();
}

Status ValidateGroupSpec(const GroupSpec& group) {
  MT_RETURN_IF_ERROR(ValidateGroupId(group.group_id));
  return ValidateGroupShape(group);
}

namespace validation_internal {

Status GroupIdError() {
  return Status(ErrorReason::kInvalidGroup,
                "group_id must be 1.." + std::to_string(kMaxGroupIdBytes) +
                    " bytes without NUL");
}

Status GroupShapeError(const GroupSpec& group) {
  if (group.group_size == 0) {
    return Status(ErrorReason::kInvalidGroup, "group_size must be > 0");
  }
  return Status(ErrorReason::kInvalidGroup,
                "group_index " + std::to_string(group.group_index) +
                    " is not below group_size " +
                    std::to_string(group.group_size));
}

}  // namespace validation_internal

}  // namespace mooncake_tier
