// Fuzzes what a storage node reads back from its SSD at start-up: the record
// decoder (node/ssd_record.h), the file scanner (node/ssd_file_scanner.h)
// and the recovery that SsdStore::Open runs over every data file
// (node/ssd_store_recovery.cc), on the in-memory device
// (node/memory_ssd_device.h).
//
// Input: [flags: 1 byte][file 1][kFileSeparator][file 2]... (at most
// kMaxFiles files, named 000001.data, 000002.data, ...). Flags:
//   bit 0 (kSeal): before the files are written, every record header found
//     on a 512-byte sector gets correct checksums (header and, when the
//     record fits, record checksum), so that mutations reach the logic
//     behind the checksums (sequences, tombstone lists, groups, lengths)
//     instead of stopping at a checksum mismatch;
//   bit 1 (kUnaligned): a device without O_DIRECT's alignment rule (the
//     default is the 4096-byte rule of the production device).
//
// Properties checked (docs/design/ssd-store.md, node/ssd_store.h):
//   - Open succeeds whatever the files hold (damage is counted, never an
//     error: the device itself never fails here);
//   - the index is consistent: stats agree with the inventory, every key
//     and group listed is valid, and every listed record reads back whole
//     with the size listed and without a checksum failure;
//   - a key reported corrupt is not listed;
//   - compaction does not change what is listed, and opening the files
//     again lists the same (recovery is idempotent). Not checked on sealed
//     inputs: sealing forges records no store writes (two different records
//     of one key with one sequence number, sequences at UINT64_MAX), whose
//     winner may depend on the order of the files.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/align.h"
#include "base/coding.h"
#include "core/validation.h"
#include "fuzz/fuzz_support.h"
#include "node/aligned_buffer.h"
#include "node/memory_ssd_device.h"
#include "node/ssd_record.h"
#include "node/ssd_store.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

namespace mooncake_tier::fuzz {
namespace {

constexpr size_t kMaxInputBytes = (1 << 20) + 64;
constexpr size_t kMaxFiles = 4;
constexpr std::string_view kFileSeparator = "MTFZ|NXT";
constexpr uint8_t kSeal = 1u << 0;
constexpr uint8_t kUnaligned = 1u << 1;
constexpr uint64_t kBlock = SsdRecord::kAlignment;
constexpr uint64_t kSector = SsdRecord::kSmallAlignment;

[[maybe_unused]] const bool kSilenced = SilenceLogs();

// Gives every header-looking record on a sector the checksums a writer
// would have given it (layout: docs/design/ssd-store.md, "Header").
void Seal(std::vector<std::byte>& file) {
  for (uint64_t at = 0; at + SsdRecord::kHeaderBytes <= file.size();
       at += kSector) {
    std::byte* p = file.data() + at;
    const uint64_t room = file.size() - at;
    if (DecodeFixed<uint32_t>(p) != SsdRecord::kMagic) continue;
    const uint32_t key_len = DecodeFixed<uint32_t>(p + 8);
    const uint32_t group_id_len = DecodeFixed<uint32_t>(p + 12);
    const uint64_t value_len = DecodeFixed<uint64_t>(p + 24);
    if (key_len > kMaxKeyBytes || group_id_len > kMaxGroupIdBytes) continue;
    const uint64_t meta = SsdRecord::kHeaderBytes + key_len + group_id_len;
    if (meta > room) continue;
    XXH3_state_t state;
    if (value_len <= room) {
      const uint64_t value_at = value_len >= SsdRecord::kAlignedValueMinBytes
                                    ? AlignUp(meta, kBlock)
                                    : meta;
      if (value_at + value_len <= room) {
        XXH3_64bits_reset(&state);
        XXH3_64bits_update(&state, p, 48);
        XXH3_64bits_update(&state, p + SsdRecord::kHeaderBytes,
                           meta - SsdRecord::kHeaderBytes);
        XXH3_64bits_update(&state, p + value_at, value_len);
        EncodeFixed<uint64_t>(p + 48, XXH3_64bits_digest(&state));
      }
    }
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, p, 56);
    XXH3_64bits_update(&state, p + SsdRecord::kHeaderBytes,
                       meta - SsdRecord::kHeaderBytes);
    EncodeFixed<uint64_t>(p + 56, XXH3_64bits_digest(&state));
  }
}

// The input's files, as the device is to hold them.
std::vector<std::vector<std::byte>> SplitFiles(std::string_view rest) {
  std::vector<std::vector<std::byte>> files;
  while (true) {
    const size_t cut = files.size() + 1 < kMaxFiles ? rest.find(kFileSeparator)
                                                    : std::string_view::npos;
    const std::string_view file = rest.substr(0, cut);
    const auto* bytes = reinterpret_cast<const std::byte*>(file.data());
    files.emplace_back(bytes, bytes + file.size());
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + kFileSeparator.size());
  }
  return files;
}

void WriteFile(SsdDevice& device, const std::string& name,
               const std::vector<std::byte>& bytes) {
  Result<std::unique_ptr<SsdFile>> file = device.Open(name, /*create=*/true);
  FUZZ_CHECK(file.ok(), "the memory device creates a file");
  if (bytes.empty()) return;
  // Whole blocks from an aligned buffer (O_DIRECT's rule), then cut to size.
  AlignedBuffer buffer(AlignUp(bytes.size(), kBlock));
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  std::memset(buffer.data() + bytes.size(), 0, buffer.size() - bytes.size());
  IoRequest request{0, buffer.data(), buffer.size(), 0};
  FUZZ_CHECK((*file)->WriteBatch({&request, 1}).ok(),
             "the memory device writes a file");
  FUZZ_CHECK((*file)->Truncate(bytes.size()).ok(),
             "the memory device truncates a file");
}

// The decoder alone, on a record at the start of `bytes`.
void CheckDecode(std::span<const std::byte> bytes) {
  Result<SsdRecord> record = SsdRecord::Decode(bytes);
  if (!record.ok()) {
    const ErrorReason why = record.status().reason();
    FUZZ_CHECK(why == ErrorReason::kTornRecord ||
                   why == ErrorReason::kChecksumMismatch,
               "a record that does not decode is torn or damaged");
    return;
  }
  FUZZ_CHECK(ValidateKey(record->key()).ok(), "a decoded key is valid");
  if (record->group()) {
    FUZZ_CHECK(ValidateGroupSpec(*record->group()).ok(),
               "a decoded group is valid");
  }
  FUZZ_CHECK(record->meta_bytes() <= bytes.size(),
             "a decoded header lies within what was read");
  FUZZ_CHECK(record->value_offset() >= record->meta_bytes(),
             "a value starts after its header");
  FUZZ_CHECK(record->size() >= record->value_offset() + record->value_len(),
             "a record holds its value");
  FUZZ_CHECK(
      record->size() % (record->block_aligned() ? kBlock : record->granule()) ==
          0,
      "a record is whole granules or blocks");
  if (!record->tombstone_list() || record->size() > bytes.size()) return;
  Result<std::vector<SsdRecord::Removal>> removed = record->Removals(
      bytes.subspan(record->value_offset(), record->value_len()));
  if (!removed.ok()) return;
  FUZZ_CHECK(!removed->empty() && removed->front().key == record->key(),
             "a tombstone list starts with its own removal");
  for (const SsdRecord::Removal& r : *removed) {
    FUZZ_CHECK(!r.key.empty() && r.key.size() <= kMaxKeyBytes,
               "a listed removal names a key");
  }
}

// What a store lists: key -> (value size, group).
using Listing =
    std::map<std::string, std::pair<uint64_t, std::optional<GroupSpec>>>;

// Checks the store's index against its stats and its reads; returns it.
Listing CheckStore(SsdStore& store) {
  const std::vector<std::string> corrupt = store.TakeCorruptKeys();
  const SsdStoreStats before = store.stats();
  const std::vector<SsdRecordInfo> inventory = store.Inventory();
  FUZZ_CHECK(before.live_records == inventory.size(),
             "stats count every listed record");
  Listing listing;
  uint64_t live_bytes = 0;
  std::vector<std::byte> buffer;
  for (const SsdRecordInfo& info : inventory) {
    FUZZ_CHECK(ValidateKey(info.key).ok(), "a listed key is valid");
    if (info.group) {
      FUZZ_CHECK(ValidateGroupSpec(*info.group).ok(),
                 "a listed group is valid");
    }
    FUZZ_CHECK(store.ValueSize(info.key) == info.size,
               "a listed key has its listed size");
    buffer.resize(info.size);
    Result<uint64_t> read = store.Get(info.key, buffer);
    FUZZ_CHECK(read.ok(), "a listed record reads back");
    FUZZ_CHECK(*read == info.size, "a listed record reads back whole");
    live_bytes += info.size;
    FUZZ_CHECK(
        listing.emplace(info.key, std::make_pair(info.size, info.group)).second,
        "a key is listed once");
  }
  FUZZ_CHECK(before.live_bytes == live_bytes,
             "stats count every listed value byte");
  FUZZ_CHECK(store.stats().corrupt_records == before.corrupt_records,
             "a record the scan found intact reads back intact");
  for (const std::string& key : corrupt) {
    FUZZ_CHECK(!listing.contains(key), "a key reported corrupt is not listed");
  }
  return listing;
}

std::unique_ptr<SsdStore> OpenStore(const MemorySsdDevice& files) {
  SsdStoreOptions options;
  options.capacity_bytes = 64ull << 20;
  options.max_file_bytes = 1ull << 20;
  Result<std::unique_ptr<SsdStore>> store =
      SsdStore::Open(files.Reopen(), options);
  FUZZ_CHECK(store.ok(), "recovery opens any file contents");
  return std::move(*store);
}

void RunOne(const uint8_t* data, size_t size) {
  if (size == 0 || size > kMaxInputBytes) return;
  const uint8_t flags = data[0];
  std::vector<std::vector<std::byte>> files =
      SplitFiles(AsText(data + 1, size - 1));
  MemorySsdDevice device((flags & kUnaligned) ? 1 : kBlock);
  for (size_t i = 0; i < files.size(); ++i) {
    if (flags & kSeal) Seal(files[i]);
    CheckDecode(files[i]);
    char name[32];
    std::snprintf(name, sizeof(name), "%06zu.data", i + 1);
    WriteFile(device, name, files[i]);
  }

  std::unique_ptr<SsdStore> store = OpenStore(device);
  const Listing opened = CheckStore(*store);
  const bool forged = (flags & kSeal) != 0;
  // Compaction moves live records and drops dead ones: a few steps, with
  // the bar a waiting put would use.
  for (int step = 0; step < 4; ++step) {
    Result<bool> worked = store->CompactStep(SsdStore::kUrgentDeadRatio);
    FUZZ_CHECK(worked.ok(), "compaction of recovered files succeeds");
    if (!*worked) break;
  }
  const Listing compacted = CheckStore(*store);
  FUZZ_CHECK(forged || compacted == opened, "compaction keeps every record");
  store.reset();
  store = OpenStore(device);
  const Listing reopened = CheckStore(*store);
  FUZZ_CHECK(forged || reopened == opened,
             "a second recovery lists what the first did");
}

}  // namespace
}  // namespace mooncake_tier::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mooncake_tier::fuzz::RunOne(data, size);
  return 0;
}
