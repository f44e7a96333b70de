// SsdStore behaviour: batches, overwrites, removes, compaction, capacity and
// concurrency, against every device kind (see ssd_store_test_fixture.h).

#include "node/ssd_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "node/ssd_store_test_fixture.h"

namespace mooncake_tier {
namespace ssd_store_test {
namespace {

using ssd_store_testing::AllDeviceKinds;
using ssd_store_testing::KindName;
using ssd_store_testing::RecordBytes;
using ssd_store_testing::SsdStoreTest;
using ssd_store_testing::Value;

TEST_P(SsdStoreTest, RoundTripsValuesOfManySizes) {
  Open();
  const std::vector<size_t> sizes = {
      0, 1, 100, 3000, 4096, 5000, 65535, 65536, 65537, 200000, (1 << 20) + 3};
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
  // One latency sample per batch that reached the device: each Put and Get
  // here is a batch of one.
  EXPECT_EQ(stats.write_latency.count, sizes.size());
  EXPECT_EQ(stats.read_latency.count, 2 * sizes.size());
  uint64_t in_buckets = 0;
  for (uint64_t n : stats.read_latency.buckets) in_buckets += n;
  EXPECT_EQ(in_buckets, stats.read_latency.count);
  // Neither does a put batch of invalid entries only.
  const std::vector<std::byte> v = Value(10, 1);
  const std::vector<SsdWrite> invalid = {{"", std::nullopt, v}};
  EXPECT_EQ(store_->PutBatch(invalid)[0].reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(store_->stats().write_latency.count, sizes.size());
  // A miss does no I/O and takes no sample.
  std::vector<std::byte> buffer(16);
  EXPECT_FALSE(store_->Get("absent", buffer).ok());
  EXPECT_EQ(store_->stats().read_latency.count, 2 * sizes.size());
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

// A tombstone must move with compaction while an older file still holds a
// record of its key, and may go once that file is gone.
TEST_P(SsdStoreTest, CompactionCarriesTombstonesWhileNeeded) {
  options_.max_file_bytes = 64 << 10;  // 8 records of 8 KiB per file
  Open();
  for (int i = 0; i < 8; ++i) Put("a" + std::to_string(i), Value(8000, i));
  ASSERT_TRUE(store_->Remove("a0").ok());  // tombstone opens file 2
  for (int i = 0; i < 7; ++i) Put("b" + std::to_string(i), Value(8000, 50 + i));
  for (int i = 0; i < 7; ++i) Put("b" + std::to_string(i), Value(8000, 60 + i));
  // File 2 is now dead but for the tombstone; file 1 still holds a0.
  ASSERT_TRUE(store_->CompactStep().value());
  Reopen();
  EXPECT_EQ(ReadReason("a0"), ErrorReason::kObjectNotFound);
  for (int i = 1; i < 8; ++i)
    ExpectValue("a" + std::to_string(i), Value(8000, i));
  for (int i = 0; i < 7; ++i) {
    ExpectValue("b" + std::to_string(i), Value(8000, 60 + i));
  }
  // Once file 1 is dead and compacted, nothing can bring a0 back.
  for (int i = 1; i < 8; ++i) Put("a" + std::to_string(i), Value(8000, 10 + i));
  while (store_->CompactStep().value()) {
  }
  Reopen();
  EXPECT_EQ(ReadReason("a0"), ErrorReason::kObjectNotFound);
  ExpectValue("a7", Value(8000, 17));
  EXPECT_EQ(store_->stats().live_records, 14u);
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
  // Records of 8000 bytes and their headers, packed: at least one per
  // 8 KiB of the limit.
  uint64_t fit = 0;
  while (store_->Put("n" + std::to_string(fit), Value(8000, fit)).ok()) ++fit;
  ASSERT_GE(fit, limit / 8192);
  const SsdStoreStats full = store_->stats();
  EXPECT_EQ(store_->Put("extra", Value(8000, 1)).reason(),
            ErrorReason::kNoSpace);
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
  // Refused put rounds wrote nothing, so they take no latency sample.
  EXPECT_EQ(full.write_latency.count, fit);
  EXPECT_EQ(still.write_latency.count, fit);
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

// The workload of the concurrency test: writers own disjoint keys and put
// numbered versions; a value starts with its version, so a reader can check
// any value it gets.
struct VersionedWorkload {
  static constexpr int kWriters = 2;
  static constexpr int kKeys = 16;
  static constexpr int kRounds = 30;

  static std::string Key(int w, int k) {
    return "w" + std::to_string(w) + "/" + std::to_string(k);
  }
  static std::vector<std::byte> ValueOf(int w, int k, int version) {
    std::vector<std::byte> v =
        Value(3000 + static_cast<size_t>(k) * 500,
              static_cast<uint64_t>(w * 100000 + k * 1000 + version));
    std::memcpy(v.data(), &version, sizeof(version));
    return v;
  }
  static bool Plausible(int w, int k, std::span<const std::byte> got) {
    int version = -1;
    if (got.size() < sizeof(version)) return false;
    std::memcpy(&version, got.data(), sizeof(version));
    if (version < 0 || version >= kRounds) return false;
    const std::vector<std::byte> want = ValueOf(w, k, version);
    return std::equal(want.begin(), want.end(), got.begin(), got.end());
  }

  // Puts every key of writer `w` once per round, removes one now and then;
  // `last` ends as each key's final version (-1: removed).
  static void Write(SsdStore& store, int w, std::vector<int>& last) {
    for (int round = 0; round < kRounds; ++round) {
      std::vector<std::string> keys;
      std::vector<std::vector<std::byte>> values;
      std::vector<SsdWrite> batch;
      for (int k = 0; k < kKeys; ++k) {
        keys.push_back(Key(w, k));
        values.push_back(ValueOf(w, k, round));
      }
      for (int k = 0; k < kKeys; ++k) {
        batch.push_back({keys[k], std::nullopt, values[k]});
      }
      const std::vector<Status> statuses = store.PutBatch(batch);
      for (int k = 0; k < kKeys; ++k) {
        if (statuses[k].ok()) last[k] = round;
      }
      if (round % 3 == 2 && store.Remove(Key(w, round % kKeys)).ok()) {
        last[round % kKeys] = -1;
      }
    }
  }

  // Reads random keys until `done`; returns how many reads went wrong.
  static int Read(SsdStore& store, unsigned seed,
                  const std::atomic<bool>& done) {
    std::mt19937 rng(seed);
    std::vector<std::byte> buffer(16 << 10);
    int bad = 0;
    while (!done.load()) {
      const int w = static_cast<int>(rng() % kWriters);
      const int k = static_cast<int>(rng() % kKeys);
      Result<uint64_t> got = store.Get(Key(w, k), buffer);
      if (!got.ok()) {
        bad += got.status().reason() != ErrorReason::kObjectNotFound;
      } else if (!Plausible(w, k, std::span(buffer).first(*got))) {
        ++bad;
      }
    }
    return bad;
  }
};

// Writers, readers, a remover and compaction at once; afterwards (and after
// a reopen) every key holds the last version its writer wrote.
TEST_P(SsdStoreTest, ConcurrentReadersWritersAndCompaction) {
  using W = VersionedWorkload;
  options_.max_file_bytes = 64 << 10;
  options_.compaction_min_dead_ratio = 0.3;
  Open();
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::vector<int>> last(W::kWriters,
                                     std::vector<int>(W::kKeys, -1));
  std::vector<std::thread> writers;
  std::vector<std::thread> others;
  for (int w = 0; w < W::kWriters; ++w) {
    writers.emplace_back([&, w] { W::Write(*store_, w, last[w]); });
  }
  for (unsigned r = 0; r < 2; ++r) {
    others.emplace_back([&, r] { bad += W::Read(*store_, r, done); });
  }
  others.emplace_back([&] {
    while (!done.load()) {
      if (!store_->CompactStep().ok()) ++bad;
      std::this_thread::yield();
    }
  });
  for (std::thread& t : writers) t.join();
  done.store(true);
  for (std::thread& t : others) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
  auto check = [&] {
    for (int w = 0; w < W::kWriters; ++w) {
      for (int k = 0; k < W::kKeys; ++k) {
        if (last[w][k] < 0) {
          EXPECT_EQ(ReadReason(W::Key(w, k)), ErrorReason::kObjectNotFound);
        } else {
          ExpectValue(W::Key(w, k), W::ValueOf(w, k, last[w][k]));
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
INSTANTIATE_TEST_SUITE_P(Devices, SsdStoreTest, AllDeviceKinds(), KindName);

}  // namespace
}  // namespace ssd_store_test
}  // namespace mooncake_tier
