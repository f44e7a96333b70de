#include "transport/ucx_ssd_read_messages.h"

#include <gtest/gtest.h>

#include <string>

namespace mooncake_tier {
namespace ucx_ssd_read_messages_test {
namespace {

SsdReadRequest SampleRequest() {
  SsdReadRequest request;
  request.header.request_id = 42;
  request.header.budget_ms = 3000;
  request.header.reply_address = std::string("\x01\x00\x02worker", 9);
  request.ops.push_back({"key-a", 64, 0x1000, "rkey-a"});
  request.ops.push_back({"key-b", 0, 0, ""});
  return request;
}

SsdReadRequest SampleStagedRequest() {
  SsdReadRequest request;
  request.header.request_id = 43;
  request.header.budget_ms = 2500;
  request.header.flags = kSsdReadFlagStaged;
  request.header.reply_address = "worker";
  request.ops.push_back({"key-a", 1 << 20, 0, ""});
  request.ops.push_back({"key-b", 1, 0, ""});
  return request;
}

SsdReadReply SampleStagedReply() {
  SsdReadReply reply;
  reply.request_id = 43;
  reply.staged = true;
  reply.lease_id = 9;
  reply.lease_ms = 7500;
  reply.results.emplace_back(uint64_t{1000});
  reply.offsets.push_back(uint64_t{1} << 30);
  reply.results.emplace_back(Status(ErrorReason::kObjectNotFound, "gone"));
  reply.offsets.push_back(0);
  return reply;
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
  // Result reason sits after header (16) + status (2 + 2) + flags (4) +
  // count (4).
  ASSERT_TRUE(DecodeSsdReadReply(bad_wire).ok());
  bad_wire[28] = '\xff';
  bad_wire[29] = '\x7f';
  EXPECT_FALSE(DecodeSsdReadReply(bad_wire).ok());
}

TEST(UcxSsdReadMessagesTest, StagedRequestCarriesKeysAndLengthsOnly) {
  const std::string wire = EncodeSsdReadRequest(SampleStagedRequest());
  Result<SsdReadRequest> back = DecodeSsdReadRequest(wire);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->header.staged());
  EXPECT_EQ(back->header.budget_ms, 2500u);
  ASSERT_EQ(back->ops.size(), 2u);
  EXPECT_EQ(back->ops[0].key, "key-a");
  EXPECT_EQ(back->ops[0].length, 1u << 20);
  EXPECT_EQ(back->ops[0].address, 0u);
  EXPECT_TRUE(back->ops[0].packed_key.empty());
  EXPECT_EQ(back->ops[1].length, 1u);
  // Shorter than the unstaged form of the same request: no address, no key.
  SsdReadRequest unstaged = SampleStagedRequest();
  unstaged.header.flags = 0;
  for (SsdReadRequestOp& op : unstaged.ops) {
    op.address = 0x1000;
    op.packed_key = "k";
  }
  EXPECT_EQ(EncodeSsdReadRequest(unstaged).size(), wire.size() + 2 * 13);
  for (size_t n = 0; n < wire.size(); ++n) {
    Result<SsdReadRequest> cut = DecodeSsdReadRequest(wire.substr(0, n));
    ASSERT_FALSE(cut.ok()) << n;
    EXPECT_EQ(cut.status().reason(), ErrorReason::kInvalidArgument);
  }
  EXPECT_FALSE(DecodeSsdReadRequest(wire + "x").ok());
}

TEST(UcxSsdReadMessagesTest, UnknownRequestFlagsAreMalformedButAnswerable) {
  SsdReadRequest request = SampleStagedRequest();
  request.header.flags = kSsdReadFlagStaged | 0x80;
  const std::string wire = EncodeSsdReadRequest(request);
  Result<SsdReadRequest> back = DecodeSsdReadRequest(wire);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().reason(), ErrorReason::kInvalidArgument);
  Result<SsdReadRequestHeader> header = DecodeSsdReadRequestHeader(wire);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->request_id, 43u);
  EXPECT_EQ(header->reply_address, "worker");
}

TEST(UcxSsdReadMessagesTest, StagedReplyRoundTripsWithOffsetsAndLease) {
  const std::string wire = EncodeSsdReadReply(SampleStagedReply());
  Result<SsdReadReply> back = DecodeSsdReadReply(wire);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->staged);
  EXPECT_FALSE(back->staging_refused);
  EXPECT_EQ(back->lease_id, 9u);
  EXPECT_EQ(back->lease_ms, 7500u);
  ASSERT_EQ(back->results.size(), 2u);
  ASSERT_EQ(back->offsets.size(), 2u);
  EXPECT_EQ(*back->results[0], 1000u);
  EXPECT_EQ(back->offsets[0], uint64_t{1} << 30);
  EXPECT_EQ(back->results[1].status().reason(), ErrorReason::kObjectNotFound);
  EXPECT_EQ(back->offsets[1], 0u);
  for (size_t n = 0; n < wire.size(); ++n) {
    Result<SsdReadReply> cut = DecodeSsdReadReply(wire.substr(0, n));
    ASSERT_FALSE(cut.ok()) << n;
    EXPECT_EQ(cut.status().reason(), ErrorReason::kInvalidArgument);
  }
  EXPECT_FALSE(DecodeSsdReadReply(wire + "x").ok());

  // An unstaged reply carries no offsets.
  SsdReadReply plain;
  plain.request_id = 1;
  plain.results.emplace_back(uint64_t{5});
  back = DecodeSsdReadReply(EncodeSsdReadReply(plain));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->staged);
  EXPECT_TRUE(back->offsets.empty());
}

TEST(UcxSsdReadMessagesTest, StagedRepliesThatLieAreRejected) {
  // A staged value of some bytes with no lease to release.
  SsdReadReply no_lease = SampleStagedReply();
  no_lease.lease_id = 0;
  EXPECT_FALSE(DecodeSsdReadReply(EncodeSsdReadReply(no_lease)).ok());
  // ... unless there is nothing to copy.
  SsdReadReply empty = SampleStagedReply();
  empty.lease_id = 0;
  empty.results[0] = uint64_t{0};
  EXPECT_TRUE(DecodeSsdReadReply(EncodeSsdReadReply(empty)).ok());
  // An offset whose range wraps.
  SsdReadReply wraps = SampleStagedReply();
  wraps.offsets[0] = UINT64_MAX - 10;
  EXPECT_FALSE(DecodeSsdReadReply(EncodeSsdReadReply(wraps)).ok());
  // Staged but failed, refused but OK.
  SsdReadReply staged_failure;
  staged_failure.staged = true;
  staged_failure.status = Status(ErrorReason::kQueueFull, "full");
  EXPECT_FALSE(DecodeSsdReadReply(EncodeSsdReadReply(staged_failure)).ok());
  SsdReadReply refused_ok;
  refused_ok.staging_refused = true;
  EXPECT_FALSE(DecodeSsdReadReply(EncodeSsdReadReply(refused_ok)).ok());
  // Unknown reply flags (flags sit after header (16) + status (2 + 2)).
  std::string unknown = EncodeSsdReadReply(SampleStagedReply());
  ASSERT_TRUE(DecodeSsdReadReply(unknown).ok());
  unknown[20] = '\x04';
  EXPECT_FALSE(DecodeSsdReadReply(unknown).ok());
  // A refusal decodes with its reason.
  SsdReadReply refused;
  refused.request_id = 3;
  refused.staging_refused = true;
  refused.status = Status(ErrorReason::kQueueFull, "staging full");
  Result<SsdReadReply> back = DecodeSsdReadReply(EncodeSsdReadReply(refused));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->staging_refused);
  EXPECT_EQ(back->status.reason(), ErrorReason::kQueueFull);
  // A failed reply may not carry results.
  std::string with_results = EncodeSsdReadReply(refused);
  with_results.back() = '\x01';  // count 1, no result bytes follow
  EXPECT_FALSE(DecodeSsdReadReply(with_results).ok());
}

TEST(UcxSsdReadMessagesTest, ReleaseRoundTripsAndIsStrict) {
  const std::string wire = EncodeSsdReadRelease(77);
  Result<uint64_t> back = DecodeSsdReadRelease(wire);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, 77u);
  for (size_t n = 0; n < wire.size(); ++n) {
    Result<uint64_t> cut = DecodeSsdReadRelease(wire.substr(0, n));
    ASSERT_FALSE(cut.ok()) << n;
    EXPECT_EQ(cut.status().reason(), ErrorReason::kInvalidArgument);
  }
  EXPECT_FALSE(DecodeSsdReadRelease(wire + "x").ok());
  EXPECT_FALSE(DecodeSsdReadRelease(EncodeSsdReadRelease(0)).ok());
  // Other kinds are not releases, nor the other way round.
  EXPECT_FALSE(DecodeSsdReadRelease(EncodeSsdReadReply(SsdReadReply{})).ok());
  EXPECT_FALSE(DecodeSsdReadReply(wire).ok());
  EXPECT_FALSE(DecodeSsdReadRequest(wire).ok());
  // Another version is refused.
  std::string old = wire;
  old[4] = '\x01';
  EXPECT_FALSE(DecodeSsdReadRelease(old).ok());
}

}  // namespace
}  // namespace ucx_ssd_read_messages_test
}  // namespace mooncake_tier
