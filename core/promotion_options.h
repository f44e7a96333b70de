#pragma once

// Knobs of promotion on hit (ARCHITECTURE.md section 6). The master starts
// with MasterConfig::promotion and may be given new values at run time
// (Master::SetPromotionOptions, the admin API's PATCH /api/v1/config); the
// sketch's size is fixed at start.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

// How an SSD-only object earns its way back into DRAM.
enum class PromotionPolicy : uint8_t {
  kThreshold = 0,  // its sketch estimate reaches admission_threshold
  kTinyLfu = 1,    // ... and beats the DRAM victims it would displace
};
std::string_view PromotionPolicyName(PromotionPolicy policy);
std::optional<PromotionPolicy> ParsePromotionPolicy(std::string_view name);

struct PromotionOptions {
  // Reads of SSD-only objects trigger promotion. Default: true.
  bool on_hit = true;
  // Default: kThreshold.
  PromotionPolicy policy = PromotionPolicy::kThreshold;
  // Sketch estimate needed for admission. REQUIRES: >= 1. Default: 2.
  uint32_t admission_threshold = 2;
  // Promotion tasks in flight across the store; more is `queue_full`.
  // REQUIRES: >= 1. Default: 50000.
  uint32_t queue_limit = 50000;
  // Promotion tasks handed to a node per PullTasks. REQUIRES: >= 1.
  // Default: 64.
  uint32_t max_per_pull = 64;
  // A task not finished within this time is reaped and its pins released.
  // Default: 30 s.
  Duration task_timeout = std::chrono::seconds(30);
  // Drop the SSD copy once the DRAM copy is committed. Default: false (the
  // SSD copy is cheap insurance against the next DRAM eviction).
  bool drop_source = false;
  // Proactive promotion: while DRAM use is below this fraction, the
  // background step promotes the hottest SSD-only objects it samples.
  // 0 turns it off. REQUIRES: 0 <= low watermark < 1. Default: 0.5.
  double proactive_low_watermark = 0.5;
  // At most this many objects (or groups) per proactive step. Default: 64.
  uint32_t proactive_max_per_step = 64;
  // Proactive steps run at most this often. Default: 1 s.
  Duration proactive_interval = std::chrono::seconds(1);

  // Empty when valid, otherwise what is wrong.
  std::string Validate() const;
};

// Edits promotion options in place; an error leaves them unchanged
// (Master::UpdateRuntimeConfig).
using PromotionEdit = std::function<Status(PromotionOptions&)>;

}  // namespace mooncake_tier
