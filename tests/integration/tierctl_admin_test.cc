// mooncake-tierctl's admin command groups, end to end: the real binary, run
// as a child process, against a real AdminServer (with a token and real
// /metrics) over a real Master in this process (tests/support/
// master_harness.h, on a manual clock; the fixture is in
// tierctl_admin_fixture.h). For each command: the table output, the JSON
// output and the exit code; 404 exits 3, a missing token exits 1 with a
// hint; percent-encoded keys.
//
// tierctl_top_test.cc has `top`; tierctl_usage_test.cc bad usage, help,
// the environment and wrong or unreachable endpoints (a storage node's admin
// port); tierctl_daemon_test.cc runs every command against the real daemon
// of this tree.

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/tierctl_admin_fixture.h"
#include "tests/integration/tierctl_test_util.h"
#include "tests/support/run_command.h"

namespace mooncake_tier::testing {
namespace tierctl_admin_test {
namespace {

using namespace tierctl;  // NOLINT(build/namespaces): test helpers

TEST_F(TierctlAdminTest, StatusPrintsTiersGroupsAndQueues) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());
  ASSERT_TRUE(h_.Get("k").ok());
  LoadGroups();

  CommandResult table = Ctl({"status"});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_TRUE(Contains(table.out, "memory")) << table.out;
  EXPECT_TRUE(Contains(table.out, "local_disk")) << table.out;
  EXPECT_TRUE(Contains(table.out, "1.0 MiB")) << table.out;  // capacity
  EXPECT_TRUE(Contains(table.out, "objects:     6")) << table.out;
  EXPECT_TRUE(Contains(table.out, "filling 1, complete 2")) << table.out;
  EXPECT_TRUE(Contains(table.out, "1 memory hits")) << table.out;
  EXPECT_TRUE(Contains(table.out, "6 queued")) << table.out;  // offloads

  CommandResult json_result = Ctl({"status", "-o", "json"});
  ASSERT_EQ(json_result.exit_code, kOk) << json_result.err;
  const json s = Json(json_result);
  EXPECT_EQ(s["tiers"]["memory"]["capacity_bytes"], kMiB);
  EXPECT_EQ(s["tiers"]["memory"]["used_bytes"], 6 * kObj);
  EXPECT_EQ(s["objects"], 6);
  EXPECT_EQ(s["groups"]["complete"], 2);
  EXPECT_EQ(s["groups"]["filling"], 1);
  EXPECT_EQ(s["gets"]["memory_hit"], 1);
  EXPECT_EQ(s["offloads"]["queued"], 6);
}

TEST_F(TierctlAdminTest, NodesListPagesAndMerges) {
  for (const char* name : {"a", "b", "c"}) h_.AddNode(name, kMiB, 4 * kMiB);
  h_.clock().Advance(std::chrono::seconds(2));

  CommandResult table = Ctl({"nodes", "list"});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_TRUE(Contains(table.out, "HEARTBEAT")) << table.out;
  EXPECT_TRUE(Contains(table.out, "alive")) << table.out;
  EXPECT_TRUE(Contains(table.out, "2.0s ago")) << table.out;
  EXPECT_TRUE(Contains(table.out, "0 B / 1.0 MiB (0.0%)")) << table.out;
  EXPECT_TRUE(table.err.empty()) << table.err;  // one page: no note

  CommandResult page = Ctl({"nodes", "list", "--limit", "2"});
  ASSERT_EQ(page.exit_code, kOk) << page.err;
  EXPECT_FALSE(Contains(page.out, " c ")) << page.out;
  EXPECT_TRUE(Contains(page.err, "--cursor")) << page.err;  // more to see

  const json first = Json(Ctl({"nodes", "list", "--limit", "2", "-o", "json"}));
  ASSERT_EQ(first["nodes"].size(), 2u);
  const std::string cursor = first["next_cursor"];
  ASSERT_FALSE(cursor.empty());
  const json rest =
      Json(Ctl({"nodes", "list", "--cursor", cursor, "-o", "json"}));
  ASSERT_EQ(rest["nodes"].size(), 1u);
  EXPECT_EQ(rest["nodes"][0]["name"], "c");

  const json all =
      Json(Ctl({"nodes", "list", "--limit", "1", "--all", "-o", "json"}));
  ASSERT_EQ(all["nodes"].size(), 3u);
  EXPECT_EQ(all["nodes"][2]["name"], "c");
  EXPECT_EQ(all["next_cursor"], "");
}

TEST_F(TierctlAdminTest, ObjectsGetEncodesKeysWithSlashesSpacesAndUtf8) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  const std::string key = "layer 0/block%42/\xD0\xBA\xD0\xBB\xD1\x8E\xD1\x87";
  ASSERT_TRUE(h_.Put(key, kObj).ok());

  CommandResult table = Ctl({"objects", "get", key});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_TRUE(Contains(table.out, "key:          " + key)) << table.out;
  EXPECT_TRUE(Contains(table.out, "4.0 KiB (4096 bytes)")) << table.out;
  EXPECT_TRUE(Contains(table.out, "REFCNT")) << table.out;
  EXPECT_TRUE(Contains(table.out, "memory")) << table.out;
  EXPECT_TRUE(Contains(table.out, "complete")) << table.out;

  CommandResult json_result = Ctl({"objects", "get", key, "-o", "json"});
  ASSERT_EQ(json_result.exit_code, kOk) << json_result.err;
  const json object = Json(json_result);
  EXPECT_EQ(object["key"], key);
  EXPECT_EQ(object["size"], kObj);
  ASSERT_EQ(object["replicas"].size(), 1u);
  EXPECT_EQ(object["replicas"][0]["tier"], "memory");

  // A prefix of the key is another (missing) object, not a route.
  CommandResult missing = Ctl({"objects", "get", "layer 0"});
  EXPECT_EQ(missing.exit_code, kNotFound) << missing.err;
  EXPECT_TRUE(Contains(missing.err, "OBJECT_NOT_FOUND")) << missing.err;
  EXPECT_TRUE(missing.out.empty()) << missing.out;

  CommandResult missing_json = Ctl({"objects", "get", "nope", "-o", "json"});
  EXPECT_EQ(missing_json.exit_code, kNotFound);
  const json error = Json(missing_json)["error"];
  EXPECT_EQ(error["reason"], "OBJECT_NOT_FOUND");
  EXPECT_EQ(error["code"], "NOT_FOUND");
  EXPECT_EQ(error["http_status"], 404);
  EXPECT_TRUE(error["message"].is_string());
  EXPECT_TRUE(error["hint"].is_string());
}

TEST_F(TierctlAdminTest, ObjectsRmNeedsTheTokenAndHonoursLeases) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());

  CommandResult no_token = Ctl({"objects", "rm", "k"});
  EXPECT_EQ(no_token.exit_code, kError);
  EXPECT_TRUE(Contains(no_token.err, "TOKEN_REQUIRED")) << no_token.err;
  EXPECT_TRUE(Contains(no_token.err, "--token")) << no_token.err;
  EXPECT_TRUE(Contains(no_token.err, "MOONCAKE_TIER_TOKEN")) << no_token.err;
  EXPECT_EQ(
      Json(Ctl({"objects", "rm", "k", "-o", "json"}))["error"]["http_status"],
      401);
  CommandResult wrong = Ctl({"--token", "nope", "objects", "rm", "k"});
  EXPECT_EQ(wrong.exit_code, kError);
  EXPECT_TRUE(Contains(wrong.err, "refused the token")) << wrong.err;
  EXPECT_TRUE(h_.Exists("k").ok() && h_.Exists("k")->exists);  // untouched

  ASSERT_TRUE(h_.Get("k").ok());  // a reader's lease
  CommandResult leased = Admin({"objects", "rm", "k"});
  EXPECT_EQ(leased.exit_code, kError);
  EXPECT_TRUE(Contains(leased.err, "OBJECT_LEASED")) << leased.err;
  EXPECT_TRUE(Contains(leased.err, "the lease ends within")) << leased.err;
  EXPECT_TRUE(Contains(leased.err, "--force")) << leased.err;

  CommandResult removed = Admin({"objects", "rm", "k", "--force"});
  ASSERT_EQ(removed.exit_code, kOk) << removed.err;
  EXPECT_TRUE(Contains(removed.out, "removed 'k'")) << removed.out;
  EXPECT_FALSE(h_.Exists("k")->exists);
  EXPECT_EQ(Admin({"objects", "rm", "k"}).exit_code, kNotFound);
}

TEST_F(TierctlAdminTest, ObjectsRmOfAGroupMemberSaysWhatBecameOfTheGroup) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  LoadGroups();
  CommandResult removed = Admin({"objects", "rm", "blk/1/0", "-o", "json"});
  ASSERT_EQ(removed.exit_code, kOk) << removed.err;
  const json document = Json(removed);
  EXPECT_EQ(document["key"], "blk/1/0");
  EXPECT_EQ(document["removed"], true);
  EXPECT_EQ(document["group"]["id"], "blk/1");
  EXPECT_EQ(document["group"]["state"], "removed");

  CommandResult table = Admin({"objects", "rm", "blk/2/1"});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_TRUE(Contains(table.out, "its whole group 'blk/2'")) << table.out;
  EXPECT_FALSE(h_.Exists("blk/2/0")->exists);
}

TEST_F(TierctlAdminTest, ObjectsPromoteQueuesATaskOrSaysWhyNot) {
  h_.AddNode("n1", kMiB, 64 * kMiB, {SsdInventoryEntry{"cold", kObj, {}}});
  ASSERT_TRUE(h_.Put("hot", kObj).ok());

  EXPECT_EQ(Ctl({"objects", "promote", "cold"}).exit_code, kError);  // token
  CommandResult queued = Admin({"objects", "promote", "cold"});
  ASSERT_EQ(queued.exit_code, kOk) << queued.err;
  EXPECT_TRUE(Contains(queued.out, "promotion of 'cold' queued (HTTP 202)"))
      << queued.out;

  const json tasks = Json(Ctl({"promotions", "list", "-o", "json"}));
  ASSERT_EQ(tasks["tasks"].size(), 1u);
  EXPECT_EQ(tasks["tasks"][0]["key"], "cold");
  EXPECT_EQ(tasks["tasks"][0]["forced"], true);
  EXPECT_TRUE(Contains(queued.out, "task " + tasks["tasks"][0]["id"].dump()))
      << queued.out;
  CommandResult table = Ctl({"promotions", "list"});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_TRUE(Contains(table.out, "FORCED")) << table.out;
  EXPECT_TRUE(Contains(table.out, "cold")) << table.out;
  EXPECT_TRUE(Contains(table.out, "queued")) << table.out;

  CommandResult busy = Admin({"objects", "promote", "cold", "-o", "json"});
  EXPECT_EQ(busy.exit_code, kError);
  EXPECT_EQ(Json(busy)["error"]["reason"], "OBJECT_BUSY");
  EXPECT_EQ(Json(busy)["error"]["http_status"], 409);
  CommandResult in_dram = Admin({"objects", "promote", "hot"});
  EXPECT_EQ(in_dram.exit_code, kError);
  EXPECT_TRUE(Contains(in_dram.err, "NOT_APPLICABLE")) << in_dram.err;
  EXPECT_TRUE(Contains(in_dram.err, "objects get hot")) << in_dram.err;
  EXPECT_EQ(Admin({"objects", "promote", "nope"}).exit_code, kNotFound);
}

// Forced eviction: with the SSD copies in place (write_through offloads
// completed) the DRAM copies go at once and the CLI says what was freed; a
// filling group cannot be evicted (409, exit 1, nothing changes).
TEST_F(TierctlAdminTest, EvictObjectsAndGroups) {
  const NodeId node = h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());
  LoadGroups();
  h_.CompleteOffloads(node);

  CommandResult object = Admin({"objects", "evict", "k"});
  ASSERT_EQ(object.exit_code, kOk) << object.err;
  EXPECT_TRUE(Contains(object.out, "evicted 'k' from DRAM: freed"))
      << object.out;
  EXPECT_EQ(h_.Tiers("k"), std::vector<Tier>{Tier::kLocalDisk});

  const json group = Json(Admin({"groups", "evict", "blk/1", "-o", "json"}));
  EXPECT_EQ(group["bytes_freed"], 2 * kObj) << group.dump();
  for (const char* member : {"blk/1/0", "blk/1/1"}) {
    EXPECT_EQ(h_.Tiers(member), std::vector<Tier>{Tier::kLocalDisk}) << member;
  }

  CommandResult filling = Admin({"groups", "evict", "blk/3"});
  EXPECT_EQ(filling.exit_code, kError);
  EXPECT_TRUE(Contains(filling.err, "NOT_APPLICABLE")) << filling.err;
  EXPECT_EQ(h_.Tiers("blk/3/0"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  EXPECT_EQ(Admin({"objects", "evict", "nope"}).exit_code, kNotFound);
  EXPECT_EQ(Ctl({"objects", "evict", "blk/2/0"}).exit_code, kError);  // token
  EXPECT_EQ(h_.Tiers("blk/2/0"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
}

// The daemon's default: offload when evicting.
class TierctlAdminOnEvictTest : public TierctlAdminTest {
 protected:
  static MasterConfig OnEvict() {
    MasterConfig c = Config();
    c.offload_mode = OffloadMode::kOnEvict;
    return c;
  }
  TierctlAdminOnEvictTest() : TierctlAdminTest(OnEvict()) {}
};

// Without an SSD copy an eviction only queues the offloads; the CLI says
// that, not "evicted ... freed 0 B".
TEST_F(TierctlAdminOnEvictTest, EvictWithoutAnSsdCopySaysItQueuedTheOffloads) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("q", kObj).ok());
  LoadGroups();

  CommandResult object = Admin({"objects", "evict", "q"});
  ASSERT_EQ(object.exit_code, kOk) << object.err;
  EXPECT_TRUE(Contains(object.out, "queued 1 offload of 'q' (task "))
      << object.out;
  EXPECT_TRUE(Contains(object.out, "the DRAM copy goes when it lands"))
      << object.out;
  EXPECT_FALSE(Contains(object.out, "evicted")) << object.out;

  CommandResult group = Admin({"groups", "evict", "blk/1"});
  ASSERT_EQ(group.exit_code, kOk) << group.err;
  EXPECT_TRUE(Contains(group.out, "queued 2 offloads of group 'blk/1'"))
      << group.out;
  EXPECT_TRUE(Contains(group.out, "the DRAM copies go when they land"))
      << group.out;
  EXPECT_EQ(h_.Tiers("q"), std::vector<Tier>{Tier::kMemory});
}

// An empty list says so instead of printing a bare header.
TEST_F(TierctlAdminOnEvictTest, EmptyListsSaySo) {
  // No offload mode that queues at put, no node, no group yet.
  for (const auto& [args, note] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"nodes", "list"}, "no storage nodes registered"},
           {{"groups", "list"}, "no groups"},
           {{"groups", "list", "--state", "broken"},
            "no groups in state broken"},
           {{"promotions", "list"}, "no promotions in flight"},
           {{"offloads", "list"}, "no offloads in flight"}}) {
    CommandResult list = Ctl(args);
    EXPECT_EQ(list.exit_code, kOk) << list.err;
    EXPECT_EQ(list.out, note + "\n") << args[0];
  }
  // -o json keeps the empty array for scripts.
  EXPECT_TRUE(Json(Ctl({"groups", "list", "-o", "json"}))["groups"].empty());
}

TEST_F(TierctlAdminTest, GroupsListGetPromoteAndRemove) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  LoadGroups();

  CommandResult table = Ctl({"groups", "list"});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_TRUE(Contains(table.out, "PRESENT/EXPECTED")) << table.out;
  EXPECT_TRUE(Contains(table.out, "blk/3")) << table.out;
  EXPECT_TRUE(Contains(table.out, "1/2")) << table.out;

  const json filling =
      Json(Ctl({"groups", "list", "--state", "filling", "-o", "json"}));
  ASSERT_EQ(filling["groups"].size(), 1u);
  EXPECT_EQ(filling["groups"][0]["id"], "blk/3");
  EXPECT_EQ(filling["groups"][0]["present"], 1);

  CommandResult page = Ctl({"groups", "list", "--limit", "1"});
  ASSERT_EQ(page.exit_code, kOk);
  EXPECT_TRUE(Contains(page.err, "--cursor")) << page.err;
  const json first =
      Json(Ctl({"groups", "list", "--limit", "1", "-o", "json"}));
  ASSERT_EQ(first["groups"].size(), 1u);
  const json second = Json(Ctl({"groups", "list", "--limit", "1", "--cursor",
                                first["next_cursor"], "-o", "json"}));
  ASSERT_EQ(second["groups"].size(), 1u);
  EXPECT_NE(second["groups"][0]["id"], first["groups"][0]["id"]);
  const json all =
      Json(Ctl({"groups", "list", "--all", "--limit", "1", "-o", "json"}));
  EXPECT_EQ(all["groups"].size(), 3u);
  EXPECT_EQ(all["next_cursor"], "");

  CommandResult group = Ctl({"groups", "get", "blk/1"});
  ASSERT_EQ(group.exit_code, kOk) << group.err;
  EXPECT_TRUE(Contains(group.out, "state:    complete")) << group.out;
  EXPECT_TRUE(Contains(group.out, "2 of 2 present")) << group.out;
  EXPECT_TRUE(Contains(group.out, "blk/1/1")) << group.out;
  const json described = Json(Ctl({"groups", "get", "blk/1", "-o", "json"}));
  EXPECT_EQ(described["id"], "blk/1");
  ASSERT_EQ(described["members"].size(), 2u);
  EXPECT_EQ(described["members"][0]["tiers"], json::array({"memory"}));
  EXPECT_EQ(Ctl({"groups", "get", "nope"}).exit_code, kNotFound);

  CommandResult promote = Admin({"groups", "promote", "blk/1"});
  EXPECT_EQ(promote.exit_code, kError);  // in DRAM already
  EXPECT_TRUE(Contains(promote.err, "NOT_APPLICABLE")) << promote.err;

  EXPECT_EQ(Ctl({"groups", "rm", "blk/1"}).exit_code, kError);  // token
  CommandResult removed = Admin({"groups", "rm", "blk/1", "-o", "json"});
  ASSERT_EQ(removed.exit_code, kOk) << removed.err;
  EXPECT_EQ(Json(removed)["removed"], true);
  EXPECT_FALSE(h_.Exists("blk/1/0")->exists);
  EXPECT_EQ(Admin({"groups", "rm", "blk/1"}).exit_code, kNotFound);
}

TEST_F(TierctlAdminTest, OffloadsListShowsTasksInFlight) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  for (const char* key : {"a", "b", "c"}) ASSERT_TRUE(h_.Put(key, kObj).ok());
  h_.clock().Advance(std::chrono::milliseconds(1500));

  CommandResult table = Ctl({"offloads", "list"});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_FALSE(Contains(table.out, "FORCED")) << table.out;
  EXPECT_TRUE(Contains(table.out, "1.5s")) << table.out;
  EXPECT_TRUE(Contains(table.out, "4.0 KiB")) << table.out;

  const json tasks = Json(Ctl({"offloads", "list", "-o", "json"}));
  ASSERT_EQ(tasks["tasks"].size(), 3u);
  EXPECT_EQ(tasks["tasks"][0]["kind"], "offload");
  EXPECT_EQ(tasks["tasks"][0]["key"], "a");
  EXPECT_EQ(tasks["tasks"][0]["age_ms"], 1500);
}

TEST_F(TierctlAdminTest, ConfigGetAndSet) {
  CommandResult table = Ctl({"config", "get"});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_TRUE(Contains(table.out, "promotion.admission_threshold"))
      << table.out;
  EXPECT_TRUE(Contains(table.out, "write_through")) << table.out;
  const json config = Json(Ctl({"config", "get", "-o", "json"}));
  EXPECT_EQ(config["promotion"]["admission_threshold"], 2);
  EXPECT_EQ(config["offload_mode"], "write_through");

  CommandResult no_token =
      Ctl({"config", "set", "promotion.admission_threshold=3"});
  EXPECT_EQ(no_token.exit_code, kError);
  EXPECT_TRUE(Contains(no_token.err, "MOONCAKE_TIER_TOKEN")) << no_token.err;
  EXPECT_EQ(h_.master().promotion_options().admission_threshold, 2u);

  CommandResult set =
      Admin({"config", "set", "promotion.admission_threshold=3",
             "promotion.task_timeout=45s", "promotion.on_hit=false"});
  ASSERT_EQ(set.exit_code, kOk) << set.err;
  EXPECT_TRUE(
      Contains(set.out, "changed promotion.admission_threshold: 2 -> 3"))
      << set.out;
  EXPECT_TRUE(Contains(set.out, "promotion.task_timeout_ms: 30000 -> 45000"))
      << set.out;
  const PromotionOptions applied = h_.master().promotion_options();
  EXPECT_EQ(applied.admission_threshold, 3u);
  EXPECT_EQ(applied.task_timeout, std::chrono::seconds(45));
  EXPECT_FALSE(applied.on_hit);

  CommandResult json_set =
      Admin({"config", "set", "promotion.admission_threshold=4", "-o", "json"});
  ASSERT_EQ(json_set.exit_code, kOk) << json_set.err;
  const json changed = Json(json_set);
  EXPECT_EQ(changed["changed"]["promotion.admission_threshold"],
            json::array({3, 4}));
  EXPECT_EQ(changed["config"]["promotion"]["admission_threshold"], 4);

  CommandResult watermark =
      Admin({"config", "set", "eviction_high_watermark=0.8"});
  ASSERT_EQ(watermark.exit_code, kOk) << watermark.err;
  EXPECT_TRUE(Contains(watermark.out, "eviction_high_watermark"))
      << watermark.out;
  EXPECT_DOUBLE_EQ(h_.master().config().eviction_high_watermark, 0.8);

  CommandResult fixed = Admin({"config", "set", "shard_count=4"});
  EXPECT_EQ(fixed.exit_code, kError);
  EXPECT_TRUE(Contains(fixed.err, "NOT_RUNTIME_TUNABLE")) << fixed.err;
  EXPECT_TRUE(Contains(fixed.err, "restart")) << fixed.err;
  EXPECT_TRUE(Contains(fixed.err, "nothing was changed")) << fixed.err;

  CommandResult unknown = Admin({"config", "set", "promotion.nope=1"});
  EXPECT_EQ(unknown.exit_code, kError);
  EXPECT_TRUE(Contains(unknown.err, "unknown knob 'promotion.nope'"))
      << unknown.err;
  CommandResult mistyped =
      Admin({"config", "set", "promotion.admission_threshold=lots"});
  EXPECT_EQ(mistyped.exit_code, kError);
  EXPECT_TRUE(Contains(mistyped.err, "whole number")) << mistyped.err;
  CommandResult invalid =  // the server's own check (queue_limit > 0)
      Admin({"config", "set", "promotion.queue_limit=0"});
  EXPECT_EQ(invalid.exit_code, kError);
  EXPECT_EQ(h_.master().promotion_options().admission_threshold, 4u);
}

TEST_F(TierctlAdminTest, MetricsFiltersFamiliesByRegex) {
  h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());
  ASSERT_TRUE(h_.Get("k").ok());

  CommandResult all = Ctl({"metrics"});
  ASSERT_EQ(all.exit_code, kOk) << all.err;
  EXPECT_TRUE(Contains(all.out, "# TYPE mooncake_get_total counter"));
  EXPECT_TRUE(Contains(all.out, "mooncake_tier_used_bytes"));

  CommandResult some = Ctl({"metrics", "--match", "result=\"memory_hit\""});
  ASSERT_EQ(some.exit_code, kOk) << some.err;
  EXPECT_TRUE(Contains(some.out, "# HELP mooncake_get_total")) << some.out;
  EXPECT_TRUE(Contains(some.out, "# TYPE mooncake_get_total counter"))
      << some.out;
  EXPECT_TRUE(Contains(some.out, "mooncake_get_total{result=\"memory_hit\"} 1"))
      << some.out;
  EXPECT_FALSE(Contains(some.out, "result=\"miss\"")) << some.out;
  EXPECT_FALSE(Contains(some.out, "mooncake_tier_used_bytes")) << some.out;

  const json families =
      Json(Ctl({"metrics", "--match", "^mooncake_get_total", "-o", "json"}));
  ASSERT_EQ(families["families"].size(), 1u);
  EXPECT_EQ(families["families"][0]["name"], "mooncake_get_total");
  EXPECT_EQ(families["families"][0]["type"], "counter");
  bool saw_hit = false;
  for (const json& sample : families["families"][0]["samples"]) {
    if (sample["labels"]["result"] == "memory_hit") {
      EXPECT_EQ(sample["value"], 1);
      saw_hit = true;
    }
  }
  EXPECT_TRUE(saw_hit) << families.dump();

  CommandResult none = Ctl({"metrics", "--match", "^no_such_metric"});
  EXPECT_EQ(none.exit_code, kOk);
  EXPECT_TRUE(none.out.empty()) << none.out;

  // Histograms read as p50/p99, sum and count; --raw keeps the buckets.
  CommandResult rpc = Ctl({"metrics", "--match", "mooncake_admin_request"});
  ASSERT_EQ(rpc.exit_code, kOk) << rpc.err;
  EXPECT_TRUE(Contains(rpc.out, "quantile=\"0.99\"")) << rpc.out;
  EXPECT_FALSE(Contains(rpc.out, "_bucket")) << rpc.out;
  CommandResult raw =
      Ctl({"metrics", "--match", "mooncake_admin_request", "--raw"});
  ASSERT_EQ(raw.exit_code, kOk) << raw.err;
  EXPECT_TRUE(Contains(raw.out, "_bucket{")) << raw.out;
  EXPECT_FALSE(Contains(raw.out, "quantile=")) << raw.out;
}

}  // namespace
}  // namespace tierctl_admin_test
}  // namespace mooncake_tier::testing
