// Client and node in one process, each with its own UCP context and worker,
// as if on two hosts. Both are pinned to the TCP transport (see kTransports).

#include "transport/ucx_transport.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/ucx_context.h"
#include "transport/ucx_segment_exporter.h"
#include "transport/ucx_ssd_read_messages.h"
#include "transport/ucx_test_support.h"

#if defined(__SANITIZE_THREAD__)
#define MT_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MT_UNDER_TSAN 1
#endif
#endif

#ifdef MT_UNDER_TSAN
// UCX patches mmap/madvise in place ("bistro" hooks, for its registration
// cache). Under ThreadSanitizer a patched madvise at thread exit re-enters
// TSAN's interceptors and crashes. libucm reads UCX_MEM_MMAP_HOOK_MODE when
// it loads, before any code here runs, so the test restarts itself once
// with the hooks off. Plain builds keep UCX's defaults.
[[maybe_unused]] const bool kRestartedWithoutMmapHooks = [] {
  if (std::getenv("UCX_MEM_MMAP_HOOK_MODE") != nullptr) return false;
  setenv("UCX_MEM_MMAP_HOOK_MODE", "none", 1);
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)),
                        std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  return false;  // exec failed: run as we are
}();
#endif

namespace mooncake_tier {
namespace ucx_transport_test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using ucx_test::BarePeer;
using ucx_test::FakeSsd;
using ucx_test::kTransports;
using ucx_test::Pattern;

constexpr uint64_t kSegmentSize = 16 << 20;

class UcxTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    segment_.assign(kSegmentSize, std::byte{0});
    StartNode(UcxExporterOptions{});
    client_ = MakeClient(milliseconds(3000));
  }

  void StartNode(UcxExporterOptions options) {
    options.transports = kTransports;
    Result<std::unique_ptr<UcxSegmentExporter>> exporter =
        UcxSegmentExporter::Create(options);
    ASSERT_TRUE(exporter.ok()) << exporter.status().ToString();
    exporter_ = std::move(*exporter);
    Result<SegmentEndpoint> endpoint =
        exporter_->Export("node-1", segment_.data(), segment_.size(), &ssd_);
    ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
    endpoint_ = *endpoint;
  }

  static std::unique_ptr<UcxTransport> MakeClient(milliseconds timeout) {
    UcxTransportOptions options;
    options.transports = kTransports;
    options.timeout = timeout;
    Result<std::unique_ptr<UcxTransport>> client =
        UcxTransport::Create(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }

  Status WriteOne(uint64_t offset, std::span<std::byte> data) {
    SegmentTransfer op{&endpoint_, offset, data};
    return client_->Write({&op, 1})[0];
  }
  Status ReadOne(uint64_t offset, std::span<std::byte> data) {
    SegmentTransfer op{&endpoint_, offset, data};
    return client_->Read({&op, 1})[0];
  }

  std::vector<std::byte> segment_;
  FakeSsd ssd_;
  std::unique_ptr<UcxSegmentExporter> exporter_;
  SegmentEndpoint endpoint_;
  std::unique_ptr<UcxTransport> client_;
};

TEST_F(UcxTransportTest, EndpointDescribesTheSegment) {
  EXPECT_EQ(endpoint_.base, reinterpret_cast<uint64_t>(segment_.data()));
  EXPECT_EQ(endpoint_.size, kSegmentSize);
  EXPECT_FALSE(endpoint_.transport_address.empty());
  EXPECT_FALSE(endpoint_.remote_key.empty());
  EXPECT_EQ(exporter_->Export("node-1", segment_.data(), 64, nullptr)
                .status()
                .reason(),
            ErrorReason::kObjectExists);
  EXPECT_EQ(
      exporter_->Export("empty", segment_.data(), 0, nullptr).status().reason(),
      ErrorReason::kInvalidArgument);
}

TEST_F(UcxTransportTest, WritesAndReadsBackManySizes) {
  uint64_t offset = 0;
  uint32_t seed = 1;
  for (size_t size :
       {size_t{1}, size_t{4096}, size_t{1} << 20, size_t{4} << 20}) {
    SCOPED_TRACE(size);
    std::vector<std::byte> data = Pattern(size, seed++);
    ASSERT_TRUE(WriteOne(offset + 3, data).ok());
    // The bytes are in the node's memory when Write returns.
    EXPECT_EQ(std::memcmp(segment_.data() + offset + 3, data.data(), size), 0);
    std::vector<std::byte> back(size);
    Status read = ReadOne(offset + 3, back);
    ASSERT_TRUE(read.ok()) << read.ToString();
    EXPECT_EQ(back, data);
    offset += size + 4096;
  }
}

TEST_F(UcxTransportTest, BatchesFailOnlyTheBadTransfers) {
  constexpr int kOps = 64;
  std::vector<std::vector<std::byte>> data;
  std::vector<SegmentTransfer> writes;
  for (int i = 0; i < kOps; ++i) data.push_back(Pattern(4096 + i, i));
  for (int i = 0; i < kOps; ++i) {
    writes.push_back({&endpoint_, uint64_t(i) * 8192, data[i]});
  }
  std::vector<std::byte> stray(16);
  writes.push_back({&endpoint_, kSegmentSize - 8, stray});  // out of range
  std::vector<Status> written = client_->Write(writes);
  ASSERT_EQ(written.size(), writes.size());
  for (int i = 0; i < kOps; ++i) EXPECT_TRUE(written[i].ok()) << i;
  EXPECT_EQ(written.back().reason(), ErrorReason::kInvalidArgument);

  std::vector<std::vector<std::byte>> back;
  std::vector<SegmentTransfer> reads;
  for (int i = 0; i < kOps; ++i) back.emplace_back(data[i].size());
  for (int i = 0; i < kOps; ++i) {
    reads.push_back({&endpoint_, uint64_t(i) * 8192, back[i]});
  }
  std::vector<Status> read = client_->Read(reads);
  for (int i = 0; i < kOps; ++i) {
    ASSERT_TRUE(read[i].ok()) << i << ": " << read[i].ToString();
    EXPECT_EQ(back[i], data[i]) << i;
  }
}

TEST_F(UcxTransportTest, OutOfRangeTransfersAreRejectedBeforeSending) {
  std::vector<std::byte> buf(16, std::byte{0x5a});
  std::vector<std::byte> one(1, std::byte{0x5a});
  for (uint64_t offset : {kSegmentSize, kSegmentSize - 15, kSegmentSize + 1,
                          UINT64_MAX - 4, UINT64_MAX}) {
    SCOPED_TRACE(offset);
    EXPECT_EQ(WriteOne(offset, buf).reason(), ErrorReason::kInvalidArgument);
    EXPECT_EQ(ReadOne(offset, buf).reason(), ErrorReason::kInvalidArgument);
  }
  EXPECT_EQ(std::memcmp(segment_.data() + kSegmentSize - 16,
                        std::vector<std::byte>(16).data(), 16),
            0);
  // The last byte and an empty transfer at the end are fine.
  EXPECT_TRUE(WriteOne(kSegmentSize - 1, one).ok());
  EXPECT_TRUE(WriteOne(kSegmentSize, {}).ok());
  SegmentTransfer no_segment{nullptr, 0, buf};
  EXPECT_EQ(client_->Write({&no_segment, 1})[0].reason(),
            ErrorReason::kInvalidArgument);
  SegmentEndpoint no_key = endpoint_;
  no_key.remote_key.clear();
  SegmentTransfer keyless{&no_key, 0, buf};
  EXPECT_EQ(client_->Read({&keyless, 1})[0].reason(),
            ErrorReason::kInvalidArgument);
}

TEST_F(UcxTransportTest, SsdReadsReturnPerKeyResults) {
  const std::vector<std::byte> small = Pattern(100, 7);
  ssd_.Put("small", small);
  ssd_.Put("large", Pattern(8192, 8));
  std::vector<std::byte> exact(100);
  std::vector<std::byte> oversized(4096, std::byte{0xee});
  std::vector<std::byte> missing(64);
  std::vector<std::byte> too_small(100);
  std::vector<SsdReadTransfer> ops = {
      {"small", exact},     {"absent", missing}, {"small", oversized},
      {"large", too_small}, {"small", {}},       {"", exact}};
  std::vector<Result<uint64_t>> got = client_->ReadSsd(endpoint_, ops);
  ASSERT_EQ(got.size(), ops.size());
  ASSERT_TRUE(got[0].ok()) << got[0].status().ToString();
  EXPECT_EQ(*got[0], 100u);
  EXPECT_EQ(exact, small);
  EXPECT_EQ(got[1].status().reason(), ErrorReason::kObjectNotFound);
  ASSERT_TRUE(got[2].ok()) << got[2].status().ToString();
  EXPECT_EQ(*got[2], 100u);
  EXPECT_EQ(std::memcmp(oversized.data(), small.data(), 100), 0);
  EXPECT_EQ(oversized[100], std::byte{0xee});  // past the value: untouched
  EXPECT_EQ(oversized.back(), std::byte{0xee});
  EXPECT_EQ(got[3].status().reason(), ErrorReason::kBufferTooSmall);
  EXPECT_EQ(got[4].status().reason(), ErrorReason::kBufferTooSmall);
  EXPECT_EQ(got[5].status().reason(), ErrorReason::kInvalidKey);
}

TEST_F(UcxTransportTest, RegisteredBuffersCarryTransfersAndSsdReads) {
  std::vector<std::byte> arena(1 << 20);
  ASSERT_TRUE(client_->RegisterBuffer(arena).ok());
  std::span<std::byte> all(arena);
  // Overlaps and empty buffers are refused; the first registration stays.
  EXPECT_EQ(client_->RegisterBuffer(all.subspan(4096, 4096)).reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ(client_->RegisterBuffer({}).reason(),
            ErrorReason::kInvalidArgument);

  // One-sided put and get from slices of the registered buffer.
  std::span<std::byte> out = all.subspan(100, 64 << 10);
  const std::vector<std::byte> data = Pattern(out.size(), 41);
  std::copy(data.begin(), data.end(), out.begin());
  ASSERT_TRUE(WriteOne(8192, out).ok());
  EXPECT_EQ(std::memcmp(segment_.data() + 8192, data.data(), data.size()), 0);
  std::span<std::byte> in = all.subspan(512 << 10, 64 << 10);
  ASSERT_TRUE(ReadOne(8192, in).ok());
  EXPECT_TRUE(std::equal(in.begin(), in.end(), data.begin()));

  // The node writes SSD-tier values into a slice named by its offset
  // inside the registered buffer.
  const std::vector<std::byte> value = Pattern(3000, 42);
  ssd_.Put("on-ssd", value);
  std::span<std::byte> target = all.subspan(700000, 3000);
  SsdReadTransfer op{"on-ssd", target};
  std::vector<Result<uint64_t>> got = client_->ReadSsd(endpoint_, {&op, 1});
  ASSERT_TRUE(got[0].ok()) << got[0].status().ToString();
  EXPECT_TRUE(std::equal(target.begin(), target.end(), value.begin()));

  EXPECT_EQ(client_->UnregisterBuffer(all.subspan(0, 4096)).reason(),
            ErrorReason::kInvalidArgument);
  ASSERT_TRUE(client_->UnregisterBuffer(arena).ok());
  EXPECT_EQ(client_->UnregisterBuffer(arena).reason(),
            ErrorReason::kInvalidArgument);
  // Unregistered memory still works, registered per call.
  ASSERT_TRUE(ReadOne(8192, in).ok());
  EXPECT_TRUE(std::equal(in.begin(), in.end(), data.begin()));
}

TEST_F(UcxTransportTest, SsdReadOfAValueLargerThanEagerLimits) {
  const std::vector<std::byte> value = Pattern(3 << 20, 9);
  ssd_.Put("big", value);
  std::vector<std::byte> buf(value.size());
  std::vector<SsdReadTransfer> ops = {{"big", buf}};
  std::vector<Result<uint64_t>> got = client_->ReadSsd(endpoint_, ops);
  ASSERT_TRUE(got[0].ok()) << got[0].status().ToString();
  EXPECT_EQ(buf, value);
}

TEST_F(UcxTransportTest, FullSsdQueueIsRefusedWithQueueFull) {
  exporter_.reset();
  UcxExporterOptions options;
  options.ssd_threads = 1;
  options.ssd_queue_limit = 1;
  StartNode(options);
  ssd_.Put("k", Pattern(10, 1));
  ssd_.Block();
  auto read = [&](Result<uint64_t>* out) {
    std::vector<std::byte> buf(10);
    std::vector<SsdReadTransfer> ops = {{"k", buf}};
    *out = client_->ReadSsd(endpoint_, ops)[0];
  };
  Result<uint64_t> first = Status(ErrorReason::kInternal, "unset");
  std::thread t1(read, &first);
  while (ssd_.entered() == 0) std::this_thread::sleep_for(milliseconds(1));
  // The only thread is busy; one more request fits the queue, one not.
  Result<uint64_t> second = Status(ErrorReason::kInternal, "unset");
  Result<uint64_t> third = Status(ErrorReason::kInternal, "unset");
  std::atomic<int> done{0};
  std::thread t2([&] {
    read(&second);
    ++done;
  });
  std::thread t3([&] {
    read(&third);
    ++done;
  });
  while (done.load() == 0) std::this_thread::sleep_for(milliseconds(1));
  ssd_.Release();
  t1.join();
  t2.join();
  t3.join();
  EXPECT_TRUE(first.ok()) << first.status().ToString();
  const int refused =
      (!second.ok() && second.status().reason() == ErrorReason::kQueueFull) +
      (!third.ok() && third.status().reason() == ErrorReason::kQueueFull);
  EXPECT_EQ(refused, 1) << second.status().ToString() << " / "
                        << third.status().ToString();
  EXPECT_TRUE(second.ok() || third.ok());
  Result<UcxSegmentServerStats> stats = exporter_->StatsFor("node-1");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->ssd_requests_rejected, 1u);
}

TEST_F(UcxTransportTest, SlowSsdReadTimesOutInsteadOfHanging) {
  client_ = MakeClient(milliseconds(500));
  ssd_.Put("k", Pattern(10, 1));
  ssd_.Block();
  std::vector<std::byte> buf(10);
  std::vector<SsdReadTransfer> ops = {{"k", buf}};
  const auto start = Clock::now();
  std::vector<Result<uint64_t>> got = client_->ReadSsd(endpoint_, ops);
  const auto took = Clock::now() - start;
  EXPECT_EQ(got[0].status().reason(), ErrorReason::kTimeout)
      << got[0].status().ToString();
  EXPECT_LT(took, milliseconds(1500));
  ssd_.Release();
  // The node sees it is past the client's budget and does not write.
  EXPECT_EQ(buf, std::vector<std::byte>(10));
}

TEST_F(UcxTransportTest, ConcurrentCallersEachSeeTheirOwnBytes) {
  ssd_.Put("shared", Pattern(512, 99));
  constexpr int kThreads = 4;
  constexpr int kRounds = 30;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const size_t size = 1024 + 512 * ((t + r) % 8);
        std::vector<std::byte> data = Pattern(size, t * 1000 + r);
        const uint64_t offset = uint64_t(t) * (1 << 20) + (r % 4) * 8192;
        std::vector<std::byte> back(size);
        if (!WriteOne(offset, data).ok() || !ReadOne(offset, back).ok() ||
            back != data) {
          ++failures;
        }
        std::vector<std::byte> value(512);
        std::vector<SsdReadTransfer> ops = {{"shared", value}};
        std::vector<Result<uint64_t>> got = client_->ReadSsd(endpoint_, ops);
        if (!got[0].ok() || *got[0] != 512) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(UcxTransportTest, WithdrawnSegmentFailsWithinTheDeadline) {
  client_ = MakeClient(milliseconds(2000));
  std::vector<std::byte> data = Pattern(4096, 3);
  ASSERT_TRUE(WriteOne(0, data).ok());
  exporter_->Withdraw(endpoint_);
  std::vector<std::byte> back(4096);
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto start = Clock::now();
    Status read = ReadOne(0, back);
    EXPECT_FALSE(read.ok());
    EXPECT_TRUE(read.reason() == ErrorReason::kUnavailable ||
                read.reason() == ErrorReason::kTimeout)
        << read.ToString();
    EXPECT_LT(Clock::now() - start, milliseconds(3000));
  }
  std::vector<SsdReadTransfer> ops = {{"k", back}};
  const auto start = Clock::now();
  std::vector<Result<uint64_t>> got = client_->ReadSsd(endpoint_, ops);
  EXPECT_FALSE(got[0].ok());
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
}

TEST_F(UcxTransportTest, NodeDestroyedMidUseGivesClearErrors) {
  client_ = MakeClient(milliseconds(2000));
  ssd_.Put("k", Pattern(256, 5));
  std::atomic<bool> stop{false};
  std::atomic<int> ok_calls{0};
  std::vector<Status> late_errors;
  std::mutex late_mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::byte> buf(64 << 10);
      while (!stop.load()) {
        Status st = t == 0 ? ReadOne(0, buf) : WriteOne(1 << 20, buf);
        if (st.ok()) {
          ++ok_calls;
        } else {
          std::lock_guard<std::mutex> lock(late_mu);
          late_errors.push_back(st);
        }
      }
    });
  }
  while (ok_calls.load() < 10) std::this_thread::sleep_for(milliseconds(1));
  exporter_.reset();  // the node goes away while both threads are busy
  std::this_thread::sleep_for(milliseconds(300));
  stop = true;
  for (std::thread& thread : threads) thread.join();
  ASSERT_FALSE(late_errors.empty());
  for (const Status& st : late_errors) {
    EXPECT_TRUE(st.reason() == ErrorReason::kUnavailable ||
                st.reason() == ErrorReason::kTimeout)
        << st.ToString();
  }
  std::vector<std::byte> buf(16);
  const auto start = Clock::now();
  EXPECT_FALSE(ReadOne(0, buf).ok());
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
}

TEST_F(UcxTransportTest, MalformedRequestsAreCountedAndServingGoesOn) {
  {
    BarePeer peer;
    // Junk with no usable header: dropped and counted. A request whose
    // header names a reply address but whose body is cut: refused.
    SsdReadRequest no_ops;
    no_ops.header.request_id = 5;
    no_ops.header.reply_address = peer.address();
    ASSERT_TRUE(peer.Send(
        endpoint_.transport_address,
        {"definitely not an SSD read request", EncodeSsdReadRequest(no_ops)}));
    std::vector<Result<SsdReadReply>> replies = peer.WaitForReplies(1);
    ASSERT_EQ(replies.size(), 1u);
    ASSERT_TRUE(replies[0].ok());
    EXPECT_EQ(replies[0]->request_id, 5u);
    EXPECT_EQ(replies[0]->status.reason(), ErrorReason::kInvalidArgument);
    Result<UcxSegmentServerStats> stats = exporter_->StatsFor("node-1");
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->malformed_requests, 2u);
  }
  ssd_.Put("k", Pattern(8, 1));
  std::vector<std::byte> buf(8);
  std::vector<SsdReadTransfer> ops = {{"k", buf}};
  EXPECT_TRUE(client_->ReadSsd(endpoint_, ops)[0].ok());
}

// What a UCP configuration would apply, as UCX prints it.
std::string PrintedConfig(ucp_config_t* config) {
  char* text = nullptr;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  ucp_config_print(config, out, "test",
                   static_cast<ucs_config_print_flags_t>(
                       UCS_CONFIG_PRINT_CONFIG | UCS_CONFIG_PRINT_HIDDEN));
  fclose(out);
  std::string printed(text, length);
  free(text);
  return printed;
}

TEST(UcxTunedSettingsTest, AppliedUnlessTheEnvironmentSetsThem) {
  if (std::getenv("UCX_TCP_TX_SEG_SIZE") != nullptr) {
    GTEST_SKIP() << "UCX_TCP_TX_SEG_SIZE is set in this environment";
  }
  ucp_config_t* config = nullptr;
  ASSERT_EQ(ucp_config_read(nullptr, nullptr, &config), UCS_OK);
  ASSERT_TRUE(ApplyUcxTunedSettings(config).ok());
  EXPECT_NE(PrintedConfig(config).find("\nTX_SEG_SIZE=64K"), std::string::npos);
  ucp_config_release(config);

  // An operator's own value wins: ours is not applied over it.
  setenv("UCX_TCP_TX_SEG_SIZE", "16K", 1);
  ASSERT_EQ(ucp_config_read(nullptr, nullptr, &config), UCS_OK);
  ASSERT_TRUE(ApplyUcxTunedSettings(config).ok());
  EXPECT_EQ(PrintedConfig(config).find("TX_SEG_SIZE=64K"), std::string::npos);
  ucp_config_release(config);
  unsetenv("UCX_TCP_TX_SEG_SIZE");
}

}  // namespace
}  // namespace ucx_transport_test
}  // namespace mooncake_tier
