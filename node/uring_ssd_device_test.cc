// Contract tests of SsdDevice, run against UringSsdDevice (io_uring with and
// without O_DIRECT, and its pread/pwrite fallback) and MemorySsdDevice.

#include "node/uring_ssd_device.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <thread>
#include <vector>

#include "node/aligned_buffer.h"
#include "node/memory_ssd_device.h"

namespace mooncake_tier {
namespace uring_ssd_device_test {
namespace {

enum class Kind { kMemory, kUring, kUringDirect, kSyscalls };

std::string KindName(const testing::TestParamInfo<Kind>& info) {
  switch (info.param) {
    case Kind::kMemory:
      return "Memory";
    case Kind::kUring:
      return "Uring";
    case Kind::kUringDirect:
      return "UringDirect";
    case Kind::kSyscalls:
      return "PreadPwrite";
  }
  return "?";
}

void Fill(AlignedBuffer& buffer, uint8_t seed) {
  for (size_t i = 0; i < buffer.size(); ++i) {
    buffer.data()[i] = std::byte(static_cast<uint8_t>(seed * 31 + i * 13));
  }
}

bool Same(const AlignedBuffer& a, const AlignedBuffer& b) {
  return a.size() == b.size() &&
         std::equal(a.data(), a.data() + a.size(), b.data());
}

class SsdDeviceTest : public testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kMemory) {
      device_ = std::make_unique<MemorySsdDevice>();
      return;
    }
    std::string pattern =
        (std::filesystem::temp_directory_path() / "mt-ssd-dev-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    UringSsdDeviceOptions options;
    options.direct_io = GetParam() == Kind::kUringDirect;
    options.use_io_uring = GetParam() != Kind::kSyscalls;
    Result<std::unique_ptr<UringSsdDevice>> device =
        UringSsdDevice::Open(dir_ + "/sub", options);
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = std::move(device).value();
  }
  void TearDown() override {
    device_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<SsdFile> OpenFile(const std::string& name) {
    Result<std::unique_ptr<SsdFile>> file = device_->Open(name, true);
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    return file.ok() ? std::move(file).value() : nullptr;
  }

  std::string dir_;
  std::unique_ptr<SsdDevice> device_;
};

TEST_P(SsdDeviceTest, BatchWriteThenBatchReadRoundTrips) {
  std::unique_ptr<SsdFile> file = OpenFile("a.data");
  ASSERT_NE(file, nullptr);
  // More requests than an io_uring ring holds, of mixed sizes.
  std::vector<AlignedBuffer> out;
  std::vector<IoRequest> writes;
  uint64_t offset = 0;
  for (int i = 0; i < 150; ++i) {
    out.emplace_back(4096 * (1 + i % 5));
    Fill(out.back(), static_cast<uint8_t>(i));
    writes.push_back({offset, out.back().data(), out.back().size(), 0});
    offset += out.back().size();
  }
  ASSERT_TRUE(file->WriteBatch(writes).ok());
  for (const IoRequest& w : writes)
    EXPECT_EQ(w.result, static_cast<ssize_t>(w.len));
  EXPECT_EQ(file->Size().value(), offset);

  std::vector<AlignedBuffer> in;
  std::vector<IoRequest> reads;
  for (const IoRequest& w : writes) {
    in.emplace_back(w.len);
    reads.push_back({w.offset, in.back().data(), w.len, 0});
  }
  std::reverse(reads.begin(), reads.end());  // completions matched by id
  ASSERT_TRUE(file->ReadBatch(reads).ok());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_TRUE(Same(out[i], in[i])) << "request " << i;
  }
}

TEST_P(SsdDeviceTest, ReadPastEndIsShortNotAnError) {
  std::unique_ptr<SsdFile> file = OpenFile("b.data");
  AlignedBuffer block(8192);
  Fill(block, 1);
  IoRequest w{0, block.data(), 8192, 0};
  ASSERT_TRUE(file->WriteBatch({&w, 1}).ok());
  AlignedBuffer in(16384);
  IoRequest reads[] = {{4096, in.data(), 8192, 0},
                       {65536, in.data() + 8192, 4096, 0}};
  ASSERT_TRUE(file->ReadBatch(reads).ok());
  EXPECT_EQ(reads[0].result, 4096);
  EXPECT_EQ(reads[1].result, 0);
  EXPECT_TRUE(std::equal(in.data(), in.data() + 4096, block.data() + 4096));
}

TEST_P(SsdDeviceTest, TruncateListRemoveAndMissingFiles) {
  {
    std::unique_ptr<SsdFile> file = OpenFile("c.data");
    AlignedBuffer block(3 * 4096);
    Fill(block, 2);
    IoRequest w{0, block.data(), block.size(), 0};
    ASSERT_TRUE(file->WriteBatch({&w, 1}).ok());
    ASSERT_TRUE(file->Truncate(4096).ok());
    EXPECT_EQ(file->Size().value(), 4096u);
    ASSERT_TRUE(file->Sync().ok());
  }
  OpenFile("d.data");
  std::vector<std::string> names = device_->List().value();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"c.data", "d.data"}));
  EXPECT_EQ(device_->Open("missing", false).status().reason(),
            ErrorReason::kObjectNotFound);
  EXPECT_EQ(device_->Open("x/y", true).status().reason(),
            ErrorReason::kInvalidArgument);
  ASSERT_TRUE(device_->Remove("c.data").ok());
  EXPECT_EQ(device_->Remove("c.data").reason(), ErrorReason::kObjectNotFound);
  EXPECT_EQ(device_->List().value(), std::vector<std::string>{"d.data"});
  EXPECT_TRUE(device_->Sync().ok());
}

TEST_P(SsdDeviceTest, OpenHandleOutlivesRemove) {
  std::unique_ptr<SsdFile> file = OpenFile("e.data");
  AlignedBuffer out(4096);
  Fill(out, 3);
  IoRequest w{0, out.data(), 4096, 0};
  ASSERT_TRUE(file->WriteBatch({&w, 1}).ok());
  ASSERT_TRUE(device_->Remove("e.data").ok());
  AlignedBuffer in(4096);
  IoRequest r{0, in.data(), 4096, 0};
  ASSERT_TRUE(file->ReadBatch({&r, 1}).ok());
  EXPECT_TRUE(Same(out, in));
}

TEST_P(SsdDeviceTest, ManyThreadsShareOneFile) {
  std::unique_ptr<SsdFile> file = OpenFile("f.data");
  constexpr int kThreads = 4;
  constexpr int kBlocksPerThread = 64;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 4; ++round) {
        std::vector<AlignedBuffer> out;
        std::vector<IoRequest> writes;
        for (int b = 0; b < 8; ++b) {
          const uint64_t block =
              static_cast<uint64_t>(t * kBlocksPerThread + round * 8 + b);
          out.emplace_back(4096);
          Fill(out.back(), static_cast<uint8_t>(block));
          writes.push_back({block * 4096, out.back().data(), 4096, 0});
        }
        if (!file->WriteBatch(writes).ok()) ++failures;
        std::vector<AlignedBuffer> in;
        std::vector<IoRequest> reads;
        for (const IoRequest& w : writes) {
          in.emplace_back(4096);
          reads.push_back({w.offset, in.back().data(), 4096, 0});
        }
        if (!file->ReadBatch(reads).ok()) ++failures;
        for (size_t i = 0; i < in.size(); ++i) {
          if (!Same(in[i], out[i])) ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_P(SsdDeviceTest, DirectIoRejectsUnalignedRequests) {
  if (!device_->direct_io()) GTEST_SKIP() << "no alignment rule";
  EXPECT_EQ(device_->alignment(), 4096u);
  std::unique_ptr<SsdFile> file = OpenFile("g.data");
  AlignedBuffer buffer(8192);
  IoRequest unaligned_len{0, buffer.data(), 100, 0};
  EXPECT_EQ(file->WriteBatch({&unaligned_len, 1}).reason(),
            ErrorReason::kInvalidArgument);
  IoRequest unaligned_buf{0, buffer.data() + 1, 4096, 0};
  EXPECT_EQ(file->ReadBatch({&unaligned_buf, 1}).reason(),
            ErrorReason::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Devices, SsdDeviceTest,
                         testing::Values(Kind::kMemory, Kind::kUring,
                                         Kind::kUringDirect, Kind::kSyscalls),
                         KindName);

TEST(MemorySsdDeviceTest, ReopenSeesTheSameFilesAndInjectedFailures) {
  MemorySsdDevice device(4096);
  EXPECT_TRUE(device.direct_io());
  std::unique_ptr<SsdFile> file = device.Open("a", true).value();
  AlignedBuffer out(4096);
  Fill(out, 5);
  IoRequest w{0, out.data(), 4096, 0};
  ASSERT_TRUE(file->WriteBatch({&w, 1}).ok());

  std::unique_ptr<MemorySsdDevice> again = device.Reopen();
  std::unique_ptr<SsdFile> same = again->Open("a", false).value();
  AlignedBuffer in(4096);
  IoRequest r{0, in.data(), 4096, 0};
  ASSERT_TRUE(same->ReadBatch({&r, 1}).ok());
  EXPECT_TRUE(Same(out, in));

  again->FailIoForTest(true);
  EXPECT_EQ(file->ReadBatch({&r, 1}).reason(), ErrorReason::kIoError);
  EXPECT_EQ(r.result, -EIO);
  device.FailIoForTest(false);
  EXPECT_TRUE(file->ReadBatch({&r, 1}).ok());
}

}  // namespace
}  // namespace uring_ssd_device_test
}  // namespace mooncake_tier
