#pragma once

// Renders collectors as the Prometheus text exposition format (version
// 0.0.4), the body of GET /metrics. The HTTP side lives in admin_server/;
// this only produces the text.
//
// Thread safety: thread-safe if the collectors are.

#include <string>
#include <string_view>
#include <vector>

#include "prometheus/collectable.h"

namespace mooncake_tier::metrics {

// Content-Type of the text format.
inline constexpr std::string_view kTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Collects every collector (in order) and serializes the families.
std::string RenderText(
    const std::vector<const prometheus::Collectable*>& collectors);

}  // namespace mooncake_tier::metrics
