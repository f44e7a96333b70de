#pragma once

// A key with its hash computed once. The sharded tables (ObjectTable,
// GroupTable) pick a stripe with the top bits of the hash and hand the same
// hash to the stripe's flat_hash_map, whose probe uses the low bits, so a
// lookup hashes the key once instead of once for the stripe and once more
// for the map.
//
// Thread safety: a value; it borrows `key`, which must outlive it.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace mooncake_tier {

// The hash every string-keyed flat_hash_map in core uses for its keys.
inline size_t HashKey(std::string_view key) {
  return absl::flat_hash_map<std::string, int>::hasher{}(
      absl::string_view(key.data(), key.size()));
}

struct HashedKey {
  explicit HashedKey(std::string_view k) : key(k), hash(HashKey(k)) {}
  HashedKey(std::string_view k, size_t h) : key(k), hash(h) {}

  // The key as the maps' heterogeneous lookup wants it.
  absl::string_view view() const {
    return absl::string_view(key.data(), key.size());
  }

  std::string_view key;
  size_t hash;
};

// The stripe of `hash` among `stripes` (a power of two): the top bits, so
// the stripe index and the map's in-stripe position use different bits.
inline uint32_t StripeOf(size_t hash, size_t stripes) {
  return static_cast<uint32_t>((static_cast<uint64_t>(hash) >> 32) * stripes >>
                               32);
}

}  // namespace mooncake_tier
