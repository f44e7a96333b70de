// GET and PATCH /api/v1/config against a real server and master.

#include "admin_server/admin_test_fixture.h"

namespace mooncake_tier::admin {
namespace {

using nlohmann::json;

TEST_F(AdminServerTest, GetConfigShowsTheEffectiveKnobs) {
  const Reply reply = Get("/api/v1/config");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["shard_count"], 16);
  EXPECT_EQ(reply.body["eviction_high_watermark"], 0.9);
  EXPECT_EQ(reply.body["offload_mode"], "off");
  EXPECT_EQ(reply.body["promotion"]["admission_threshold"], 2);
  EXPECT_EQ(reply.body["promotion"]["policy"], "threshold");
  EXPECT_EQ(reply.body["promotion"]["task_timeout_ms"], 30000);
}

TEST_F(AdminServerTest, PatchChangesPromotionKnobsAndShowsThem) {
  const json patch = {{"promotion",
                       {{"admission_threshold", 4},
                        {"policy", "tinylfu"},
                        {"task_timeout_ms", 5000},
                        {"drop_source", true}}}};
  ExpectError(Call("PATCH", "/api/v1/config", patch.dump(), false), 401,
              "TOKEN_REQUIRED");
  EXPECT_EQ(h_.master().promotion_options().admission_threshold, 2u);

  const Reply reply = Call("PATCH", "/api/v1/config", patch.dump());
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["promotion"]["admission_threshold"], 4);
  const PromotionOptions now = h_.master().promotion_options();
  EXPECT_EQ(now.admission_threshold, 4u);
  EXPECT_EQ(now.policy, PromotionPolicy::kTinyLfu);
  EXPECT_EQ(now.task_timeout, std::chrono::seconds(5));
  EXPECT_TRUE(now.drop_source);
  EXPECT_EQ(now.queue_limit, 50000u);  // untouched
  EXPECT_EQ(Get("/api/v1/config").body["promotion"]["policy"], "tinylfu");
}

TEST_F(AdminServerTest, PatchRejectsMalformedInputAndChangesNothing) {
  const std::string path = "/api/v1/config";
  ExpectError(Call("PATCH", path, "{not json"), 400, "INVALID_ARGUMENT");
  ExpectError(Call("PATCH", path, "[1,2]"), 400, "INVALID_ARGUMENT");
  ExpectError(Call("PATCH", path, R"({"bogus": 1})"), 400, "INVALID_ARGUMENT");
  ExpectError(Call("PATCH", path, R"({"promotion": {"bogus": 1}})"), 400,
              "INVALID_ARGUMENT");
  ExpectError(Call("PATCH", path, R"({"promotion": 3})"), 400,
              "INVALID_ARGUMENT");
  ExpectError(
      Call("PATCH", path, R"({"promotion": {"admission_threshold": -1}})"), 400,
      "INVALID_ARGUMENT");
  ExpectError(
      Call("PATCH", path, R"({"promotion": {"admission_threshold": "3"}})"),
      400, "INVALID_ARGUMENT");
  ExpectError(
      Call("PATCH", path, R"({"promotion": {"admission_threshold": 1.5}})"),
      400, "INVALID_ARGUMENT");
  // Valid JSON, invalid value (the engine's own validation).
  ExpectError(
      Call("PATCH", path, R"({"promotion": {"admission_threshold": 0}})"), 400,
      "INVALID_ARGUMENT");
  ExpectError(Call("PATCH", path, R"({"promotion": {"policy": "lru"}})"), 400,
              "INVALID_ARGUMENT");
  ExpectError(Call("PATCH", path, R"({"shard_count": 8})"), 400,
              "NOT_RUNTIME_TUNABLE");
  // A bad field anywhere means nothing changes.
  ExpectError(Call("PATCH", path,
                   R"({"promotion": {"admission_threshold": 7}, "x": 1})"),
              400, "INVALID_ARGUMENT");
  EXPECT_EQ(h_.master().promotion_options().admission_threshold, 2u);
}

TEST_F(AdminServerTest, PatchOfOtherRuntimeKnobsIsNotImplementedYet) {
  const std::string path = "/api/v1/config";
  ExpectError(Call("PATCH", path, R"({"eviction_high_watermark": 0.8})"), 501,
              "NOT_IMPLEMENTED");
  ExpectError(Call("PATCH", path, R"({"eviction_high_watermark": "high"})"),
              400, "INVALID_ARGUMENT");
  // Nothing of a patch applies when part of it cannot.
  ExpectError(Call("PATCH", path,
                   R"({"group_fill_timeout_ms": 1000,
                       "promotion": {"admission_threshold": 9}})"),
              501, "NOT_IMPLEMENTED");
  EXPECT_EQ(h_.master().promotion_options().admission_threshold, 2u);
}

}  // namespace
}  // namespace mooncake_tier::admin
