#pragma once

// The 64-bit finaliser of MurmurHash3: a bijection whose every input bit
// reaches every output bit, so that structured hashes (sequential ids)
// spread like random ones where their bits pick rows or samples.
//
// Thread safety: a pure function.

#include <cstdint>

namespace mooncake_tier {

constexpr uint64_t MixHash(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace mooncake_tier
