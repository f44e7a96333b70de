// The pure parts of mooncake-tierctl: endpoint parsing, percent-encoding,
// human formats, config patches and the /metrics filter.

#include <gtest/gtest.h>

#include <regex>

#include "cli/admin_client.h"
#include "cli/config_patch.h"
#include "cli/format.h"
#include "cli/metrics_filter.h"

namespace mooncake_tier::cli {
namespace cli_pure_test {
namespace {

using nlohmann::json;

TEST(ParseEndpointTest, AcceptsUrlsAndHostPorts) {
  Result<AdminEndpoint> e = ParseEndpoint("http://127.0.0.1:9003");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->scheme, "http");
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 9003);
  EXPECT_EQ(e->prefix, "");
  EXPECT_EQ(e->ToString(), "http://127.0.0.1:9003");

  e = ParseEndpoint("localhost:9300");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->scheme, "http");
  EXPECT_EQ(e->host, "localhost");
  EXPECT_EQ(e->port, 9300);

  e = ParseEndpoint("https://admin.example/tier/");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->port, 443);
  EXPECT_EQ(e->prefix, "/tier");

  e = ParseEndpoint("http://[::1]:9003");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "[::1]");
  EXPECT_EQ(e->port, 9003);
}

TEST(ParseEndpointTest, RejectsWhatIsNotAnEndpoint) {
  for (const char* bad :
       {"", "ftp://h:1", "http://", "http://:9003", "http://h:", "http://h:0",
        "http://h:70000", "http://h:12ab", "http://[::1", "http://u@h:1",
        "http://h:1?x=1"}) {
    Result<AdminEndpoint> e = ParseEndpoint(bad);
    EXPECT_FALSE(e.ok()) << bad;
    if (!e.ok()) {
      EXPECT_EQ(e.status().reason(), ErrorReason::kInvalidArgument);
    }
  }
}

TEST(PercentEncodeTest, KeepsUnreservedAndEncodesTheRest) {
  EXPECT_EQ(PercentEncode("abc-XYZ_0.9~"), "abc-XYZ_0.9~");
  EXPECT_EQ(PercentEncode("layer 0/blk%1"), "layer%200%2Fblk%251");
  EXPECT_EQ(PercentEncode("\xD0\xBA"), "%D0%BA");
  EXPECT_EQ(PercentEncode(std::string("a\0b", 3)), "a%00b");
}

TEST(FormatTest, HumanUnits) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(4096), "4.0 KiB");
  EXPECT_EQ(HumanBytes(3ull << 29), "1.5 GiB");
  EXPECT_EQ(HumanMillis(250), "250ms");
  EXPECT_EQ(HumanMillis(2500), "2.5s");
  EXPECT_EQ(HumanMillis(200'000), "3m20s");
  EXPECT_EQ(HumanMillis(7'500'000), "2h05m");
  EXPECT_EQ(Percent(0.253), "25.3%");
  EXPECT_EQ(Rate(12.5), "12.5/s");
}

TEST(FormatTest, CellsNeverThrowOnOddShapes) {
  const json object = {{"s", "x"}, {"n", 3}, {"b", true}, {"z", nullptr}};
  EXPECT_EQ(Cell(object, "s"), "x");
  EXPECT_EQ(Cell(object, "n"), "3");
  EXPECT_EQ(Cell(object, "b"), "true");
  EXPECT_EQ(Cell(object, "z"), "-");
  EXPECT_EQ(Cell(json("")), "-");
  EXPECT_EQ(Cell(object, "absent"), "-");
  EXPECT_EQ(Cell(json::array(), "s"), "-");
  EXPECT_TRUE(Field(json(5), "s").is_null());
  EXPECT_EQ(Number(object, "s", 7), 7);
  EXPECT_EQ(TierUse(nullptr), "-");
  EXPECT_EQ(TierUse({{"capacity_bytes", 4096},
                     {"used_bytes", 1024},
                     {"used_ratio", 0.25}}),
            "1.0 KiB / 4.0 KiB (25.0%)");
}

TEST(ConfigPatchTest, ParsesAssignmentsAndDurations) {
  Result<ConfigAssignment> a = ParseAssignment("promotion.policy=tinylfu");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->key, "promotion.policy");
  EXPECT_EQ(a->value, "tinylfu");
  a = ParseAssignment("k=a=b");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->value, "a=b");
  EXPECT_FALSE(ParseAssignment("novalue").ok());
  EXPECT_FALSE(ParseAssignment("=3").ok());

  EXPECT_EQ(*ParseDurationMs("30s"), 30000);
  EXPECT_EQ(*ParseDurationMs("250ms"), 250);
  EXPECT_EQ(*ParseDurationMs("250"), 250);
  EXPECT_EQ(*ParseDurationMs("2min"), 120000);
  EXPECT_EQ(*ParseDurationMs("1h"), 3600000);
  EXPECT_EQ(*ParseDurationMs("1.5s"), 1500);
  for (const char* bad : {"", "s", "-1s", "3 parsecs", "1.5ms", "1e30h"}) {
    EXPECT_FALSE(ParseDurationMs(bad).ok()) << bad;
  }
}

json CurrentConfig() {
  return json::parse(R"({
    "eviction_high_watermark": 0.9,
    "offload_mode": "off",
    "group_fill_timeout_ms": 60000,
    "promotion": {"on_hit": true, "admission_threshold": 2,
                  "task_timeout_ms": 30000, "proactive_low_watermark": 0.0,
                  "policy": "threshold"}
  })");
}

TEST(ConfigPatchTest, TypesValuesLikeTheCurrentConfig) {
  Result<json> patch = BuildConfigPatch(
      CurrentConfig(), {{"promotion.admission_threshold", "3"},
                        {"promotion.on_hit", "false"},
                        {"promotion.task_timeout", "45s"},
                        {"promotion.proactive_low_watermark", "0.25"},
                        {"promotion.policy", "tinylfu"},
                        {"eviction_high_watermark", "0.8"},
                        {"group_fill_timeout_ms", "2min"}});
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  const json expected = json::parse(R"({
    "eviction_high_watermark": 0.8,
    "group_fill_timeout_ms": 120000,
    "promotion": {"admission_threshold": 3, "on_hit": false,
                  "task_timeout_ms": 45000, "proactive_low_watermark": 0.25,
                  "policy": "tinylfu"}
  })");
  EXPECT_EQ(*patch, expected) << patch->dump();
  EXPECT_TRUE(
      (*patch)["promotion"]["admission_threshold"].is_number_unsigned());
}

TEST(ConfigPatchTest, RefusesUnknownKnobsBadValuesAndRepeats) {
  const json current = CurrentConfig();
  struct Case {
    ConfigAssignment assignment;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{"nope", "1"}, "unknown knob 'nope'"},
           {{"promotion.nope", "1"}, "unknown knob"},
           {{"nope.x", "1"}, "unknown knob"},
           {{"promotion", "1"}, "is a section"},
           {{"promotion.admission_threshold", "-1"}, "whole number >= 0"},
           {{"promotion.admission_threshold", "2.5"}, "whole number"},
           {{"promotion.on_hit", "maybe"}, "true or false"},
           {{"eviction_high_watermark", "high"}, "takes a number"},
           {{"promotion.task_timeout_ms", "soon"}, "not a duration"},
       }) {
    Result<json> patch = BuildConfigPatch(current, {c.assignment});
    ASSERT_FALSE(patch.ok()) << c.assignment.key;
    EXPECT_NE(patch.status().message().find(c.says), std::string::npos)
        << patch.status().message();
  }
  Result<json> twice =
      BuildConfigPatch(current, {{"promotion.task_timeout", "1s"},
                                 {"promotion.task_timeout_ms", "2000"}});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("twice"), std::string::npos);
}

TEST(ConfigPatchTest, ChangesListsLeavesThatDiffer) {
  json before = CurrentConfig();
  json after = before;
  after["promotion"]["admission_threshold"] = 5;
  after["offload_mode"] = "off";
  const json changes = ConfigChanges(before, after);
  EXPECT_EQ(changes, json::parse(R"({"promotion.admission_threshold":[2,5]})"));
  EXPECT_EQ(FlattenConfig(before).size(), 8u);
}

constexpr char kExposition[] =
    "# HELP mooncake_get_total Gets by result.\n"
    "# TYPE mooncake_get_total counter\n"
    "mooncake_get_total{result=\"memory_hit\"} 5\n"
    "mooncake_get_total{result=\"miss\"} 1\n"
    "\n"
    "# HELP mooncake_tier_used_bytes Bytes used.\n"
    "# TYPE mooncake_tier_used_bytes gauge\n"
    "mooncake_tier_used_bytes{tier=\"memory\"} 4096\n"
    "mooncake_tier_used_bytes{tier=\"local_disk\"} 0\n"
    "# HELP mooncake_rpc_duration_seconds Latency.\n"
    "# TYPE mooncake_rpc_duration_seconds histogram\n"
    "mooncake_rpc_duration_seconds_bucket{method=\"Get\",le=\"+Inf\"} 3\n"
    "mooncake_rpc_duration_seconds_sum{method=\"Get\"} 0.5\n"
    "mooncake_rpc_duration_seconds_count{method=\"Get\"} 3\n";

TEST(MetricsFilterTest, CutsTheTextIntoFamilies) {
  const std::vector<MetricFamily> families = ParseExposition(kExposition);
  ASSERT_EQ(families.size(), 3u);
  EXPECT_EQ(families[0].name, "mooncake_get_total");
  EXPECT_EQ(families[0].type, "counter");
  EXPECT_EQ(families[0].help, "Gets by result.");
  EXPECT_EQ(families[0].samples.size(), 2u);
  EXPECT_EQ(families[2].type, "histogram");
  EXPECT_EQ(families[2].samples.size(), 3u);
  EXPECT_EQ(RenderExposition(families).find('\n' + std::string("\n")),
            std::string::npos);  // blank lines dropped
}

TEST(MetricsFilterTest, KeepsMatchingSamplesWithTheirHelpAndType) {
  std::vector<MetricFamily> kept =
      FilterFamilies(ParseExposition(kExposition), std::regex("memory"));
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(RenderExposition(kept),
            "# HELP mooncake_get_total Gets by result.\n"
            "# TYPE mooncake_get_total counter\n"
            "mooncake_get_total{result=\"memory_hit\"} 5\n"
            "# HELP mooncake_tier_used_bytes Bytes used.\n"
            "# TYPE mooncake_tier_used_bytes gauge\n"
            "mooncake_tier_used_bytes{tier=\"memory\"} 4096\n");
  EXPECT_TRUE(
      FilterFamilies(ParseExposition(kExposition), std::regex("^nothing"))
          .empty());

  const json document = FamiliesJson(
      FilterFamilies(ParseExposition(kExposition), std::regex("_bucket")));
  ASSERT_EQ(document["families"].size(), 1u);
  const json& sample = document["families"][0]["samples"][0];
  EXPECT_EQ(sample["name"], "mooncake_rpc_duration_seconds_bucket");
  EXPECT_EQ(sample["labels"]["le"], "+Inf");
  EXPECT_EQ(sample["labels"]["method"], "Get");
  EXPECT_EQ(sample["value"], 3);
}

TEST(MetricsFilterTest, HistogramsCollapseToQuantilesSumAndCount) {
  // 10 observations: 4 up to 0.1 s, 5 more up to 1 s, 1 above.
  const std::string text =
      "# HELP mooncake_put_seconds Put latency.\n"
      "# TYPE mooncake_put_seconds histogram\n"
      "mooncake_put_seconds_bucket{tier=\"memory\",le=\"0.1\"} 4\n"
      "mooncake_put_seconds_bucket{tier=\"memory\",le=\"1\"} 9\n"
      "mooncake_put_seconds_bucket{tier=\"memory\",le=\"+Inf\"} 10\n"
      "mooncake_put_seconds_sum{tier=\"memory\"} 6.5\n"
      "mooncake_put_seconds_count{tier=\"memory\"} 10\n"
      "mooncake_put_seconds_bucket{tier=\"disk\",le=\"0.1\"} 0\n"
      "mooncake_put_seconds_bucket{tier=\"disk\",le=\"1\"} 0\n"
      "mooncake_put_seconds_bucket{tier=\"disk\",le=\"+Inf\"} 0\n"
      "mooncake_put_seconds_sum{tier=\"disk\"} 0\n"
      "mooncake_put_seconds_count{tier=\"disk\"} 0\n"
      "# HELP mooncake_gets_total Gets.\n"
      "# TYPE mooncake_gets_total counter\n"
      "mooncake_gets_total 7\n";
  const std::vector<MetricFamily> collapsed =
      CollapseHistograms(ParseExposition(text));
  // p50: rank 5 falls in (0.1, 1] holding 5: 0.1 + 0.9 * 1/5 = 0.28.
  // p99: rank 9.9 falls in +Inf: the highest finite bound, 1.
  EXPECT_EQ(RenderExposition(collapsed),
            "# HELP mooncake_put_seconds Put latency.\n"
            "# TYPE mooncake_put_seconds summary\n"
            "mooncake_put_seconds{tier=\"memory\",quantile=\"0.5\"} 0.28\n"
            "mooncake_put_seconds{tier=\"memory\",quantile=\"0.99\"} 1\n"
            "mooncake_put_seconds_sum{tier=\"memory\"} 6.5\n"
            "mooncake_put_seconds_count{tier=\"memory\"} 10\n"
            "mooncake_put_seconds{tier=\"disk\",quantile=\"0.5\"} NaN\n"
            "mooncake_put_seconds{tier=\"disk\",quantile=\"0.99\"} NaN\n"
            "mooncake_put_seconds_sum{tier=\"disk\"} 0\n"
            "mooncake_put_seconds_count{tier=\"disk\"} 0\n"
            "# HELP mooncake_gets_total Gets.\n"
            "# TYPE mooncake_gets_total counter\n"
            "mooncake_gets_total 7\n");
  // What --match sees afterwards: the summary lines.
  EXPECT_EQ(FilterFamilies(collapsed, std::regex("quantile=\"0.99\""))[0]
                .samples.size(),
            2u);
}

}  // namespace
}  // namespace cli_pure_test
}  // namespace mooncake_tier::cli
