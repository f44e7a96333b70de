// Fuzzes the shared-memory locator envelope that rides in a segment's
// remote key (transport/shm_locator.h): DecodeRemoteKey takes bytes the
// master relays from a node, and what it lets through reaches UCX's
// unpacker (which trusts its input) or the shared-memory mapper.
//
// Properties checked on every input:
//   - a raw key (no magic) comes back whole, with no locator;
//   - an accepted envelope yields a non-empty UCX key that views the input
//     (its tail), and either a locator or a reason why it was ignored;
//   - an accepted locator has the fields the mapper relies on (host
//     identity, pid, descriptor, offset within the file), and encoding it
//     again gives the same bytes (reserved field aside);
//   - a refused envelope started with the magic.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "transport/shm_locator.h"

namespace mooncake_tier::fuzz {
namespace {

constexpr size_t kMaxInputBytes = 64 << 10;

[[maybe_unused]] const bool kSilenced = SilenceLogs();

bool StartsWithMagic(std::string_view bytes) {
  if (bytes.size() < 8) return false;
  uint64_t magic = 0;
  for (size_t i = 0; i < 8; ++i) {
    magic |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  }
  return magic == kShmEnvelopeMagic;
}

void CheckOne(std::string_view input) {
  Result<DecodedRemoteKey> decoded = DecodeRemoteKey(input);
  if (!StartsWithMagic(input)) {
    FUZZ_CHECK(decoded.ok(), "a raw UCX key is never refused");
    FUZZ_CHECK(decoded->ucx_key == input, "a raw key comes back whole");
    FUZZ_CHECK(!decoded->locator && decoded->ignored_locator.empty(),
               "a raw key carries no locator");
    return;
  }
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.status().reason() == ErrorReason::kInvalidArgument,
               "a broken envelope is INVALID_ARGUMENT");
    return;
  }
  const std::string_view key = decoded->ucx_key;
  FUZZ_CHECK(!key.empty(), "an envelope never yields an empty UCX key");
  FUZZ_CHECK(key.data() >= input.data() &&
                 key.data() + key.size() == input.data() + input.size(),
             "the UCX key is the envelope's tail");
  FUZZ_CHECK(decoded->locator.has_value() != !decoded->ignored_locator.empty(),
             "a locator is either taken or ignored with a reason");
  if (!decoded->locator) return;
  const ShmLocator& locator = *decoded->locator;
  FUZZ_CHECK(locator.boot_id != BootId{}, "a locator names its host");
  FUZZ_CHECK(locator.pid != 0 && locator.fd >= 0,
             "a locator names a process and a descriptor");
  FUZZ_CHECK(locator.file_size > 0 && locator.file_offset <= locator.file_size,
             "a locator's segment starts within its file");
  FUZZ_CHECK(ShmFileName(locator.token).size() == kShmNamePrefix.size() + 32,
             "a token names a file");

  // Encoding what was decoded gives the input back, but for the reserved
  // field (bytes 10..12), which readers ignore.
  std::string again = EncodeShmEnvelope(locator, key);
  std::string expected(input);
  expected[10] = expected[11] = 0;
  FUZZ_CHECK(again == expected, "a decoded envelope encodes to its bytes");
  Result<DecodedRemoteKey> twice = DecodeRemoteKey(again);
  FUZZ_CHECK(
      twice.ok() && twice->locator == decoded->locator && twice->ucx_key == key,
      "an encoded envelope decodes to what it was made of");
}

}  // namespace
}  // namespace mooncake_tier::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > mooncake_tier::fuzz::kMaxInputBytes) return 0;
  mooncake_tier::fuzz::CheckOne(mooncake_tier::fuzz::AsText(data, size));
  return 0;
}
