// Code that takes the object index's stripes against its order. The
// thread-safety analysis must reject each function here (run.sh checks
// that it does, and that in_order.cc passes).

#include "core/object_index.h"

namespace mooncake_tier {

// A group stripe while an object stripe is held.
void GroupUnderObject(ObjectIndex& index) {
  index.Update("key", [&](ObjectSlot&)
                          ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
                            index.UpdateGroup("group", [](GroupSlot&) {});
                          });
}

// A second object stripe while one is held.
void ObjectUnderObject(ObjectIndex& index) {
  index.Update("key", [&](ObjectSlot&) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                          object_stripe_role) {
    index.Read("other", [](const ObjectMeta*) { return 0; });
  });
}

// A second group stripe while one is held.
void GroupUnderGroup(ObjectIndex& index) {
  index.UpdateGroup("group", [&](GroupSlot&) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                                 group_stripe_role) {
    index.ReadGroup("other", [](const GroupMeta*) { return 0; });
  });
}

}  // namespace mooncake_tier
