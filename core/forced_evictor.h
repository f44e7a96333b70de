#pragma once

// The part of the master that evicts what an operator asks for (the admin
// API's .../evict). It uses the rounds' own steps (Tiering's drop and
// group steps, the Offloader's queueing) so a forced eviction follows the
// same rules: groups leave DRAM whole, and with offload on nothing leaves
// DRAM that is not on SSD yet. Unlike a round it names why it cannot act,
// and it ignores recency.
//
// Thread safety: thread-safe.

#include <string>
#include <string_view>

#include "core/master_state.h"
#include "core/offloader.h"
#include "core/tiering.h"
#include "mooncake_tier/status.h"
#include "protocol/messages.h"

namespace mooncake_tier {

class ForcedEvictor {
 public:
  ForcedEvictor(MasterState* state, Tiering* tiering, Offloader* offloader);
  ForcedEvictor(const ForcedEvictor&) = delete;
  ForcedEvictor& operator=(const ForcedEvictor&) = delete;

  // See Master::EvictObject and EvictGroup.
  Result<ForcedEviction> EvictObject(const std::string& key);
  Result<ForcedEviction> EvictGroup(const std::string& group_id);
  // A forced eviction of a group whose offloads were queued ends here when
  // its last offload lands: with every member on SSD and none leased or
  // pinned, the DRAM copies go together. REQUIRES: no stripe held.
  void FinishForcedGroupEviction(const std::string& group_id);

 private:
  // Why `meta`'s DRAM copy cannot be evicted by an operator now (OK when
  // it can).
  Status ForcedEvictable(std::string_view key, const ObjectMeta& meta,
                         TimePoint now) const;

  MasterState& s_;
  Tiering& tiering_;
  Offloader& offloader_;
};

}  // namespace mooncake_tier
