// SsdStore behaviour, run against MemorySsdDevice (with and without an
// alignment rule) and UringSsdDevice in a temp dir (with and without
// O_DIRECT). Damage is done through a second device over the same files.

#include "node/ssd_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <thread>

#include "node/aligned_buffer.h"
#include "node/memory_ssd_device.h"
#include "node/ssd_record.h"
#include "node/uring_ssd_device.h"

namespace mooncake_tier {
namespace {

enum class Kind { kMemory, kMemoryAligned, kUring, kUringDirect };

std::string KindName(const testing::TestParamInfo<Kind>& info) {
  switch (info.param) {
    case Kind::kMemory: return "Memory";
    case Kind::kMemoryAligned: return "MemoryAligned";
    case Kind::kUring: return "Uring";
    case Kind::kUringDirect: return "UringDirect";
  }
  return "?";
}

std::vector<std::byte> Value(size_t n, uint64_t seed) {
  std::vector<std::byte> v(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v[i] = std::byte(static_cast<uint8_t>(x));
  }
  return v;
}

uint64_t RecordBytes(std::string_view key, size_t len,
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
    EXPECT_TRUE(std::equal(value.begin(), value.end(), other.begin() + 1)) << key;
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
    std::erase_if(names, [](const std::string& n) { return !n.ends_with(".data"); });
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

TEST_P(SsdStoreTest, RoundTripsValuesOfManySizes) {
  Open();
  const std::vector<size_t> sizes = {0,     1,     100,   3000,  4096,
                                     5000,  65535, 65536, 65537, 200000,
                                     (1 << 20) + 3};
  uint64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Put("k" + std::to_string(i), Value(sizes[i], i));
    total += sizes[i];
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string key = "k" + std::to_string(i);
    ExpectValue(key, Value(sizes[i], i));
    EXPECT_EQ(store_->ValueSize(key), sizes[i]);
  }
  const SsdStoreStats stats = store_->stats();
  EXPECT_EQ(stats.live_records, sizes.size());
  EXPECT_EQ(stats.live_bytes, total);
  EXPECT_EQ(stats.records_written, sizes.size());
  EXPECT_EQ(stats.bytes_written, total);
  EXPECT_EQ(stats.records_read, 2 * sizes.size());
  EXPECT_GE(stats.file_bytes, total);
  EXPECT_EQ(stats.file_bytes % 4096, 0u);
}

TEST_P(SsdStoreTest, BatchesReportPerEntryStatus) {
  Open();
  const std::vector<std::byte> v = Value(10, 1);
  const std::string long_key(kMaxKeyBytes + 1, 'x');
  const std::string nul_key("a\0b", 3);
  const std::vector<SsdWrite> writes = {
      {"good1", std::nullopt, v},
      {"", std::nullopt, v},
      {long_key, std::nullopt, v},
      {nul_key, std::nullopt, v},
      {"bad-group", GroupSpec{"g", 2, 2}, v},
      {"good2", GroupSpec{"g", 2, 1}, v},
  };
  const std::vector<Status> put = store_->PutBatch(writes);
  ASSERT_EQ(put.size(), writes.size());
  EXPECT_TRUE(put[0].ok());
  EXPECT_EQ(put[1].reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(put[2].reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(put[3].reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(put[4].reason(), ErrorReason::kInvalidGroup);
  EXPECT_TRUE(put[5].ok());
  EXPECT_EQ(store_->stats().live_records, 2u);

  std::vector<std::byte> b0(10), b1(10), b2(10), small(3);
  std::vector<SsdRead> reads(4);
  reads[0].key = "good1", reads[0].buffer = b0;
  reads[1].key = "missing", reads[1].buffer = b1;
  reads[2].key = "", reads[2].buffer = b2;
  reads[3].key = "good2", reads[3].buffer = small;
  store_->ReadBatch(reads);
  EXPECT_TRUE(reads[0].status.ok());
  EXPECT_EQ(reads[0].size, 10u);
  EXPECT_TRUE(b0 == v);
  EXPECT_EQ(reads[1].status.reason(), ErrorReason::kObjectNotFound);
  EXPECT_EQ(reads[2].status.reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(reads[3].status.reason(), ErrorReason::kBufferTooSmall);
  EXPECT_EQ(reads[3].size, 10u);

  const std::vector<std::string_view> keys = {"good1", "missing", "", "good1"};
  const std::vector<Status> removed = store_->RemoveBatch(keys);
  EXPECT_TRUE(removed[0].ok());
  EXPECT_EQ(removed[1].reason(), ErrorReason::kObjectNotFound);
  EXPECT_EQ(removed[2].reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(removed[3].reason(), ErrorReason::kObjectNotFound);
  EXPECT_EQ(ReadReason("good1"), ErrorReason::kObjectNotFound);
}

TEST_P(SsdStoreTest, OverwriteServesTheNewValueAlsoAfterReopen) {
  Open();
  Put("k", Value(5000, 1));
  Put("k", Value(70000, 2), GroupSpec{"g", 3, 0});
  // Within one batch the later write wins.
  const std::vector<std::byte> a = Value(10, 3), b = Value(20, 4);
  const std::vector<SsdWrite> writes = {{"d", std::nullopt, a},
                                        {"d", std::nullopt, b}};
  for (const Status& s : store_->PutBatch(writes)) EXPECT_TRUE(s.ok());
  ExpectValue("k", Value(70000, 2));
  ExpectValue("d", b);
  EXPECT_EQ(store_->stats().live_records, 2u);
  EXPECT_EQ(store_->stats().live_bytes, 70020u);
  Reopen();
  ExpectValue("k", Value(70000, 2));
  ExpectValue("d", b);
  const std::vector<SsdRecordInfo> inventory = store_->Inventory();
  ASSERT_EQ(inventory.size(), 2u);
}

TEST_P(SsdStoreTest, RemovedKeysStayRemovedAfterReopen) {
  Open();
  Put("a", Value(100, 1));
  Put("b", Value(100, 2));
  Put("c", Value(100, 3));
  ASSERT_TRUE(store_->Remove("a").ok());
  EXPECT_EQ(store_->Remove("a").reason(), ErrorReason::kObjectNotFound);
  ASSERT_TRUE(store_->Remove("c").ok());
  Put("c", Value(50, 4));  // back again after a remove
  Reopen();
  EXPECT_EQ(ReadReason("a"), ErrorReason::kObjectNotFound);
  ExpectValue("b", Value(100, 2));
  ExpectValue("c", Value(50, 4));
  Reopen();
  EXPECT_EQ(ReadReason("a"), ErrorReason::kObjectNotFound);
  EXPECT_EQ(store_->stats().live_records, 2u);
}

TEST_P(SsdStoreTest, ReopenRestoresEveryRecordAndItsGroup) {
  options_.max_file_bytes = 64 << 10;  // many files
  Open();
  std::map<std::string, std::pair<size_t, std::optional<GroupSpec>>> want;
  for (int i = 0; i < 60; ++i) {
    const std::string key = "obj/" + std::to_string(i);
    std::optional<GroupSpec> group;
    if (i % 3 == 0) group = GroupSpec{"grp" + std::to_string(i / 6), 2, static_cast<uint32_t>(i / 3 % 2)};
    const size_t size = static_cast<size_t>(i) * 997 % 20000;
    Put(key, Value(size, i), group);
    want[key] = {size, group};
  }
  EXPECT_GT(DataFiles().size(), 5u);
  Reopen();
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
  EXPECT_EQ(store_->stats().torn_records, 0u);
  std::vector<SsdRecordInfo> inventory = store_->Inventory();
  ASSERT_EQ(inventory.size(), want.size());
  for (const SsdRecordInfo& info : inventory) {
    ASSERT_TRUE(want.contains(info.key)) << info.key;
    EXPECT_EQ(info.size, want[info.key].first);
    EXPECT_EQ(info.group, want[info.key].second) << info.key;
  }
  for (int i = 0; i < 60; ++i) {
    const std::string key = "obj/" + std::to_string(i);
    ExpectValue(key, Value(want[key].first, i));
  }
  // New writes after a reopen go to a fresh file and survive the next one.
  Put("after", Value(123, 9));
  Reopen();
  ExpectValue("after", Value(123, 9));
  EXPECT_EQ(store_->stats().live_records, 61u);
}

TEST_P(SsdStoreTest, TornTailIsCutAndEarlierRecordsSurvive) {
  Open();
  uint64_t end_of_fourth = 0;
  for (int i = 0; i < 5; ++i) {
    const std::string key = "r" + std::to_string(i);
    Put(key, Value(20000, i));
    if (i < 4) end_of_fourth += RecordBytes(key, 20000);
  }
  const std::vector<std::string> files = DataFiles();
  ASSERT_EQ(files.size(), 1u);
  store_.reset();  // as if killed: nothing more is written
  // The last record was half written.
  Truncate(files[0], end_of_fourth + RecordBytes("r4", 20000) / 2 + 100);
  Open();
  for (int i = 0; i < 4; ++i) ExpectValue("r" + std::to_string(i), Value(20000, i));
  EXPECT_EQ(ReadReason("r4"), ErrorReason::kObjectNotFound);
  EXPECT_EQ(store_->stats().torn_records, 1u);
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
  EXPECT_EQ(FileSize(files[0]), end_of_fourth);
  Reopen();  // nothing torn any more
  EXPECT_EQ(store_->stats().torn_records, 0u);
  EXPECT_EQ(store_->stats().live_records, 4u);
}

TEST_P(SsdStoreTest, TornHeaderAtTheTailIsCut) {
  Open();
  Put("a", Value(100, 1));
  Put("b", Value(100, 2));
  const std::string file = DataFiles()[0];
  store_.reset();
  Truncate(file, 4096 + 30);  // b's header cut short
  Open();
  ExpectValue("a", Value(100, 1));
  EXPECT_EQ(ReadReason("b"), ErrorReason::kObjectNotFound);
  EXPECT_EQ(store_->stats().torn_records, 1u);
  EXPECT_EQ(FileSize(file), 4096u);
}

TEST_P(SsdStoreTest, FlippedValueByteIsCaughtOnReadAndNeverServed) {
  Open();
  Put("old", Value(1000, 1));
  Put("k", Value(1000, 2));       // record at 4096
  Put("k", Value(100000, 3));     // record at 8192, overwrites
  Put("other", Value(100, 4));
  const std::string file = DataFiles()[0];
  const uint64_t value_at = 8192 + SsdRecord::Value("k", std::nullopt, 100000, 0).value_offset();
  FlipByte(file, value_at + 54321);
  EXPECT_EQ(ReadReason("k"), ErrorReason::kChecksumMismatch);
  EXPECT_EQ(store_->stats().corrupt_records, 1u);
  // Neither the damaged record nor the older version is served.
  EXPECT_EQ(ReadReason("k"), ErrorReason::kObjectNotFound);
  EXPECT_EQ(store_->ValueSize("k"), std::nullopt);
  EXPECT_EQ(store_->TakeCorruptKeys(), std::vector<std::string>{"k"});
  EXPECT_TRUE(store_->TakeCorruptKeys().empty());
  ExpectValue("old", Value(1000, 1));
  ExpectValue("other", Value(100, 4));
  Reopen();
  EXPECT_EQ(ReadReason("k"), ErrorReason::kObjectNotFound);
  EXPECT_TRUE(store_->TakeCorruptKeys().empty());  // its tombstone is newer
  ExpectValue("other", Value(100, 4));
}

TEST_P(SsdStoreTest, DamagedRecordIsFoundByTheReopenScan) {
  Open();
  Put("v1", Value(300, 1));
  Put("x", Value(300, 2));  // record at 4096
  Put("x", Value(300, 3));  // record at 8192
  Put("y", Value(300, 4));
  const std::string file = DataFiles()[0];
  store_.reset();
  FlipByte(file, 8192 + 200);  // in the newer x's value
  Open();
  EXPECT_EQ(store_->stats().corrupt_records, 1u);
  EXPECT_EQ(store_->TakeCorruptKeys(), std::vector<std::string>{"x"});
  EXPECT_EQ(ReadReason("x"), ErrorReason::kObjectNotFound);  // not the old one
  ExpectValue("y", Value(300, 4));
  Reopen();
  EXPECT_EQ(ReadReason("x"), ErrorReason::kObjectNotFound);
  ExpectValue("v1", Value(300, 1));
}

TEST_P(SsdStoreTest, FlippedHeaderByteIsSkippedAndTheScanResyncs) {
  Open();
  for (int i = 0; i < 4; ++i) Put("h" + std::to_string(i), Value(10000, i));
  const uint64_t record = RecordBytes("h0", 10000);
  const std::string file = DataFiles()[0];
  store_.reset();
  FlipByte(file, record + 33);  // h1's sequence number
  Open();
  EXPECT_EQ(store_->stats().corrupt_records, 1u);
  EXPECT_EQ(store_->stats().torn_records, 0u);
  ExpectValue("h0", Value(10000, 0));
  EXPECT_EQ(ReadReason("h1"), ErrorReason::kObjectNotFound);
  ExpectValue("h2", Value(10000, 2));  // found again past the damage
  ExpectValue("h3", Value(10000, 3));
}

TEST_P(SsdStoreTest, CompactionKeepsLiveDataAndReclaimsSpace) {
  options_.max_file_bytes = 64 << 10;  // 8 records of 8 KiB per file
  Open();
  for (int i = 0; i < 48; ++i) Put("c" + std::to_string(i), Value(8000, i));
  // Kill most of the first three files: overwrite some, remove others.
  for (int i = 0; i < 24; ++i) {
    if (i % 4 == 0) continue;
    if (i % 2 == 0) {
      Put("c" + std::to_string(i), Value(8000, 100 + i));
    } else {
      ASSERT_TRUE(store_->Remove("c" + std::to_string(i)).ok());
    }
  }
  const SsdStoreStats before = store_->stats();
  int steps = 0;
  while (true) {
    Result<bool> worked = store_->CompactStep();
    ASSERT_TRUE(worked.ok()) << worked.status().ToString();
    if (!*worked) break;
    ASSERT_LT(++steps, 100);
  }
  const SsdStoreStats after = store_->stats();
  EXPECT_GE(after.compactions, 3u);
  EXPECT_GT(after.compacted_bytes_reclaimed, 0u);
  EXPECT_LT(after.file_bytes, before.file_bytes);
  EXPECT_EQ(after.live_records, before.live_records);
  auto check = [&] {
    for (int i = 0; i < 48; ++i) {
      const std::string key = "c" + std::to_string(i);
      if (i < 24 && i % 4 != 0 && i % 2 == 1) {
        EXPECT_EQ(ReadReason(key), ErrorReason::kObjectNotFound) << key;
      } else if (i < 24 && i % 4 != 0) {
        ExpectValue(key, Value(8000, 100 + i));
      } else {
        ExpectValue(key, Value(8000, i));
      }
    }
  };
  check();
  Reopen();
  check();
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
}

TEST_P(SsdStoreTest, CompactionSkipsFilesBelowTheDeadRatio) {
  options_.max_file_bytes = 64 << 10;
  Open();
  for (int i = 0; i < 16; ++i) Put("s" + std::to_string(i), Value(8000, i));
  ASSERT_TRUE(store_->Remove("s0").ok());  // 1 of 8 dead in the first file
  EXPECT_FALSE(store_->CompactStep().value());
  EXPECT_EQ(store_->stats().compactions, 0u);
}

TEST_P(SsdStoreTest, NoSpaceChangesNothingAndCompactionMakesRoom) {
  options_.capacity_bytes = 1 << 20;
  options_.max_file_bytes = 64 << 10;  // 8 records of 8 KiB per file
  Open();
  const uint64_t limit = store_->stats().put_limit_bytes;
  ASSERT_LT(limit, options_.capacity_bytes);
  const uint64_t fit = limit / 8192;
  for (uint64_t i = 0; i < fit; ++i) Put("n" + std::to_string(i), Value(8000, i));
  const SsdStoreStats full = store_->stats();
  EXPECT_EQ(store_->Put("extra", Value(8000, 1)).reason(), ErrorReason::kNoSpace);
  const std::vector<std::byte> v = Value(100, 7);
  const std::vector<SsdWrite> batch = {{"e1", std::nullopt, v},
                                       {"", std::nullopt, v}};
  const std::vector<Status> statuses = store_->PutBatch(batch);
  EXPECT_EQ(statuses[0].reason(), ErrorReason::kNoSpace);
  EXPECT_EQ(statuses[1].reason(), ErrorReason::kInvalidKey);
  const SsdStoreStats still = store_->stats();
  EXPECT_EQ(still.file_bytes, full.file_bytes);
  EXPECT_EQ(still.live_records, full.live_records);
  EXPECT_EQ(still.records_written, full.records_written);
  EXPECT_EQ(ReadReason("extra"), ErrorReason::kObjectNotFound);
  EXPECT_LE(still.file_bytes, still.capacity_bytes);
  ExpectValue("n0", Value(8000, 0));

  // Removes still work when puts are refused; once a whole file is dead, a
  // put compacts it away and fits.
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(store_->Remove("n" + std::to_string(i)).ok()) << i;
  }
  Put("extra", Value(8000, 1));
  EXPECT_GE(store_->stats().compactions, 1u);
  EXPECT_LE(store_->stats().file_bytes, options_.capacity_bytes);
  ExpectValue("extra", Value(8000, 1));
  ExpectValue("n8", Value(8000, 8));
  Reopen();
  EXPECT_EQ(ReadReason("n3"), ErrorReason::kObjectNotFound);
  ExpectValue("extra", Value(8000, 1));
}

TEST_P(SsdStoreTest, RecordLargerThanAFileGetsAFileOfItsOwn) {
  options_.max_file_bytes = 64 << 10;
  Open();
  Put("small", Value(100, 1));
  Put("big", Value(300000, 2));
  Put("small2", Value(100, 3));
  ExpectValue("big", Value(300000, 2));
  Reopen();
  ExpectValue("big", Value(300000, 2));
  ExpectValue("small2", Value(100, 3));
}

TEST_P(SsdStoreTest, IoFailuresAreReportedAndCounted) {
  if (!memory_) GTEST_SKIP() << "needs fault injection";
  Open();
  Put("a", Value(100, 1));
  memory_->FailIoForTest(true);
  EXPECT_EQ(store_->Put("b", Value(100, 2)).reason(), ErrorReason::kIoError);
  EXPECT_EQ(ReadReason("a"), ErrorReason::kIoError);
  memory_->FailIoForTest(false);
  EXPECT_EQ(store_->stats().write_errors, 1u);
  EXPECT_EQ(store_->stats().read_errors, 1u);
  EXPECT_EQ(ReadReason("b"), ErrorReason::kObjectNotFound);
  ExpectValue("a", Value(100, 1));  // an I/O error is not corruption
  Put("b", Value(100, 2));
  ExpectValue("b", Value(100, 2));
}

TEST_P(SsdStoreTest, OpenRejectsBadOptions) {
  options_.capacity_bytes = 0;
  EXPECT_EQ(SsdStore::Open(NewDevice(), options_).status().reason(),
            ErrorReason::kInvalidArgument);
}

// Writers, readers, a remover and compaction at once. Every value embeds its
// key and version, so a reader can tell a right value from a wrong one;
// after the run every key holds the last version its writer wrote.
TEST_P(SsdStoreTest, ConcurrentReadersWritersAndCompaction) {
  options_.max_file_bytes = 64 << 10;
  options_.compaction_min_dead_ratio = 0.3;
  Open();
  constexpr int kWriters = 2;
  constexpr int kKeysPerWriter = 16;
  constexpr int kRounds = 30;
  auto key_of = [](int w, int k) { return "w" + std::to_string(w) + "/" + std::to_string(k); };
  auto value_of = [](int w, int k, int version) {
    return Value(3000 + static_cast<size_t>(k) * 500, static_cast<uint64_t>(w * 100000 + k * 1000 + version));
  };
  std::atomic<bool> done{false};
  std::atomic<int> bad_reads{0};
  std::vector<std::vector<int>> last(kWriters, std::vector<int>(kKeysPerWriter, -1));
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < kRounds; ++round) {
        std::vector<std::vector<std::byte>> values;
        std::vector<std::string> keys;
        for (int k = 0; k < kKeysPerWriter; ++k) {
          keys.push_back(key_of(w, k));
          values.push_back(value_of(w, k, round));
        }
        std::vector<SsdWrite> batch;
        for (int k = 0; k < kKeysPerWriter; ++k) batch.push_back({keys[k], std::nullopt, values[k]});
        std::vector<Status> statuses = store_->PutBatch(batch);
        for (int k = 0; k < kKeysPerWriter; ++k) {
          if (statuses[k].ok()) last[w][k] = round;
        }
        if (round % 3 == 2) {
          const std::string key = key_of(w, round % kKeysPerWriter);
          if (store_->Remove(key).ok()) last[w][round % kKeysPerWriter] = -1;
        }
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937 rng(r);
      std::vector<std::byte> buffer(16 << 10);
      while (!done.load()) {
        const int w = static_cast<int>(rng() % kWriters);
        const int k = static_cast<int>(rng() % kKeysPerWriter);
        Result<uint64_t> got = store_->Get(key_of(w, k), buffer);
        if (!got.ok()) {
          if (got.status().reason() != ErrorReason::kObjectNotFound) ++bad_reads;
          continue;
        }
        bool matches = false;
        for (int v = 0; v < kRounds && !matches; ++v) {
          const std::vector<std::byte> want = value_of(w, k, v);
          matches = *got == want.size() &&
                    std::equal(want.begin(), want.end(), buffer.begin());
        }
        if (!matches) ++bad_reads;
      }
    });
  }
  threads.emplace_back([&] {
    while (!done.load()) {
      if (!store_->CompactStep().ok()) ++bad_reads;
      std::this_thread::yield();
    }
  });
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  done.store(true);
  for (size_t t = kWriters; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(bad_reads.load(), 0);
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
  auto check = [&] {
    for (int w = 0; w < kWriters; ++w) {
      for (int k = 0; k < kKeysPerWriter; ++k) {
        if (last[w][k] < 0) {
          EXPECT_EQ(ReadReason(key_of(w, k)), ErrorReason::kObjectNotFound);
        } else {
          ExpectValue(key_of(w, k), value_of(w, k, last[w][k]));
        }
      }
    }
  };
  check();
  while (store_->CompactStep().value()) {
  }
  EXPECT_GT(store_->stats().compactions, 0u);
  Reopen();
  check();
}

INSTANTIATE_TEST_SUITE_P(Devices, SsdStoreTest,
                         testing::Values(Kind::kMemory, Kind::kMemoryAligned,
                                         Kind::kUring, Kind::kUringDirect),
                         KindName);

}  // namespace
}  // namespace mooncake_tier
