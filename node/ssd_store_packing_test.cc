// Small records share blocks: a batch's records go back to back on
// 512-byte sectors, written as one run that ends on a block boundary, while
// values of 64 KiB and more keep blocks of their own. Checked on every
// device kind (the aligned ones refuse any O_DIRECT request off a block),
// across a reopen, with a run cut short by a crash and with a damaged
// record inside a run; files of format 1 (every record whole blocks) are
// still read.

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "node/ssd_record.h"
#include "node/ssd_store.h"
#include "node/ssd_store_test_fixture.h"

namespace mooncake_tier::ssd_store_testing {
namespace ssd_store_packing_test {
namespace {

constexpr uint64_t kBlock = SsdRecord::kAlignment;

std::string Key(int i) { return "kv-" + std::to_string(i); }

// Puts keys [first, first + n) with values of `len` bytes in one batch.
void PutBatch(SsdStore& store, int first, int n, size_t len) {
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> values;
  for (int i = first; i < first + n; ++i) {
    keys.push_back(Key(i));
    values.push_back(Value(len, static_cast<uint64_t>(i)));
  }
  std::vector<SsdWrite> writes;
  for (int i = 0; i < n; ++i) writes.push_back({keys[i], {}, values[i]});
  for (const Status& s : store.PutBatch(writes)) {
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
}

TEST_P(SsdStoreTest, ABatchOfSmallValuesSharesBlocks) {
  Open();
  constexpr int kCount = 64;
  constexpr size_t kLen = 16 << 10;
  PutBatch(*store_, 0, kCount, kLen);
  const uint64_t record = RecordBytes(Key(10), kLen);
  EXPECT_EQ(record % SsdRecord::kSmallAlignment, 0u);
  EXPECT_LT(record, kLen + 1024);  // a header and a key, not a block
  // The records back to back and one block's padding at most: before,
  // each took 20 KiB.
  const SsdStoreStats stats = store_->stats();
  EXPECT_LE(stats.file_bytes, kCount * RecordBytes(Key(10), kLen) + kBlock);
  EXPECT_EQ(stats.file_bytes % kBlock, 0u);
  EXPECT_EQ(stats.live_record_bytes, [&] {
    uint64_t sum = 0;
    for (int i = 0; i < kCount; ++i) sum += RecordBytes(Key(i), kLen);
    return sum;
  }());
  for (int i = 0; i < kCount; ++i) ExpectValue(Key(i), Value(kLen, i));
  Reopen();
  EXPECT_EQ(store_->stats().torn_records, 0u);  // padding is not damage
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
  for (int i = 0; i < kCount; ++i) ExpectValue(Key(i), Value(kLen, i));
}

TEST_P(SsdStoreTest, LargeValuesInAPackedBatchKeepTheirBlocks) {
  Open();
  // small, large, small, large: each large one starts on a block after
  // zeros that end the small one's run.
  const std::vector<size_t> sizes = {3000, 100000, 700, 300000, 16384, 1};
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> values;
  for (size_t i = 0; i < sizes.size(); ++i) {
    keys.push_back(Key(static_cast<int>(i)));
    values.push_back(Value(sizes[i], i + 100));
  }
  std::vector<SsdWrite> writes;
  for (size_t i = 0; i < sizes.size(); ++i) {
    writes.push_back({keys[i], {}, values[i]});
  }
  for (const Status& s : store_->PutBatch(writes)) {
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  for (size_t i = 0; i < sizes.size(); ++i) ExpectValue(keys[i], values[i]);
  Reopen();
  EXPECT_EQ(store_->stats().torn_records, 0u);
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
  for (size_t i = 0; i < sizes.size(); ++i) ExpectValue(keys[i], values[i]);
}

TEST_P(SsdStoreTest, ConcurrentBatchesNeverShareABlock) {
  // Two batches in flight at once each write whole blocks: were they to
  // share one, the later write would zero the other's records in it.
  Open();
  constexpr int kThreads = 4;
  constexpr int kBatches = 20;
  constexpr int kPerBatch = 5;
  constexpr size_t kLen = 1500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        PutBatch(*store_, (t * kBatches + b) * kPerBatch, kPerBatch, kLen);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  constexpr int kAll = kThreads * kBatches * kPerBatch;
  for (int i = 0; i < kAll; ++i) ExpectValue(Key(i), Value(kLen, i));
  Reopen();
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
  for (int i = 0; i < kAll; ++i) ExpectValue(Key(i), Value(kLen, i));
}

TEST_P(SsdStoreTest, ARunCutShortKeepsTheRecordsBeforeTheCut) {
  Open();
  constexpr size_t kLen = 5000;  // records of 5.5 KiB, off block bounds
  PutBatch(*store_, 0, 10, kLen);
  const uint64_t record = RecordBytes(Key(0), kLen);
  const std::string file = DataFiles()[0];
  store_.reset();
  // A crash while the run was written: it stops in the middle of the
  // fourth record (at a block boundary, as a device writes).
  const uint64_t cut = (3 * record + record / 2) / kBlock * kBlock;
  ASSERT_GT(cut, 3 * record);
  Truncate(file, cut);
  Open();
  EXPECT_EQ(store_->stats().torn_records, 1u);
  for (int i = 0; i < 3; ++i) ExpectValue(Key(i), Value(kLen, i));
  for (int i = 3; i < 10; ++i) {
    EXPECT_EQ(ReadReason(Key(i)), ErrorReason::kObjectNotFound) << i;
  }
  // Cut back to the last good record, then zeros to a block boundary.
  EXPECT_EQ(FileSize(file) % kBlock, 0u);
  EXPECT_LT(FileSize(file), 3 * record + kBlock);
  PutBatch(*store_, 20, 3, kLen);
  Reopen();
  EXPECT_EQ(store_->stats().torn_records, 0u);
  for (int i = 0; i < 3; ++i) ExpectValue(Key(i), Value(kLen, i));
  for (int i = 20; i < 23; ++i) ExpectValue(Key(i), Value(kLen, i));
}

TEST_P(SsdStoreTest, ADamagedHeaderInsideARunLosesOnlyItsRecord) {
  Open();
  constexpr size_t kLen = 2000;  // records of 2.5 KiB: several per block
  PutBatch(*store_, 0, 12, kLen);
  const uint64_t record = RecordBytes(Key(0), kLen);
  const std::string file = DataFiles()[0];
  store_.reset();
  FlipByte(file, 5 * record + 33);  // the sixth record's sequence number
  Open();
  EXPECT_EQ(store_->stats().corrupt_records, 1u);
  EXPECT_EQ(ReadReason(Key(5)), ErrorReason::kObjectNotFound);
  // The scan finds the next header on its sector.
  for (int i = 0; i < 12; ++i) {
    if (i != 5) ExpectValue(Key(i), Value(kLen, i));
  }
}

TEST_P(SsdStoreTest, FilesOfFormatOneAreStillRead) {
  // What a build before packing wrote: each record whole blocks.
  {
    std::unique_ptr<SsdDevice> device = NewDevice();
    std::unique_ptr<SsdFile> file =
        device->Open("000001.data", /*create=*/true).value();
    uint64_t at = 0;
    std::vector<AlignedBuffer> buffers;
    std::vector<IoRequest> requests;
    for (int i = 0; i < 5; ++i) {
      const std::vector<std::byte> value = Value(3000 + 70000 * (i % 2), i);
      const SsdRecord record =
          SsdRecord::Value(Key(i), std::nullopt, value.size(), i + 1)
              .AtFormatVersion(1);
      ASSERT_EQ(record.size() % kBlock, 0u);
      AlignedBuffer& b = buffers.emplace_back(record.size());
      record.Encode(value, b.span());
      requests.push_back({at, b.data(), record.size(), 0});
      at += record.size();
    }
    ASSERT_TRUE(file->WriteBatch(requests).ok());
  }
  Open();
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
  EXPECT_EQ(store_->stats().torn_records, 0u);
  for (int i = 0; i < 5; ++i) {
    ExpectValue(Key(i), Value(3000 + 70000 * (i % 2), i));
  }
  // Compaction moves them as they are.
  std::vector<std::string_view> gone = {"kv-0", "kv-2"};
  for (const Status& s : store_->RemoveBatch(gone)) ASSERT_TRUE(s.ok());
  PutBatch(*store_, 10, 3, 1000);
  for (int i : {1, 3, 4}) ExpectValue(Key(i), Value(3000 + 70000 * (i % 2), i));
  Reopen();
  for (int i : {1, 3, 4}) ExpectValue(Key(i), Value(3000 + 70000 * (i % 2), i));
}

// Instantiated with the other SsdStoreTest cases (ssd_store_test.cc).

}  // namespace
}  // namespace ssd_store_packing_test
}  // namespace mooncake_tier::ssd_store_testing
