#include "core/promotion_admission.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/admission_sketch.h"
#include "core/threshold_admission.h"
#include "core/tinylfu_admission.h"

namespace mooncake_tier {
namespace promotion_admission_test {
namespace {

constexpr uint64_t kBlock = 1 << 20;

AdmissionQuery Query(uint32_t estimate, uint32_t threshold,
                     const std::vector<AdmissionVictim>& victims = {},
                     uint64_t bytes = kBlock) {
  AdmissionQuery query;
  query.estimate = estimate;
  query.threshold = threshold;
  query.bytes = bytes;
  query.victims = victims;
  return query;
}

TEST(PromotionPolicyTest, NamesRoundTrip) {
  for (PromotionPolicy policy :
       {PromotionPolicy::kThreshold, PromotionPolicy::kTinyLfu}) {
    EXPECT_EQ(ParsePromotionPolicy(PromotionPolicyName(policy)), policy);
  }
  EXPECT_EQ(PromotionPolicyName(PromotionPolicy::kThreshold), "threshold");
  EXPECT_EQ(PromotionPolicyName(PromotionPolicy::kTinyLfu), "tinylfu");
  EXPECT_EQ(ParsePromotionPolicy("TinyLFU"), std::nullopt);
  EXPECT_EQ(ParsePromotionPolicy(""), std::nullopt);
  EXPECT_EQ(ParsePromotionPolicy("lru"), std::nullopt);
}

TEST(PromotionPolicyTest, FactoryBuildsThePolicy) {
  for (PromotionPolicy policy :
       {PromotionPolicy::kThreshold, PromotionPolicy::kTinyLfu}) {
    std::unique_ptr<PromotionAdmission> admission =
        MakePromotionAdmission(policy);
    ASSERT_NE(admission, nullptr);
    EXPECT_EQ(admission->policy(), policy);
  }
}

TEST(ThresholdAdmissionTest, AdmitsFromTheThresholdOn) {
  ThresholdAdmission admission;
  EXPECT_FALSE(admission.Admit(Query(1, 2)));
  EXPECT_TRUE(admission.Admit(Query(2, 2)));
  EXPECT_TRUE(admission.Admit(Query(3, 2)));
  EXPECT_FALSE(admission.Admit(Query(9, 10)));
  // Thresholds 0 and 1 admit every read.
  EXPECT_TRUE(admission.Admit(Query(1, 1)));
  EXPECT_TRUE(admission.Admit(Query(1, 0)));
}

TEST(ThresholdAdmissionTest, IgnoresVictims) {
  ThresholdAdmission admission;
  const std::vector<AdmissionVictim> hot = {{200, kBlock}};
  EXPECT_TRUE(admission.Admit(Query(2, 2, hot)));
  EXPECT_FALSE(admission.Admit(Query(1, 2, hot)));
}

TEST(TinyLfuAdmissionTest, WithoutVictimsAdmitsOnTheThresholdAlone) {
  TinyLfuAdmission admission;
  EXPECT_FALSE(admission.Admit(Query(1, 2)));
  EXPECT_TRUE(admission.Admit(Query(2, 2)));
  EXPECT_TRUE(admission.Admit(Query(255, 2)));
}

TEST(TinyLfuAdmissionTest, ThresholdStillGatesAgainstColdVictims) {
  TinyLfuAdmission admission;
  const std::vector<AdmissionVictim> cold = {{0, kBlock}};
  EXPECT_FALSE(admission.Admit(Query(1, 2, cold)));
  EXPECT_TRUE(admission.Admit(Query(2, 2, cold)));
}

TEST(TinyLfuAdmissionTest, TiesDoNotAdmit) {
  TinyLfuAdmission admission;
  const std::vector<AdmissionVictim> same = {{5, kBlock}};
  EXPECT_FALSE(admission.Admit(Query(5, 2, same)));
  EXPECT_TRUE(admission.Admit(Query(6, 2, same)));
  // A tie in read bytes is a tie too: twice the size, half the reads.
  const std::vector<AdmissionVictim> two = {{5, kBlock}, {5, kBlock}};
  EXPECT_FALSE(admission.Admit(Query(5, 2, two, 2 * kBlock)));
}

TEST(TinyLfuAdmissionTest, HotCandidateDisplacesColdVictims) {
  TinyLfuAdmission admission;
  const std::vector<AdmissionVictim> cold = {{1, kBlock}, {2, kBlock}};
  EXPECT_TRUE(admission.Admit(Query(20, 2, cold, 2 * kBlock)));
}

TEST(TinyLfuAdmissionTest, ColdCandidateDoesNotDisplaceHotVictim) {
  TinyLfuAdmission admission;
  const std::vector<AdmissionVictim> hot = {{40, kBlock}};
  EXPECT_FALSE(admission.Admit(Query(3, 2, hot)));
  // The threshold policy would have let it in.
  EXPECT_TRUE(ThresholdAdmission().Admit(Query(3, 2, hot)));
}

TEST(TinyLfuAdmissionTest, VictimsWeighByTheBytesTheyFree) {
  TinyLfuAdmission admission;
  // A small hot victim beside a large cold one: 30 x 64 KiB + 1 x ~1 MiB of
  // reads lost against 4 x 1 MiB gained.
  const std::vector<AdmissionVictim> mixed = {{30, 64 << 10},
                                              {1, kBlock - (64 << 10)}};
  EXPECT_TRUE(admission.Admit(Query(4, 2, mixed)));
  // Many lukewarm victims together outweigh the candidate.
  const std::vector<AdmissionVictim> lukewarm(16, {3, kBlock / 4});
  EXPECT_FALSE(admission.Admit(Query(10, 2, lukewarm)));  // 10 < 12
  EXPECT_TRUE(admission.Admit(Query(13, 2, lukewarm)));
}

TEST(TinyLfuAdmissionTest, ZeroSizesCountAsOneByte) {
  TinyLfuAdmission admission;
  const std::vector<AdmissionVictim> one = {{4, 0}};
  EXPECT_TRUE(admission.Admit(Query(5, 2, one, 0)));
  EXPECT_FALSE(admission.Admit(Query(4, 2, one, 0)));
}

TEST(TinyLfuAdmissionTest, HugeSizesDoNotOverflow) {
  TinyLfuAdmission admission;
  const uint64_t huge = uint64_t{1} << 62;
  const std::vector<AdmissionVictim> victims(8, {255, huge});
  EXPECT_FALSE(admission.Admit(Query(255, 2, victims, huge)));
  const std::vector<AdmissionVictim> one = {{254, huge}};
  EXPECT_TRUE(admission.Admit(Query(255, 2, one, huge)));
}

// The sketch and the policy together: a scan of keys read twice each passes
// the threshold but cannot push out a block the workload keeps reading.
TEST(TinyLfuAdmissionTest, ScanDoesNotDisplaceAHotBlock) {
  AdmissionSketch sketch;
  const uint64_t hot = 0xfeed;
  for (int i = 0; i < 30; ++i) sketch.Increment(hot);
  TinyLfuAdmission tinylfu;
  ThresholdAdmission threshold;
  int threshold_admits = 0, tinylfu_admits = 0;
  for (uint64_t key = 1; key <= 500; ++key) {
    const uint64_t hash = key * 0x9e3779b97f4a7c15ull;
    sketch.Increment(hash);
    const uint32_t estimate = sketch.Increment(hash);
    const std::vector<AdmissionVictim> victims = {
        {sketch.Estimate(hot), kBlock}};
    if (threshold.Admit(Query(estimate, 2, victims))) ++threshold_admits;
    if (tinylfu.Admit(Query(estimate, 2, victims))) ++tinylfu_admits;
  }
  EXPECT_EQ(threshold_admits, 500);
  EXPECT_EQ(tinylfu_admits, 0);
  // Once the scan key is read more than the resident, it wins.
  const uint64_t riser = 0xbeef;
  uint32_t estimate = 0;
  for (int i = 0; i < 31; ++i) estimate = sketch.Increment(riser);
  const std::vector<AdmissionVictim> victims = {{sketch.Estimate(hot), kBlock}};
  EXPECT_EQ(sketch.Estimate(hot), 30u);
  EXPECT_TRUE(tinylfu.Admit(Query(estimate, 2, victims)));
}

}  // namespace
}  // namespace promotion_admission_test
}  // namespace mooncake_tier
