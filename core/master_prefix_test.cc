// Master::ProbePrefix: the longest readable prefix of a key list, as an
// engine looks up a prompt's cached blocks.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/byte_units.h"
#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_prefix_test {
namespace {

using testing::MasterHarness;

PutOptions Member(const std::string& group, uint32_t size, uint32_t index) {
  PutOptions o;
  o.group = GroupSpec{group, size, index};
  return o;
}

TEST(MasterPrefixTest, CountsReadableKeysFromTheFirstAndStopsAtAMiss) {
  MasterHarness h;
  h.AddNode("n", 16 * kMiB);
  ASSERT_TRUE(h.Put("a", 1000).ok());
  ASSERT_TRUE(h.Put("b", 2000).ok());
  ASSERT_TRUE(h.Put("d", 4000).ok());  // after the gap: not counted
  const std::vector<std::string> keys = {"a", "b", "c", "d"};
  Result<PrefixInfo> prefix = h.master().ProbePrefix(keys);
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  EXPECT_EQ(prefix->length, 2u);
  EXPECT_EQ(prefix->bytes, 3000u);

  ASSERT_TRUE(h.Put("c", 3000).ok());
  prefix = h.master().ProbePrefix(keys);
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->length, 4u);
  EXPECT_EQ(prefix->bytes, 10000u);

  // Nothing to probe (a client's health check: answered, not counted), or
  // a first key missing.
  EXPECT_EQ(h.master().ProbePrefix({})->length, 0u);
  const std::vector<std::string> cold = {"x", "a"};
  EXPECT_EQ(h.master().ProbePrefix(cold)->length, 0u);
  EXPECT_EQ(h.master().GetStats().prefix_probes, 3u);
}

TEST(MasterPrefixTest, SaysHowMuchOfThePrefixIsInDram) {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.offload_mode = OffloadMode::kWriteThrough;
  MasterHarness h(config);
  const NodeId node = h.AddNode("n", 8 * kMiB, 64 * kMiB);
  std::vector<std::string> keys;
  for (int i = 0; i < 6; ++i) {
    keys.push_back("k" + std::to_string(i));
    ASSERT_TRUE(h.Put(keys.back(), kMiB).ok());
    h.clock().Advance(std::chrono::seconds(1));
  }
  while (h.CompleteOffloads(node) > 0) {
  }
  h.master().EvictMemory(3 * kMiB);  // the coldest keep only an SSD copy
  uint64_t in_memory = 0;
  for (const std::string& key : keys) {
    const std::vector<Tier> tiers = h.Tiers(key);
    ASSERT_FALSE(tiers.empty()) << key;
    if (tiers.front() == Tier::kMemory) in_memory += kMiB;
  }
  ASSERT_LT(in_memory, 6 * kMiB);
  ASSERT_GT(in_memory, 0u);
  Result<PrefixInfo> prefix = h.master().ProbePrefix(keys);
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->length, 6u);
  EXPECT_EQ(prefix->bytes, 6 * kMiB);
  EXPECT_EQ(prefix->memory_bytes, in_memory);
}

TEST(MasterPrefixTest, APutStillInFlightEndsThePrefix) {
  MasterHarness h;
  h.AddNode("n", 16 * kMiB);
  ASSERT_TRUE(h.Put("a", 1000).ok());
  ASSERT_TRUE(h.PutStart("b", 1000).ok());
  ASSERT_TRUE(h.Put("c", 1000).ok());
  const std::vector<std::string> keys = {"a", "b", "c"};
  EXPECT_EQ(h.master().ProbePrefix(keys)->length, 1u);
  ASSERT_TRUE(h.PutEnd("b").ok());
  EXPECT_EQ(h.master().ProbePrefix(keys)->length, 3u);
}

TEST(MasterPrefixTest, AMemberOfAnIncompleteGroupEndsThePrefix) {
  MasterHarness h;
  h.AddNode("n", 16 * kMiB);
  // Block 0 is a complete group of two; block 1's group lacks a member.
  ASSERT_TRUE(h.Put("b0/0", 1000, Member("b0", 2, 0)).ok());
  ASSERT_TRUE(h.Put("b0/1", 1000, Member("b0", 2, 1)).ok());
  ASSERT_TRUE(h.Put("b1/0", 1000, Member("b1", 2, 0)).ok());
  const std::vector<std::string> keys = {"b0/0", "b0/1", "b1/0", "b1/1"};
  Result<PrefixInfo> prefix = h.master().ProbePrefix(keys);
  ASSERT_TRUE(prefix.ok());
  // b1/0 exists, but a get of it answers GROUP_INCOMPLETE: not readable.
  EXPECT_EQ(prefix->length, 2u);
  ASSERT_TRUE(h.Put("b1/1", 1000, Member("b1", 2, 1)).ok());
  EXPECT_EQ(h.master().ProbePrefix(keys)->length, 4u);
}

TEST(MasterPrefixTest, ABadKeyAnywhereFailsTheWholeProbe) {
  MasterHarness h;
  h.AddNode("n", 16 * kMiB);
  ASSERT_TRUE(h.Put("a", 1000).ok());
  const std::vector<std::string> keys = {"a", "missing", ""};
  Result<PrefixInfo> prefix = h.master().ProbePrefix(keys);
  ASSERT_FALSE(prefix.ok());
  EXPECT_EQ(prefix.status().reason(), ErrorReason::kInvalidKey);
  EXPECT_NE(prefix.status().message().find("key 2"), std::string::npos)
      << prefix.status().ToString();
  EXPECT_EQ(h.master().GetStats().prefix_probes, 0u);
}

TEST(MasterPrefixTest, AProbeGrantsNoLeaseAndCountsNoAccess) {
  MasterHarness h;
  h.AddNode("n", 16 * kMiB);
  ASSERT_TRUE(h.Put("a", 1000).ok());
  const std::vector<std::string> keys = {"a"};
  ASSERT_EQ(h.master().ProbePrefix(keys)->length, 1u);
  // A lease would refuse an unforced removal (OBJECT_LEASED).
  EXPECT_TRUE(h.Remove("a").ok());
  EXPECT_EQ(h.master().GetStats().get_memory_hit, 0u);
}

}  // namespace
}  // namespace master_prefix_test
}  // namespace mooncake_tier
