#pragma once

// The fixture of the SsdStore tests: each test runs against MemorySsdDevice
// (with and without an alignment rule) and UringSsdDevice in a temp dir (with
// and without O_DIRECT). Restarts reopen the same files through a second
// device; damage is done through one too. Test-only.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "node/aligned_buffer.h"
#include "node/memory_ssd_device.h"
#include "node/ssd_record.h"
#include "node/ssd_store.h"
#include "node/uring_ssd_device.h"

namespace mooncake_tier::ssd_store_testing {

enum class Kind { kMemory, kMemoryAligned, kUring, kUringDirect };

inline std::string KindName(const testing::TestParamInfo<Kind>& info) {
  switch (info.param) {
    case Kind::kMemory:
      return "Memory";
    case Kind::kMemoryAligned:
      return "MemoryAligned";
    case Kind::kUring:
      return "Uring";
    case Kind::kUringDirect:
      return "UringDirect";
  }
  return "?";
}

inline std::vector<std::byte> Value(size_t n, uint64_t seed) {
  std::vector<std::byte> v(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v[i] = std::byte(static_cast<uint8_t>(x));
  }
  return v;
}

inline uint64_t RecordBytes(std::string_view key, size_t len,
                            std::optional<GroupSpec> group = {}) {
  return SsdRecord::Value(key, group, len, 0).size();
}

class SsdStoreTest : public testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    options_.capacity_bytes = 64ull << 20;
    options_.max_file_bytes = 1ull << 20;
    if (GetParam() == Kind::kMemory || GetParam() == Kind::kMemoryAligned) {
      memory_ = std::make_unique<MemorySsdDevice>(
          GetParam() == Kind::kMemoryAligned ? 4096 : 1);
      return;
    }
    std::string pattern =
        (std::filesystem::temp_directory_path() / "mt-ssd-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // A device over the store's files, as a restarted process would open.
  std::unique_ptr<SsdDevice> NewDevice() {
    if (memory_) return memory_->Reopen();
    UringSsdDeviceOptions options;
    options.direct_io = GetParam() == Kind::kUringDirect;
    return UringSsdDevice::Open(dir_, options).value();
  }
  void Open() {
    Result<std::unique_ptr<SsdStore>> store =
        SsdStore::Open(NewDevice(), options_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  void Reopen() {
    store_.reset();
    Open();
  }

  void Put(std::string_view key, const std::vector<std::byte>& value,
           std::optional<GroupSpec> group = {}) {
    Status status = store_->Put(key, value, std::move(group));
    ASSERT_TRUE(status.ok()) << key << ": " << status.ToString();
  }
  // The value of `key` read into an aligned buffer (the direct path where it
  // applies) and, again, into a misaligned one (the bounce path).
  Result<std::vector<std::byte>> Read(std::string_view key) {
    const std::optional<uint64_t> size = store_->ValueSize(key);
    AlignedBuffer aligned(std::max<uint64_t>(size.value_or(0), 1) + 4096);
    Result<uint64_t> got = store_->Get(key, aligned.span());
    if (!got.ok()) return got.status();
    std::vector<std::byte> value(aligned.data(), aligned.data() + *got);
    std::vector<std::byte> other(*got + 1);
    Result<uint64_t> again = store_->Get(key, std::span(other).subspan(1));
    if (!again.ok()) return again.status();
    EXPECT_TRUE(std::equal(value.begin(), value.end(), other.begin() + 1))
        << key;
    return value;
  }
  void ExpectValue(std::string_view key, const std::vector<std::byte>& want) {
    Result<std::vector<std::byte>> got = Read(key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString();
    EXPECT_TRUE(*got == want) << key << " differs";
  }
  ErrorReason ReadReason(std::string_view key) {
    std::vector<std::byte> buffer(4 << 20);
    return store_->Get(key, buffer).status().reason();
  }

  std::vector<std::string> DataFiles() {
    std::vector<std::string> names = NewDevice()->List().value();
    std::erase_if(names,
                  [](const std::string& n) { return !n.ends_with(".data"); });
    std::sort(names.begin(), names.end());
    return names;
  }
  uint64_t FileSize(const std::string& name) {
    return NewDevice()->Open(name, false).value()->Size().value();
  }
  void FlipByte(const std::string& name, uint64_t offset) {
    std::unique_ptr<SsdDevice> device = NewDevice();
    std::unique_ptr<SsdFile> file = device->Open(name, false).value();
    AlignedBuffer block(4096);
    const uint64_t base = offset / 4096 * 4096;
    IoRequest r{base, block.data(), 4096, 0};
    ASSERT_TRUE(file->ReadBatch({&r, 1}).ok());
    ASSERT_EQ(r.result, 4096);
    block.data()[offset - base] ^= std::byte{0x5a};
    IoRequest w{base, block.data(), 4096, 0};
    ASSERT_TRUE(file->WriteBatch({&w, 1}).ok());
  }
  void Truncate(const std::string& name, uint64_t size) {
    ASSERT_TRUE(NewDevice()->Open(name, false).value()->Truncate(size).ok());
  }

  SsdStoreOptions options_;
  std::string dir_;
  std::unique_ptr<MemorySsdDevice> memory_;
  std::unique_ptr<SsdStore> store_;
};

// Every device kind the store tests run against.
inline auto AllDeviceKinds() {
  return testing::Values(Kind::kMemory, Kind::kMemoryAligned, Kind::kUring,
                         Kind::kUringDirect);
}

}  // namespace mooncake_tier::ssd_store_testing
