// The SSD store short of room: removals that cost a few bytes each (lists
// of removals share a tombstone record), a file system smaller than the
// configured capacity, a file system that fills up under the store, and
// recovery once room exists again.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/byte_units.h"
#include "node/memory_ssd_device.h"
#include "node/ssd_store.h"
#include "node/ssd_store_test_fixture.h"

namespace mooncake_tier::ssd_store_testing {
namespace ssd_store_space_test {
namespace {

std::string Key(int i) { return "block-" + std::to_string(i); }

TEST_P(SsdStoreTest, BatchRemovalsShareTombstoneRecordsAndStayRemoved) {
  Open();
  const std::vector<std::byte> value = Value(16 << 10, 1);
  for (int i = 0; i < 300; ++i) Put(Key(i), value);
  const uint64_t before = store_->stats().file_bytes;
  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) keys.push_back(Key(i));
  keys.push_back(Key(7));       // twice in the batch: the second is absent
  keys.push_back("never-put");  // absent
  std::vector<std::string_view> views(keys.begin(), keys.end());
  const std::vector<Status> removed = store_->RemoveBatch(views);
  for (int i = 0; i < 200; ++i) EXPECT_TRUE(removed[i].ok()) << i;
  EXPECT_EQ(removed[200].reason(), ErrorReason::kObjectNotFound);
  EXPECT_EQ(removed[201].reason(), ErrorReason::kObjectNotFound);
  // 200 removals in one record of a few KiB, not 200 blocks of 4 KiB.
  const uint64_t tombstone_bytes = store_->stats().file_bytes - before;
  EXPECT_LE(tombstone_bytes, 16u << 10);
  EXPECT_GT(tombstone_bytes, 0u);

  Reopen();
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(store_->ValueSize(Key(i)).has_value(), i >= 200) << i;
  }
  ExpectValue(Key(250), value);
}

TEST_P(SsdStoreTest, CompactionCarriesRemovalListsWhileOlderCopiesRemain) {
  options_.max_file_bytes = 256 << 10;  // many small files
  Open();
  const std::vector<std::byte> value = Value(16 << 10, 2);
  for (int i = 0; i < 64; ++i) Put(Key(i), value);
  // Remove half of the keys: the list lands in a newer file than the
  // removed records, so it must survive compacting its own file for as
  // long as those older files are around.
  std::vector<std::string> keys;
  for (int i = 0; i < 64; i += 2) keys.push_back(Key(i));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  for (const Status& s : store_->RemoveBatch(views)) ASSERT_TRUE(s.ok());
  for (int i = 64; i < 128; ++i) Put(Key(i), value);
  // Compact whatever qualifies, repeatedly.
  for (int step = 0; step < 64; ++step) {
    Result<bool> worked = store_->CompactStep(0.01);
    ASSERT_TRUE(worked.ok()) << worked.status().ToString();
    if (!*worked) break;
  }
  EXPECT_GT(store_->stats().compactions, 0u);
  Reopen();
  for (int i = 0; i < 128; ++i) {
    const bool removed = i < 64 && i % 2 == 0;
    EXPECT_EQ(store_->ValueSize(Key(i)).has_value(), !removed) << i;
  }
}

// A memory device standing for a file system of `bytes`.
class SmallFileSystemTest : public testing::Test {
 protected:
  void Open(uint64_t fs_bytes, uint64_t configured,
            uint64_t max_file_bytes = 1 * kMiB) {
    device_ = std::make_unique<MemorySsdDevice>();
    device_->SetSpaceForTest(fs_bytes);
    SsdStoreOptions options;
    options.capacity_bytes = configured;
    options.max_file_bytes = max_file_bytes;
    Result<std::unique_ptr<SsdStore>> store =
        SsdStore::Open(device_->Reopen(), options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  Status Put(int i) { return store_->Put(Key(i), Value(16 << 10, i)); }

  std::unique_ptr<MemorySsdDevice> device_;
  std::unique_ptr<SsdStore> store_;
};

TEST_F(SmallFileSystemTest, CapacityIsWhatTheFileSystemHolds) {
  // Told 1 GiB on a file system of 8 MiB: the store counts 8 MiB, refuses
  // puts short of it (room left to remove and compact), and never makes
  // the file system itself refuse a write.
  Open(8 * kMiB, 1024 * kMiB);
  const SsdStoreStats fresh = store_->stats();
  EXPECT_EQ(fresh.configured_capacity_bytes, 1024 * kMiB);
  EXPECT_LE(fresh.capacity_bytes, 8 * kMiB);
  EXPECT_LT(fresh.put_limit_bytes, fresh.capacity_bytes);
  int stored = 0;
  Status last;
  for (int i = 0; i < 1000 && last.ok(); ++i) {
    last = Put(i);
    stored += last.ok();
  }
  EXPECT_EQ(last.reason(), ErrorReason::kNoSpace) << last.ToString();
  EXPECT_GT(stored, 100);
  const SsdStoreStats full = store_->stats();
  // Puts stopped at the put limit; the compaction the refused put ran to
  // make room (batch padding counts as dead) may use the headroom above
  // it, never more than the capacity.
  EXPECT_LE(full.file_bytes, full.capacity_bytes);
  EXPECT_EQ(full.write_errors, 0u);
  EXPECT_GE(full.no_space_refusals, 1u);
}

// A device whose file system charges nothing for what is written: what
// it reports free stays its whole size, as a real one does for a moment
// while writes are placed but not landed, and for the holes failed writes
// leave.
class UnchargedDevice final : public SsdDevice {
 public:
  UnchargedDevice(std::unique_ptr<SsdDevice> inner, uint64_t bytes)
      : inner_(std::move(inner)), bytes_(bytes) {}
  Result<std::unique_ptr<SsdFile>> Open(const std::string& name,
                                        bool create) override {
    return inner_->Open(name, create);
  }
  Result<std::vector<std::string>> List() const override {
    return inner_->List();
  }
  Status Remove(const std::string& name) override {
    return inner_->Remove(name);
  }
  Status Sync() override { return inner_->Sync(); }
  Result<Space> FreeSpace() const override { return Space{bytes_, bytes_}; }
  bool direct_io() const override { return inner_->direct_io(); }
  uint64_t alignment() const override { return inner_->alignment(); }

 private:
  std::unique_ptr<SsdDevice> inner_;
  uint64_t bytes_;
};

TEST(SsdStoreSpaceTest, CapacityNeverExceedsTheWholeFileSystem) {
  MemorySsdDevice memory;
  SsdStoreOptions options;
  options.capacity_bytes = 1024 * kMiB;
  options.max_file_bytes = 1 * kMiB;
  options.space_check_interval = std::chrono::milliseconds(0);
  Result<std::unique_ptr<SsdStore>> store = SsdStore::Open(
      std::make_unique<UnchargedDevice>(memory.Reopen(), 8 * kMiB), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  int stored = 0;
  for (int i = 0; i < 1000; ++i) {
    stored += (*store)->Put(Key(i), Value(16 << 10, i)).ok();
  }
  const SsdStoreStats stats = (*store)->stats();
  EXPECT_GT(stats.file_bytes, 0u);
  // Its files plus what is "free" would be more than the file system: the
  // store counts no more than the file system holds, and stops short of it.
  EXPECT_LE(stats.capacity_bytes, 8 * kMiB);
  EXPECT_LE(stats.file_bytes, 8 * kMiB);
  EXPECT_LT(stored, 8 * 64);
}

TEST_F(SmallFileSystemTest, AFileSystemFilledByOthersIsPressureNotAnError) {
  Open(64 * kMiB, 64 * kMiB);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(Put(i).ok()) << i;
  // Someone else fills the file system: the store's next write hits ENOSPC.
  const uint64_t ours = store_->stats().file_bytes;
  device_->SetSpaceForTest(ours + 64 * 1024);
  Status refused;
  for (int i = 100; i < 200 && refused.ok(); ++i) refused = Put(i);
  EXPECT_EQ(refused.reason(), ErrorReason::kNoSpace) << refused.ToString();
  const SsdStoreStats after = store_->stats();
  EXPECT_GE(after.no_space_refusals, 1u);
  EXPECT_EQ(after.write_errors, 0u);  // not counted as a device failure
  // It keeps serving what it holds.
  std::vector<std::byte> buffer(16 << 10);
  EXPECT_TRUE(store_->Get(Key(5), buffer).ok());
}

TEST_F(SmallFileSystemTest, RemovalsAndCompactionMakeRoomAgain) {
  Open(8 * kMiB, 8 * kMiB);
  int next = 0;
  while (Put(next).ok()) ++next;
  ASSERT_GT(next, 100);
  // The oldest go (as SSD eviction would take them), compaction reclaims
  // their files, and puts are taken again without a restart.
  std::vector<std::string> keys;
  for (int i = 0; i < next / 2; ++i) keys.push_back(Key(i));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  for (const Status& s : store_->RemoveBatch(views)) ASSERT_TRUE(s.ok());
  for (int step = 0; step < 64; ++step) {
    Result<bool> worked = store_->CompactStep(SsdStore::kPressureDeadRatio);
    ASSERT_TRUE(worked.ok()) << worked.status().ToString();
    if (!*worked) break;
  }
  int again = 0;
  for (int i = next; i < next + next / 4; ++i) again += Put(i).ok();
  EXPECT_EQ(again, next / 4);
}

TEST_F(SmallFileSystemTest, AStreamThroughASmallFileSystemNeverWedges) {
  // The daemon's file size (256 MiB) and 1 GiB configured, on 8 MiB: files
  // follow the room the file system has, and when removals leave the
  // active file mostly dead it is sealed so compaction can reclaim it.
  // Seen wedged before: one file grew to the whole file system, only
  // sealed files are compacted, and every put was refused for good.
  Open(8 * kMiB, 1024 * kMiB, 256 * kMiB);
  EXPECT_LE(store_->stats().put_limit_bytes, 8 * kMiB);
  int oldest = 0;
  int refusals = 0;
  for (int i = 0; i < 2000; ++i) {  // ~4x the file system
    Status put = Put(i);
    if (put.reason() == ErrorReason::kNoSpace) {
      // What SSD eviction does: the oldest half goes.
      ++refusals;
      std::vector<std::string> keys;
      const int until = oldest + (i - oldest) / 2;
      for (; oldest < until; ++oldest) keys.push_back(Key(oldest));
      std::vector<std::string_view> views(keys.begin(), keys.end());
      for (const Status& s : store_->RemoveBatch(views)) ASSERT_TRUE(s.ok());
      put = Put(i);  // the put itself compacts what it needs
    }
    ASSERT_TRUE(put.ok()) << "put " << i << " after " << refusals
                          << " refusals: " << put.ToString();
  }
  EXPECT_GT(refusals, 2);
  const SsdStoreStats stats = store_->stats();
  EXPECT_GT(stats.compactions, 0u);
  EXPECT_LE(stats.file_bytes, 8 * kMiB);
  EXPECT_EQ(stats.write_errors, 0u);
}

TEST_F(SmallFileSystemTest, AFullStoreStillRemovesAndOwesTheTombstones) {
  // Seen wedged: the file system full, removals refused for want of room
  // for their tombstones, so the store kept records the master had let go
  // (it counted the SSD a third full) and nothing ever freed room again.
  Open(64 * kMiB, 64 * kMiB);
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(Put(i).ok()) << i;
  device_->SetSpaceForTest(store_->stats().file_bytes);  // not a byte free
  std::vector<std::string> keys;
  for (int i = 0; i < 120; ++i) keys.push_back(Key(i));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  for (const Status& s : store_->RemoveBatch(views)) {
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_FALSE(store_->ValueSize(Key(0)).has_value());
  EXPECT_TRUE(store_->ValueSize(Key(150)).has_value());
  EXPECT_EQ(store_->stats().owed_tombstones, 120u);
  // Their files are dead now: compaction deletes them without room to
  // copy anything, and the tombstones that still matter are written.
  for (int step = 0; step < 64; ++step) {
    Result<bool> worked = store_->CompactStep(SsdStore::kPressureDeadRatio);
    ASSERT_TRUE(worked.ok()) << worked.status().ToString();
    if (!*worked) break;
  }
  EXPECT_GT(store_->stats().compactions, 0u);
  EXPECT_EQ(store_->stats().owed_tombstones, 0u);
  EXPECT_TRUE(Put(1000).ok());  // room again
  // Removed for good: a restart brings none of them back.
  store_.reset();
  SsdStoreOptions options;
  options.capacity_bytes = 64 * kMiB;
  options.max_file_bytes = 1 * kMiB;
  Result<std::unique_ptr<SsdStore>> reopened =
      SsdStore::Open(device_->Reopen(), options);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  store_ = std::move(reopened).value();
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(store_->ValueSize(Key(i)).has_value(), i >= 120) << i;
  }
  EXPECT_TRUE(store_->ValueSize(Key(1000)).has_value());
}

}  // namespace
}  // namespace ssd_store_space_test
}  // namespace mooncake_tier::ssd_store_testing
