// The object index's order kept: an object stripe under a group stripe.
// The thread-safety analysis must accept it (see run.sh).

#include "core/object_index.h"

namespace mooncake_tier {

void ObjectUnderGroup(ObjectIndex& index) {
  index.UpdateGroup("group", [&](GroupSlot&) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                                 group_stripe_role) {
    index.Update("key", [](ObjectSlot&) {});
  });
}

}  // namespace mooncake_tier
