#include "transport/ucx_ssd_read_messages.h"

#include <gtest/gtest.h>

#include <string>

namespace mooncake_tier {
namespace {

SsdReadRequest SampleRequest() {
  SsdReadRequest request;
  request.header.request_id = 42;
  request.header.budget_ms = 3000;
  request.header.reply_address = std::string("\x01\x00\x02worker", 9);
  request.ops.push_back({"key-a", 0x1000, 64, "rkey-a"});
  request.ops.push_back({"key-b", 0, 0, ""});
  return request;
}

TEST(UcxSsdReadMessagesTest, RequestRoundTrips) {
  const std::string wire = EncodeSsdReadRequest(SampleRequest());
  Result<SsdReadRequest> back = DecodeSsdReadRequest(wire);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->header.request_id, 42u);
  EXPECT_EQ(back->header.budget_ms, 3000u);
  EXPECT_EQ(back->header.reply_address, SampleRequest().header.reply_address);
  ASSERT_EQ(back->ops.size(), 2u);
  EXPECT_EQ(back->ops[0].key, "key-a");
  EXPECT_EQ(back->ops[0].address, 0x1000u);
  EXPECT_EQ(back->ops[0].length, 64u);
  EXPECT_EQ(back->ops[0].packed_key, "rkey-a");
  EXPECT_EQ(back->ops[1].length, 0u);
}

TEST(UcxSsdReadMessagesTest, ReplyRoundTripsWithPerKeyErrors) {
  SsdReadReply reply;
  reply.request_id = 7;
  reply.results.emplace_back(uint64_t{123});
  reply.results.emplace_back(Status(ErrorReason::kObjectNotFound, "no 'x'"));
  Result<SsdReadReply> back = DecodeSsdReadReply(EncodeSsdReadReply(reply));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->request_id, 7u);
  EXPECT_TRUE(back->status.ok());
  ASSERT_EQ(back->results.size(), 2u);
  EXPECT_EQ(*back->results[0], 123u);
  EXPECT_EQ(back->results[1].status().reason(), ErrorReason::kObjectNotFound);
  EXPECT_EQ(back->results[1].status().message(), "no 'x'");

  SsdReadReply refused;
  refused.request_id = 8;
  refused.status = Status(ErrorReason::kQueueFull, "full");
  back = DecodeSsdReadReply(EncodeSsdReadReply(refused));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->status.reason(), ErrorReason::kQueueFull);
  EXPECT_TRUE(back->results.empty());
}

TEST(UcxSsdReadMessagesTest, EveryTruncationIsRejected) {
  const std::string wire = EncodeSsdReadRequest(SampleRequest());
  for (size_t n = 0; n < wire.size(); ++n) {
    Result<SsdReadRequest> r = DecodeSsdReadRequest(wire.substr(0, n));
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes decoded";
    EXPECT_EQ(r.status().reason(), ErrorReason::kInvalidArgument);
  }
  SsdReadReply reply;
  reply.request_id = 1;
  reply.results.emplace_back(Status(ErrorReason::kIoError, "disk"));
  const std::string reply_wire = EncodeSsdReadReply(reply);
  for (size_t n = 0; n < reply_wire.size(); ++n) {
    EXPECT_FALSE(DecodeSsdReadReply(reply_wire.substr(0, n)).ok());
  }
}

TEST(UcxSsdReadMessagesTest, GarbageAndLiesAreRejected) {
  EXPECT_FALSE(DecodeSsdReadRequest("not a message at all").ok());
  std::string wire = EncodeSsdReadRequest(SampleRequest());
  // Trailing bytes.
  EXPECT_FALSE(DecodeSsdReadRequest(wire + "x").ok());
  // A reply is not a request.
  SsdReadReply reply;
  EXPECT_FALSE(DecodeSsdReadRequest(EncodeSsdReadReply(reply)).ok());
  // Header survives body damage: the node can still answer.
  std::string damaged = wire;
  damaged.resize(damaged.size() - 3);
  EXPECT_FALSE(DecodeSsdReadRequest(damaged).ok());
  Result<SsdReadRequestHeader> header = DecodeSsdReadRequestHeader(damaged);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->request_id, 42u);
  // A length field claiming more than the message holds.
  SsdReadRequest huge = SampleRequest();
  huge.ops[0].key = std::string(kMaxSsdReadKeyBytes + 1, 'k');
  EXPECT_FALSE(DecodeSsdReadRequest(EncodeSsdReadRequest(huge)).ok());
  // A buffer that wraps the address space.
  SsdReadRequest wraps = SampleRequest();
  wraps.ops[0].address = UINT64_MAX - 10;
  EXPECT_FALSE(DecodeSsdReadRequest(EncodeSsdReadRequest(wraps)).ok());
  // An unknown error reason in a reply.
  SsdReadReply bad;
  bad.results.emplace_back(Status(ErrorReason::kIoError, "x"));
  std::string bad_wire = EncodeSsdReadReply(bad);
  // Result reason sits after header (16) + status (2 + 2) + count (4).
  bad_wire[24] = '\xff';
  bad_wire[25] = '\x7f';
  EXPECT_FALSE(DecodeSsdReadReply(bad_wire).ok());
}

}  // namespace
}  // namespace mooncake_tier
