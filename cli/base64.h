#pragma once

// Standard base64 (RFC 4648, with padding), for values in JSON output.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mooncake_tier::cli {

std::string Base64Encode(std::span<const std::byte> bytes);

// nullopt when `text` is not valid padded base64.
std::optional<std::vector<std::byte>> Base64Decode(std::string_view text);

}  // namespace mooncake_tier::cli
