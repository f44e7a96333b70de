// SsdStore across restarts: every complete record comes back, torn tails are
// cut, damaged records and headers are found, counted and never served.

#include <gtest/gtest.h>

#include <map>

#include "node/ssd_store.h"
#include "node/ssd_store_test_fixture.h"

namespace mooncake_tier {
namespace ssd_store_recovery_test {
namespace {

using ssd_store_testing::AllDeviceKinds;
using ssd_store_testing::KindName;
using ssd_store_testing::RecordBytes;
using ssd_store_testing::SsdStoreTest;
using ssd_store_testing::Value;

class SsdStoreRecoveryTest : public SsdStoreTest {};

TEST_P(SsdStoreRecoveryTest, ReopenRestoresEveryRecordAndItsGroup) {
  options_.max_file_bytes = 64 << 10;  // many files
  Open();
  std::map<std::string, std::pair<size_t, std::optional<GroupSpec>>> want;
  for (int i = 0; i < 60; ++i) {
    const std::string key = "obj/" + std::to_string(i);
    std::optional<GroupSpec> group;
    if (i % 3 == 0)
      group = GroupSpec{"grp" + std::to_string(i / 6), 2,
                        static_cast<uint32_t>(i / 3 % 2)};
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

TEST_P(SsdStoreRecoveryTest, TornTailIsCutAndEarlierRecordsSurvive) {
  Open();
  uint64_t end_of_fourth = 0;
  for (int i = 0; i < 5; ++i) {
    const std::string key = "r" + std::to_string(i);
    Put(key, Value(20000, i));
    // Each put is a batch of its own, and a batch ends on a block.
    const uint64_t block = SsdRecord::kAlignment;
    if (i < 4)
      end_of_fourth += (RecordBytes(key, 20000) + block - 1) / block * block;
  }
  const std::vector<std::string> files = DataFiles();
  ASSERT_EQ(files.size(), 1u);
  store_.reset();  // as if killed: nothing more is written
  // The last record was half written.
  Truncate(files[0], end_of_fourth + RecordBytes("r4", 20000) / 2 + 100);
  Open();
  for (int i = 0; i < 4; ++i)
    ExpectValue("r" + std::to_string(i), Value(20000, i));
  EXPECT_EQ(ReadReason("r4"), ErrorReason::kObjectNotFound);
  EXPECT_EQ(store_->stats().torn_records, 1u);
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
  EXPECT_EQ(FileSize(files[0]), end_of_fourth);
  Reopen();  // nothing torn any more
  EXPECT_EQ(store_->stats().torn_records, 0u);
  EXPECT_EQ(store_->stats().live_records, 4u);
}

TEST_P(SsdStoreRecoveryTest, TornHeaderAtTheTailIsCut) {
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

TEST_P(SsdStoreRecoveryTest, FileCutInsideItsLastPaddingKeepsEveryRecord) {
  // Found by fuzz/ssd_record_fuzz: reads fetch whole blocks, so a file that
  // ends inside the zeros after its last record lost that record to a
  // "cut short" checksum failure although the scan had found it intact.
  Open();
  Put("a", Value(100, 1));
  Put("b", Value(100, 2));  // record at 4096, padding up to 8192
  const std::string file = DataFiles()[0];
  store_.reset();
  Truncate(file, 4096 + RecordBytes("b", 100) + 10);
  Open();
  ExpectValue("a", Value(100, 1));
  ExpectValue("b", Value(100, 2));
  EXPECT_EQ(store_->stats().corrupt_records, 0u);
  EXPECT_EQ(store_->stats().torn_records, 0u);
  EXPECT_EQ(FileSize(file), 8192u);  // whole blocks again
}

TEST_P(SsdStoreRecoveryTest, FlippedValueByteIsCaughtOnReadAndNeverServed) {
  Open();
  Put("old", Value(1000, 1));
  Put("k", Value(1000, 2));    // record at 4096
  Put("k", Value(100000, 3));  // record at 8192, overwrites
  Put("other", Value(100, 4));
  const std::string file = DataFiles()[0];
  const uint64_t value_at =
      8192 + SsdRecord::Value("k", std::nullopt, 100000, 0).value_offset();
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

TEST_P(SsdStoreRecoveryTest, DamagedRecordIsFoundByTheReopenScan) {
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

TEST_P(SsdStoreRecoveryTest, FlippedHeaderByteIsSkippedAndTheScanResyncs) {
  Open();
  for (int i = 0; i < 4; ++i) Put("h" + std::to_string(i), Value(10000, i));
  // Each put is a batch of its own, and a batch ends on a block boundary.
  const uint64_t record = RecordBytes("h0", 10000);
  const uint64_t h1_at = (record + 4095) / 4096 * 4096;
  const std::string file = DataFiles()[0];
  store_.reset();
  FlipByte(file, h1_at + 33);  // h1's sequence number
  Open();
  EXPECT_EQ(store_->stats().corrupt_records, 1u);
  EXPECT_EQ(store_->stats().torn_records, 0u);
  ExpectValue("h0", Value(10000, 0));
  EXPECT_EQ(ReadReason("h1"), ErrorReason::kObjectNotFound);
  ExpectValue("h2", Value(10000, 2));  // found again past the damage
  ExpectValue("h3", Value(10000, 3));
}

INSTANTIATE_TEST_SUITE_P(Devices, SsdStoreRecoveryTest, AllDeviceKinds(),
                         KindName);

}  // namespace
}  // namespace ssd_store_recovery_test
}  // namespace mooncake_tier
