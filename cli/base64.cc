#include "cli/base64.h"

#include <algorithm>
#include <cstdint>

namespace mooncake_tier::cli {
namespace {

constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int SextetOf(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string Base64Encode(std::span<const std::byte> bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t triple = 0;
    for (size_t j = 0; j < 3; ++j) {
      triple <<= 8;
      if (j < n) triple |= std::to_integer<uint32_t>(bytes[i + j]);
    }
    for (size_t j = 0; j < 4; ++j) {
      text.push_back(j <= n ? kAlphabet[(triple >> (18 - 6 * j)) & 63] : '=');
    }
  }
  return text;
}

std::optional<std::vector<std::byte>> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::vector<std::byte> bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    size_t padding = 0;
    uint32_t quad = 0;
    for (size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && last && j >= 2) {
        ++padding;
        quad <<= 6;
        continue;
      }
      const int sextet = SextetOf(c);
      if (sextet < 0 || padding > 0) return std::nullopt;
      quad = (quad << 6) | static_cast<uint32_t>(sextet);
    }
    for (size_t j = 0; j < 3 - padding; ++j) {
      bytes.push_back(static_cast<std::byte>((quad >> (16 - 8 * j)) & 0xff));
    }
  }
  return bytes;
}

}  // namespace mooncake_tier::cli
