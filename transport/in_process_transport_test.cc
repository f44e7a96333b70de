#include "transport/in_process_transport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace mooncake_tier {
namespace in_process_transport_test {
namespace {

class FixedSsd : public SsdReadHandler {
 public:
  std::vector<Result<uint64_t>> ServeSsdReads(
      std::span<const SsdReadTransfer> ops) override {
    std::vector<Result<uint64_t>> out;
    for (const SsdReadTransfer& op : ops) {
      if (op.key != "k") {
        out.emplace_back(Status(ErrorReason::kObjectNotFound, "no"));
        continue;
      }
      std::memset(op.buffer.data(), 7, op.buffer.size());
      out.emplace_back(op.buffer.size());
    }
    return out;
  }
};

TEST(InProcessTransportTest, WritesAndReadsWithinTheSegment) {
  std::vector<std::byte> segment(4096);
  InProcessTransport transport;
  Result<SegmentEndpoint> ep =
      transport.Export("n1", segment.data(), segment.size(), nullptr);
  ASSERT_TRUE(ep.ok());
  std::vector<std::byte> data(100, std::byte{42});
  std::vector<std::byte> back(100);
  SegmentTransfer w{&*ep, 1000, data};
  ASSERT_TRUE(transport.Write({&w, 1})[0].ok());
  SegmentTransfer r{&*ep, 1000, back};
  ASSERT_TRUE(transport.Read({&r, 1})[0].ok());
  EXPECT_EQ(back, data);
  EXPECT_EQ(segment[1000], std::byte{42});
}

TEST(InProcessTransportTest, OutOfBoundsAndUnknownNodesFailPerTransfer) {
  std::vector<std::byte> segment(4096);
  InProcessTransport transport;
  Result<SegmentEndpoint> ep =
      transport.Export("n1", segment.data(), segment.size(), nullptr);
  ASSERT_TRUE(ep.ok());
  EXPECT_FALSE(transport.Export("n1", segment.data(), 1, nullptr).ok());
  std::vector<std::byte> buf(100);
  SegmentEndpoint ghost = *ep;
  ghost.transport_address = "inproc://ghost";
  std::vector<SegmentTransfer> ops = {
      {&*ep, 4000, buf}, {&ghost, 0, buf}, {&*ep, 0, buf}};
  std::vector<Status> st = transport.Write(ops);
  EXPECT_EQ(st[0].reason(), ErrorReason::kInvalidArgument);
  EXPECT_EQ(st[1].reason(), ErrorReason::kUnavailable);
  EXPECT_TRUE(st[2].ok());
  transport.Withdraw(*ep);
  EXPECT_EQ(transport.Read({&ops[2], 1})[0].reason(),
            ErrorReason::kUnavailable);
}

TEST(InProcessTransportTest, SsdReadsGoToTheNodesHandler) {
  std::vector<std::byte> segment(64);
  FixedSsd ssd;
  InProcessTransport transport;
  Result<SegmentEndpoint> ep =
      transport.Export("n1", segment.data(), segment.size(), &ssd);
  ASSERT_TRUE(ep.ok());
  std::vector<std::byte> buf(10);
  std::vector<SsdReadTransfer> ops = {{"k", buf}, {"x", buf}};
  auto res = transport.ReadSsd(*ep, ops);
  ASSERT_EQ(res.size(), 2u);
  EXPECT_EQ(*res[0], 10u);
  EXPECT_EQ(buf[9], std::byte{7});
  EXPECT_EQ(res[1].status().reason(), ErrorReason::kObjectNotFound);
  SegmentEndpoint ghost;
  ghost.transport_address = "inproc://ghost";
  EXPECT_EQ(transport.ReadSsd(ghost, ops)[1].status().reason(),
            ErrorReason::kUnavailable);
}

TEST(InProcessTransportTest, StagingTailIsNotPublished) {
  std::vector<std::byte> segment(64);
  InProcessTransport transport;
  Result<SegmentEndpoint> ep =
      transport.Export("n1", segment.data(), segment.size(), nullptr, 16);
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->size, 48u);
  std::vector<std::byte> buf(8);
  SegmentTransfer inside{&*ep, 40, buf};
  SegmentTransfer tail{&*ep, 48, buf};
  EXPECT_TRUE(transport.Write({&inside, 1})[0].ok());
  EXPECT_EQ(transport.Write({&tail, 1})[0].reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ(transport.Export("n2", segment.data(), segment.size(), nullptr, 64)
                .status()
                .reason(),
            ErrorReason::kInvalidArgument);
}

}  // namespace
}  // namespace in_process_transport_test
}  // namespace mooncake_tier
