// Staged SSD-tier reads: a node whose segment lives in shared memory, with
// a staging tail behind the published part, and a client in the same
// process (UCX pinned to TCP, as in ucx_transport_test.cc) that copies the
// values out of the tail. A bare UCX peer plays a client that never
// releases, or that sends broken releases.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/byte_units.h"
#include "transport/shared_memory_file.h"
#include "transport/ucx_segment_exporter.h"
#include "transport/ucx_ssd_read_messages.h"
#include "transport/ucx_test_support.h"
#include "transport/ucx_transport.h"

namespace mooncake_tier {
namespace ucx_staged_read_test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using ucx_test::BarePeer;
using ucx_test::FakeSsd;
using ucx_test::kTransports;
using ucx_test::Pattern;

constexpr uint64_t kPublished = 4 * kMiB;
constexpr uint64_t kStaging = 16 * kMiB;

// Polls `done` for up to `limit`.
bool Eventually(const std::function<bool()>& done,
                milliseconds limit = milliseconds(3000)) {
  const auto until = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

class StagedSsdReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<SharedMemoryFile>> file =
        SharedMemoryFile::Create(kPublished + kStaging, false);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    file_ = std::move(*file);
    StartNode(UcxExporterOptions{});
    client_ = MakeClient(true);
  }

  // Exports the first `size` bytes of the file with the last `staging` of
  // them as the staging area.
  void StartNode(UcxExporterOptions options,
                 uint64_t size = kPublished + kStaging,
                 uint64_t staging = kStaging) {
    endpoint_ = SegmentEndpoint{};
    exporter_.reset();
    options.transports = kTransports;
    Result<std::unique_ptr<UcxSegmentExporter>> exporter =
        UcxSegmentExporter::Create(options);
    ASSERT_TRUE(exporter.ok()) << exporter.status().ToString();
    exporter_ = std::move(*exporter);
    Result<SegmentEndpoint> endpoint =
        exporter_->Export("node-1", file_->base(), size, &ssd_, staging);
    ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
    endpoint_ = *endpoint;
  }

  static std::unique_ptr<UcxTransport> MakeClient(bool shared) {
    UcxTransportOptions options;
    options.transports = kTransports;
    options.timeout = milliseconds(3000);
    options.shared_memory = shared;
    Result<std::unique_ptr<UcxTransport>> client =
        UcxTransport::Create(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }

  UcxSegmentServerStats NodeStats() {
    Result<UcxSegmentServerStats> stats = exporter_->StatsFor("node-1");
    EXPECT_TRUE(stats.ok());
    return stats.ok() ? *stats : UcxSegmentServerStats{};
  }

  // Reads `key` (whose value is `value`) into a buffer of `buffer_size`
  // and checks the bytes.
  void ReadAndCheck(UcxTransport& client, const std::string& key,
                    const std::vector<std::byte>& value, size_t buffer_size) {
    std::vector<std::byte> buf(buffer_size, std::byte{0xee});
    SsdReadTransfer op{key, buf};
    std::vector<Result<uint64_t>> got = client.ReadSsd(endpoint_, {&op, 1});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_TRUE(got[0].ok()) << key << ": " << got[0].status().ToString();
    EXPECT_EQ(*got[0], value.size());
    EXPECT_EQ(std::memcmp(buf.data(), value.data(), value.size()), 0) << key;
    if (buffer_size > value.size()) {
      EXPECT_EQ(buf[value.size()], std::byte{0xee}) << key;
    }
  }

  // A staged request sent by hand from `peer`; returns its reply.
  Result<SsdReadReply> StageByHand(BarePeer& peer, uint64_t id,
                                   const std::string& key, uint64_t length,
                                   uint32_t budget_ms) {
    SsdReadRequest request;
    request.header.request_id = id;
    request.header.budget_ms = budget_ms;
    request.header.flags = kSsdReadFlagStaged;
    request.header.reply_address = peer.address();
    request.ops.push_back({key, length, 0, {}});
    const size_t before = peer.WaitForReplies(0).size();
    if (!peer.Send(endpoint_.transport_address,
                   {EncodeSsdReadRequest(request)})) {
      return Status(ErrorReason::kUnavailable, "send failed");
    }
    std::vector<Result<SsdReadReply>> replies = peer.WaitForReplies(before + 1);
    if (replies.size() <= before) {
      return Status(ErrorReason::kTimeout, "no reply");
    }
    return replies[before];
  }

  // Four reads through `client`, the first held in the handler until the
  // other three wait in the node's queue; returns the handler calls it
  // took to serve all four (-1 when they did not line up so), after
  // checking every read's bytes.
  int HandlerCallsForFourReads(UcxTransport& client) {
    const std::vector<std::string> keys = {"q0", "q1", "q2", "q3"};
    std::vector<std::vector<std::byte>> bufs(4, std::vector<std::byte>(70000));
    std::vector<Result<uint64_t>> got(4, Status(ErrorReason::kInternal, ""));
    for (int k = 0; k < 4; ++k) ssd_.Put(keys[k], Pattern(70000, 40 + k));
    const int before = ssd_.entered();
    ssd_.Block();
    auto read = [&](int k) {
      SsdReadTransfer op{keys[k], bufs[k]};
      got[k] = client.ReadSsd(endpoint_, {&op, 1})[0];
    };
    std::vector<std::thread> threads;
    threads.emplace_back(read, 0);
    bool lined_up = Eventually([&] { return ssd_.entered() == before + 1; });
    if (lined_up) {
      for (int k = 1; k < 4; ++k) threads.emplace_back(read, k);
      lined_up =
          Eventually([&] { return NodeStats().ssd_requests_queued == 3; });
    }
    ssd_.Release();
    for (std::thread& t : threads) t.join();
    if (!lined_up) return -1;
    for (int k = 0; k < 4; ++k) {
      EXPECT_TRUE(got[k].ok()) << k << ": " << got[k].status().ToString();
      EXPECT_EQ(bufs[k], Pattern(70000, 40 + k)) << k;
    }
    return ssd_.entered() - before;
  }

  std::unique_ptr<SharedMemoryFile> file_;
  FakeSsd ssd_;
  std::unique_ptr<UcxSegmentExporter> exporter_;
  SegmentEndpoint endpoint_;
  std::unique_ptr<UcxTransport> client_;
};

TEST_F(StagedSsdReadTest, StagingTailIsNotPublished) {
  EXPECT_EQ(endpoint_.size, kPublished);
  EXPECT_TRUE(NodeStats().shared_memory);
  EXPECT_EQ(NodeStats().staging_bytes, kStaging);
  std::vector<std::byte> buf(16);
  SegmentTransfer inside{&endpoint_, kPublished - 16, buf};
  SegmentTransfer tail{&endpoint_, kPublished, buf};
  EXPECT_TRUE(client_->Write({&inside, 1})[0].ok());
  EXPECT_EQ(client_->Write({&tail, 1})[0].reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ(client_->Read({&tail, 1})[0].reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ(
      exporter_->Export("node-2", file_->base(), kPublished, &ssd_, kPublished)
          .status()
          .reason(),
      ErrorReason::kInvalidArgument);
}

TEST_F(StagedSsdReadTest, WaitingStagedReadsAreServedTogetherInOnePass) {
  // One SSD thread: three requests wait behind the first, then go together.
  UcxExporterOptions options;
  options.ssd_threads = 1;
  StartNode(options);
  EXPECT_EQ(HandlerCallsForFourReads(*client_), 2);
  EXPECT_TRUE(Eventually([&] { return NodeStats().ssd_requests_served == 4; }));
  EXPECT_EQ(NodeStats().ssd_passes, 2u);
  EXPECT_EQ(NodeStats().ssd_staged_requests, 4u);
}

TEST_F(StagedSsdReadTest, UnstagedReadsAreServedOneAPass) {
  // Their replies wait on the client's network: one slow client must not
  // hold the others', so each is a pass of its own.
  UcxExporterOptions options;
  options.ssd_threads = 1;
  StartNode(options);
  std::unique_ptr<UcxTransport> remote = MakeClient(false);
  EXPECT_EQ(HandlerCallsForFourReads(*remote), 4);
  EXPECT_TRUE(Eventually([&] { return NodeStats().ssd_requests_served == 4; }));
  EXPECT_EQ(NodeStats().ssd_passes, 4u);
}

TEST_F(StagedSsdReadTest, StagedReadsReturnTheRightBytes) {
  const std::vector<size_t> sizes = {
      1,         100,  4095,         4096,    4097, (256 << 10) - 1,
      256 << 10, kMiB, 4 * kMiB + 3, 8 * kMiB};
  uint32_t seed = 1;
  for (size_t size : sizes) {
    SCOPED_TRACE(size);
    const std::string key = "v" + std::to_string(size);
    const std::vector<std::byte> value = Pattern(size, seed++);
    ssd_.Put(key, value);
    ReadAndCheck(*client_, key, value, size);
    ReadAndCheck(*client_, key, value, size + 5000);  // a roomier buffer
  }
  // A batch mixing sizes, a missing key and a buffer too small.
  const std::vector<size_t> mixed = {3 * kMiB + 1, 1, 70000, 4096, kMiB};
  std::vector<std::vector<std::byte>> values, bufs;
  std::vector<SsdReadTransfer> ops;
  for (size_t i = 0; i < mixed.size(); ++i) {
    values.push_back(Pattern(mixed[i], 100 + i));
    ssd_.Put("m" + std::to_string(i), values.back());
  }
  std::vector<std::string> keys;
  for (size_t i = 0; i < mixed.size(); ++i)
    keys.push_back("m" + std::to_string(i));
  for (size_t i = 0; i < mixed.size(); ++i) bufs.emplace_back(mixed[i]);
  bufs.emplace_back(64);
  bufs.emplace_back(10);
  for (size_t i = 0; i < mixed.size(); ++i) ops.push_back({keys[i], bufs[i]});
  ops.push_back({"absent", bufs[mixed.size()]});
  ops.push_back({keys[0], bufs[mixed.size() + 1]});
  std::vector<Result<uint64_t>> got = client_->ReadSsd(endpoint_, ops);
  ASSERT_EQ(got.size(), ops.size());
  for (size_t i = 0; i < mixed.size(); ++i) {
    ASSERT_TRUE(got[i].ok()) << i << ": " << got[i].status().ToString();
    EXPECT_EQ(*got[i], mixed[i]);
    EXPECT_EQ(bufs[i], values[i]) << i;
  }
  EXPECT_EQ(got[mixed.size()].status().reason(), ErrorReason::kObjectNotFound);
  EXPECT_EQ(got[mixed.size() + 1].status().reason(),
            ErrorReason::kBufferTooSmall);

  const UcxTransportStats stats = client_->stats();
  EXPECT_EQ(stats.ssd_staged_requests, 2 * sizes.size() + 1);
  EXPECT_EQ(stats.ssd_ucx_requests, 0u);
  EXPECT_EQ(stats.ssd_staging_fallbacks, 0u);
  EXPECT_EQ(NodeStats().ssd_staged_requests, 2 * sizes.size() + 1);
  // Every release arrives and frees its ranges.
  EXPECT_TRUE(Eventually([&] {
    const UcxSegmentServerStats s = NodeStats();
    return s.staging_bytes_in_use == 0 &&
           s.staging_leases_released == 2 * sizes.size() + 1;
  }));
  EXPECT_EQ(NodeStats().staging_leases_expired, 0u);
}

TEST_F(StagedSsdReadTest, ARequestLargerThanTheAreaGoesTheUcxWay) {
  // 18 MiB of buffers: more than the whole area, known to the client.
  std::vector<std::vector<std::byte>> values, bufs;
  std::vector<std::string> keys = {"a", "b", "c"};
  std::vector<SsdReadTransfer> ops;
  for (size_t i = 0; i < keys.size(); ++i) {
    values.push_back(Pattern(6 * kMiB, 7 + i));
    ssd_.Put(keys[i], values.back());
    bufs.emplace_back(6 * kMiB);
  }
  for (size_t i = 0; i < keys.size(); ++i) ops.push_back({keys[i], bufs[i]});
  std::vector<Result<uint64_t>> got = client_->ReadSsd(endpoint_, ops);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(got[i].ok()) << got[i].status().ToString();
    EXPECT_EQ(bufs[i], values[i]) << i;
  }
  EXPECT_EQ(client_->stats().ssd_staging_fallbacks, 1u);
  EXPECT_EQ(client_->stats().ssd_ucx_requests, 1u);
  EXPECT_EQ(client_->stats().ssd_staged_requests, 0u);
}

TEST_F(StagedSsdReadTest, ANodeThatCannotHoldTheRequestIsAskedAgainUnstaged) {
  // The node stages in the last 8 MiB of what it exports; the file (which
  // the client maps) reaches 8 MiB further, so only the node can tell.
  StartNode(UcxExporterOptions{}, kPublished + kStaging / 2, kStaging / 2);
  const std::vector<std::byte> value = Pattern(12 * kMiB, 3);
  ssd_.Put("big", value);
  ReadAndCheck(*client_, "big", value, value.size());
  EXPECT_EQ(NodeStats().ssd_staging_fallbacks, 1u);
  EXPECT_EQ(NodeStats().ssd_staged_requests, 0u);
  EXPECT_EQ(client_->stats().ssd_staging_fallbacks, 1u);
  EXPECT_EQ(client_->stats().ssd_ucx_requests, 1u);
  // What fits is staged.
  const std::vector<std::byte> small = Pattern(kMiB, 4);
  ssd_.Put("small", small);
  ReadAndCheck(*client_, "small", small, small.size());
  EXPECT_EQ(NodeStats().ssd_staged_requests, 1u);
}

TEST_F(StagedSsdReadTest, ReadsOfManyTimesTheAreaAllSucceed) {
  constexpr int kThreads = 4;
  constexpr int kReads = 40;  // 4 x 40 x 1 MiB = 10 x the area
  for (int t = 0; t < kThreads; ++t) {
    ssd_.Put("k" + std::to_string(t), Pattern(kMiB, 50 + t));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string key = "k" + std::to_string(t);
      const std::vector<std::byte> value = Pattern(kMiB, 50 + t);
      std::vector<std::byte> buf(kMiB);
      for (int r = 0; r < kReads; ++r) {
        SsdReadTransfer op{key, buf};
        std::vector<Result<uint64_t>> got =
            client_->ReadSsd(endpoint_, {&op, 1});
        if (!got[0].ok() || buf != value) ++failures;
        std::fill(buf.begin(), buf.end(), std::byte{0});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  // The releases made room: nothing had to fall back.
  EXPECT_EQ(client_->stats().ssd_staged_requests, uint64_t{kThreads * kReads});
  EXPECT_EQ(client_->stats().ssd_staging_fallbacks, 0u);
  EXPECT_TRUE(Eventually([&] {
    return NodeStats().staging_leases_released == kThreads * kReads &&
           NodeStats().staging_bytes_in_use == 0;
  }));
}

TEST_F(StagedSsdReadTest,
       AClientThatNeverReleasesHoldsTheAreaOnlyUntilItsLease) {
  UcxExporterOptions options;
  options.timeout = milliseconds(300);
  StartNode(options);
  ssd_.Put("held", Pattern(kMiB, 1));
  const std::vector<std::byte> value = Pattern(8 * kMiB, 2);
  ssd_.Put("big", value);
  {
    BarePeer peer;
    // 12 of the 16 MiB, held by a lease of 200 + 300 ms.
    Result<SsdReadReply> reply = StageByHand(peer, 1, "held", 12 * kMiB, 200);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    ASSERT_TRUE(reply->status.ok()) << reply->status.ToString();
    ASSERT_TRUE(reply->staged);
    EXPECT_NE(reply->lease_id, 0u);
    EXPECT_EQ(reply->lease_ms, 500u);
    ASSERT_EQ(reply->offsets.size(), 1u);
    EXPECT_GE(reply->offsets[0], kPublished);
    EXPECT_LE(reply->offsets[0] + kMiB, kPublished + kStaging);
    EXPECT_EQ(std::memcmp(file_->base() + reply->offsets[0],
                          Pattern(kMiB, 1).data(), kMiB),
              0);
    EXPECT_EQ(NodeStats().staging_bytes_in_use, 12 * kMiB);
  }  // the peer goes away without releasing
  // Meanwhile an 8 MiB read finds no room: it still succeeds, over UCX.
  ReadAndCheck(*client_, "big", value, value.size());
  EXPECT_EQ(client_->stats().ssd_staging_fallbacks, 1u);
  EXPECT_EQ(NodeStats().ssd_staging_fallbacks, 1u);
  // The lease ends; the area is free again and reads are staged.
  EXPECT_TRUE(Eventually([&] {
    return NodeStats().staging_leases_expired == 1 &&
           NodeStats().staging_bytes_in_use == 0;
  }));
  ReadAndCheck(*client_, "big", value, value.size());
  EXPECT_EQ(client_->stats().ssd_staged_requests, 1u);
  EXPECT_EQ(client_->stats().ssd_staging_fallbacks, 1u);
}

TEST_F(StagedSsdReadTest, ClientWithoutSharedMemoryReadsTheUcxWay) {
  std::unique_ptr<UcxTransport> client = MakeClient(false);
  const std::vector<std::byte> value = Pattern(kMiB + 7, 5);
  ssd_.Put("k", value);
  ReadAndCheck(*client, "k", value, value.size());
  EXPECT_EQ(client->stats().ssd_ucx_requests, 1u);
  EXPECT_EQ(client->stats().ssd_staged_requests, 0u);
  EXPECT_EQ(NodeStats().ssd_staged_requests, 0u);
  // Counted after the reply is sent.
  EXPECT_TRUE(Eventually([&] { return NodeStats().ssd_requests_served == 1; }));
}

TEST_F(StagedSsdReadTest, NodeWithoutSharedMemoryIsReadTheUcxWay) {
  UcxExporterOptions options;
  options.shared_memory = false;
  StartNode(options);
  EXPECT_EQ(endpoint_.size, kPublished);
  EXPECT_FALSE(NodeStats().shared_memory);
  EXPECT_EQ(NodeStats().staging_bytes, 0u);
  const std::vector<std::byte> value = Pattern(kMiB + 7, 6);
  ssd_.Put("k", value);
  ReadAndCheck(*client_, "k", value, value.size());
  EXPECT_EQ(client_->stats().ssd_ucx_requests, 1u);
  EXPECT_EQ(client_->stats().ssd_staged_requests, 0u);
  EXPECT_EQ(client_->stats().ssd_staging_fallbacks, 0u);
  EXPECT_EQ(NodeStats().ssd_staged_requests, 0u);
}

TEST_F(StagedSsdReadTest, ANodeWithoutAnAreaIsAskedOnceThenRemembered) {
  // Nothing staged behind the segment, but the file (page rounding, or here
  // a longer file) reaches past it.
  StartNode(UcxExporterOptions{}, kPublished, 0);
  const std::vector<std::byte> value = Pattern(5000, 7);
  ssd_.Put("k", value);
  ReadAndCheck(*client_, "k", value, value.size());
  ReadAndCheck(*client_, "k", value, value.size());
  EXPECT_EQ(client_->stats().ssd_staging_fallbacks, 1u);
  EXPECT_EQ(client_->stats().ssd_ucx_requests, 2u);
  EXPECT_EQ(NodeStats().ssd_staging_fallbacks, 1u);
}

TEST_F(StagedSsdReadTest, BadReleasesAreIgnoredAndServingGoesOn) {
  ssd_.Put("k", Pattern(kMiB, 8));
  {
    BarePeer peer;
    Result<SsdReadReply> reply = StageByHand(peer, 1, "k", kMiB, 2000);
    ASSERT_TRUE(reply.ok() && reply->status.ok() && reply->staged);
    ASSERT_NE(reply->lease_id, 0u);
    std::string truncated = EncodeSsdReadRelease(reply->lease_id);
    truncated.pop_back();
    ASSERT_TRUE(peer.Send(endpoint_.transport_address,
                          {"not a release", truncated,
                           EncodeSsdReadRelease(reply->lease_id + 1000)},
                          kSsdReadReleaseAmId));
    EXPECT_TRUE(
        Eventually([&] { return NodeStats().staging_releases_ignored == 3; }));
    EXPECT_EQ(NodeStats().staging_bytes_in_use, kMiB);  // still leased
    // The real release frees it; a repeated one is ignored.
    ASSERT_TRUE(peer.Send(endpoint_.transport_address,
                          {EncodeSsdReadRelease(reply->lease_id),
                           EncodeSsdReadRelease(reply->lease_id)},
                          kSsdReadReleaseAmId));
    EXPECT_TRUE(Eventually([&] {
      return NodeStats().staging_releases_ignored == 4 &&
             NodeStats().staging_leases_released == 1;
    }));
    EXPECT_EQ(NodeStats().staging_bytes_in_use, 0u);
  }
  const std::vector<std::byte> value = Pattern(kMiB, 8);
  ReadAndCheck(*client_, "k", value, value.size());
  EXPECT_EQ(client_->stats().ssd_staged_requests, 1u);
}

}  // namespace
}  // namespace ucx_staged_read_test
}  // namespace mooncake_tier
