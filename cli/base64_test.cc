#include "cli/base64.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace mooncake_tier::cli {
namespace {

std::vector<std::byte> Bytes(std::string_view text) {
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  return std::vector<std::byte>(data, data + text.size());
}

TEST(Base64Test, EncodesTheRfc4648Vectors) {
  EXPECT_EQ(Base64Encode(Bytes("")), "");
  EXPECT_EQ(Base64Encode(Bytes("f")), "Zg==");
  EXPECT_EQ(Base64Encode(Bytes("fo")), "Zm8=");
  EXPECT_EQ(Base64Encode(Bytes("foo")), "Zm9v");
  EXPECT_EQ(Base64Encode(Bytes("foob")), "Zm9vYg==");
  EXPECT_EQ(Base64Encode(Bytes("fooba")), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode(Bytes("foobar")), "Zm9vYmFy");
}

TEST(Base64Test, DecodeInvertsEncodeForEveryByte) {
  std::vector<std::byte> all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<std::byte>(i));
  for (size_t size = 0; size <= all.size(); size += 37) {
    std::vector<std::byte> bytes(all.begin(), all.begin() + size);
    EXPECT_EQ(Base64Decode(Base64Encode(bytes)), bytes) << size;
  }
}

TEST(Base64Test, DecodeRefusesMalformedText) {
  EXPECT_FALSE(Base64Decode("Zg=").has_value());       // not a multiple of 4
  EXPECT_FALSE(Base64Decode("Z!==").has_value());      // bad character
  EXPECT_FALSE(Base64Decode("Z===").has_value());      // too much padding
  EXPECT_FALSE(Base64Decode("Zg==Zg==").has_value());  // padding mid-text
  EXPECT_FALSE(Base64Decode("Zg=a").has_value());      // data after padding
}

}  // namespace
}  // namespace mooncake_tier::cli
