// GET and PATCH /api/v1/config against a real server and master.

#include <thread>

#include "admin_server/admin_test_fixture.h"

namespace mooncake_tier::admin {
namespace admin_config_test {
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
  ExpectError(Call("PATCH", path, R"({"ssd_eviction_policy": "lfu"})"), 400,
              "INVALID_ARGUMENT");
  ExpectError(Call("PATCH", path, R"({"ssd_eviction_policy": 1})"), 400,
              "INVALID_ARGUMENT");
  ExpectError(Call("PATCH", path, R"({"shard_count": 8})"), 400,
              "NOT_RUNTIME_TUNABLE");
  // A bad field anywhere means nothing changes.
  ExpectError(Call("PATCH", path,
                   R"({"promotion": {"admission_threshold": 7}, "x": 1})"),
              400, "INVALID_ARGUMENT");
  EXPECT_EQ(h_.master().promotion_options().admission_threshold, 2u);
}

TEST_F(AdminServerTest, PatchChangesRuntimeKnobsAndShowsThem) {
  const std::string path = "/api/v1/config";
  const json patch = {{"eviction_high_watermark", 0.8},
                      {"eviction_ratio", 0.1},
                      {"ssd_high_watermark", 0.7},
                      {"ssd_eviction_ratio", 0.2},
                      {"ssd_eviction_policy", "lru"},
                      {"group_fill_timeout_ms", 1000},
                      {"group_broken_ttl_ms", 2000},
                      {"offload_max_per_pull", 4},
                      {"offload_queue_limit", 100},
                      {"promotion", {{"admission_threshold", 9}}}};
  ExpectError(Call("PATCH", path, patch.dump(), false), 401, "TOKEN_REQUIRED");
  EXPECT_EQ(h_.master().config().eviction_high_watermark, 0.9);

  const Reply reply = Call("PATCH", path, patch.dump());
  ASSERT_EQ(reply.status, 200) << reply.text;
  for (const auto& [name, value] : patch.items()) {
    if (name != "promotion") {
      EXPECT_EQ(reply.body[name], value) << name;
    }
  }
  EXPECT_EQ(reply.body["promotion"]["admission_threshold"], 9);
  const MasterConfig c = h_.master().config();
  EXPECT_EQ(c.eviction_high_watermark, 0.8);
  EXPECT_EQ(c.eviction_ratio, 0.1);
  EXPECT_EQ(c.ssd_high_watermark, 0.7);
  EXPECT_EQ(c.ssd_eviction_ratio, 0.2);
  EXPECT_EQ(c.ssd_eviction_policy, EvictionPolicyKind::kLru);
  EXPECT_EQ(c.group_fill_timeout, std::chrono::seconds(1));
  EXPECT_EQ(c.group_broken_ttl, std::chrono::seconds(2));
  EXPECT_EQ(c.offload_max_per_pull, 4u);
  EXPECT_EQ(c.offload_queue_limit, 100u);
  EXPECT_EQ(c.promotion.admission_threshold, 9u);
  const Reply shown = Get(path);
  EXPECT_EQ(shown.body["group_fill_timeout_ms"], 1000);
  EXPECT_EQ(shown.body["offload_queue_limit"], 100);
}

TEST_F(AdminServerTest, PatchOfRuntimeKnobsIsAllOrNothing) {
  const std::string path = "/api/v1/config";
  ExpectError(Call("PATCH", path, R"({"eviction_high_watermark": "high"})"),
              400, "INVALID_ARGUMENT");
  ExpectError(Call("PATCH", path, R"({"offload_queue_limit": -3})"), 400,
              "INVALID_ARGUMENT");
  ExpectError(Call("PATCH", path, R"({"offload_queue_limit": 0})"), 400,
              "INVALID_ARGUMENT");
  // Valid alone, invalid with the watermark that stays (0.9).
  ExpectError(Call("PATCH", path,
                   R"({"eviction_ratio": 0.95,
                       "group_fill_timeout_ms": 1000,
                       "promotion": {"admission_threshold": 9}})"),
              400, "INVALID_ARGUMENT");
  // A valid knob beside an invalid promotion value.
  ExpectError(Call("PATCH", path,
                   R"({"eviction_high_watermark": 0.5,
                       "promotion": {"admission_threshold": 0}})"),
              400, "INVALID_ARGUMENT");
  const MasterConfig c = h_.master().config();
  EXPECT_EQ(c.eviction_ratio, 0.05);
  EXPECT_EQ(c.eviction_high_watermark, 0.9);
  EXPECT_EQ(c.group_fill_timeout, std::chrono::seconds(60));
  EXPECT_EQ(c.offload_queue_limit, 4096u);
  EXPECT_EQ(c.promotion.admission_threshold, 2u);
  // The pair changes together.
  const Reply both = Call("PATCH", path,
                          R"({"eviction_high_watermark": 0.99,
                              "eviction_ratio": 0.95})");
  ASSERT_EQ(both.status, 200) << both.text;
  EXPECT_EQ(h_.master().config().eviction_ratio, 0.95);
}

// Two operators patching different promotion knobs at once: each PATCH
// applies over the other's, so both last values stay (a read-modify-write
// at the edge would let one PATCH restore the other's old value).
TEST_F(AdminServerTest, ConcurrentPatchesOfDifferentFieldsAreNotLost) {
  constexpr int kPatches = 40;
  auto patcher = [this](const std::string& field, int first) {
    httplib::Client client("127.0.0.1", server_->port());
    httplib::Headers headers{
        {"Authorization", std::string("Bearer ") + kToken}};
    for (int i = 0; i < kPatches; ++i) {
      const json patch = {{"promotion", {{field, first + i}}}};
      auto res = client.Patch("/api/v1/config", headers, patch.dump(),
                              "application/json");
      ASSERT_TRUE(res);
      ASSERT_EQ(res->status, 200) << res->body;
    }
  };
  std::thread a(patcher, "admission_threshold", 3);
  std::thread b(patcher, "max_per_pull", 10);
  a.join();
  b.join();
  const PromotionOptions now = h_.master().promotion_options();
  EXPECT_EQ(now.admission_threshold, 3u + kPatches - 1);
  EXPECT_EQ(now.max_per_pull, 10u + kPatches - 1);
}

}  // namespace
}  // namespace admin_config_test
}  // namespace mooncake_tier::admin
