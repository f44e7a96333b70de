#pragma once

// What keeps a SharedGroupStatus alive, for the code that makes one: the
// engine's group record, and SharedGroupStatus's own copy of a value
// (protocol/group_status.cc). Clients see only the opaque name
// (include/mooncake_tier/types.h).

#include "mooncake_tier/types.h"

namespace mooncake_tier {

// A reference count. Ref and Unref are thread-safe.
class GroupStatusOwner {
 public:
  virtual void Ref() const noexcept = 0;
  // Drops a reference; the last one frees the owner.
  virtual void Unref() const noexcept = 0;

 protected:
  GroupStatusOwner() = default;
  GroupStatusOwner(const GroupStatusOwner&) = default;
  GroupStatusOwner& operator=(const GroupStatusOwner&) = default;
  ~GroupStatusOwner() = default;
};

}  // namespace mooncake_tier
