// POST /api/v1/objects/{key}/evict and /api/v1/groups/{id}/evict against a
// real server and master: 200 when DRAM was freed now, 202 with the
// offloads queued first, 404 for unknown, 409 when not applicable, 401
// without the token.

#include "admin_server/admin_test_fixture.h"

namespace mooncake_tier::admin {
namespace admin_eviction_test {
namespace {

using nlohmann::json;

PutOptions Member(const std::string& group, uint32_t size, uint32_t index) {
  PutOptions o;
  o.group = GroupSpec{group, size, index};
  return o;
}

TEST_F(AdminServerTest, ForcedEvictionOfAnObject) {
  h_.AddNode("n1", kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());
  ExpectError(Call("POST", ObjectPath("k", "/evict"), "", false), 401,
              "TOKEN_REQUIRED");
  EXPECT_TRUE(h_.Exists("k")->exists);

  const Reply reply = Call("POST", ObjectPath("k", "/evict"));
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["key"], "k");
  EXPECT_EQ(reply.body["bytes_freed"], kObj);
  EXPECT_EQ(reply.body["offloads"], json::array());
  // Offload off and no other copy: it left the store.
  ExpectError(Get(ObjectPath("k")), 404, "OBJECT_NOT_FOUND");
  ExpectError(Call("POST", ObjectPath("k", "/evict")), 404, "OBJECT_NOT_FOUND");
  ExpectError(Call("POST", ObjectPath("a b/c", "/evict")), 404,
              "OBJECT_NOT_FOUND");
  ExpectError(Call("POST", ObjectPath("k", "/evict?now=1")), 400,
              "INVALID_ARGUMENT");
}

TEST_F(AdminServerTest, ForcedEvictionRefusalsAre409) {
  h_.AddNode("n1", kMiB);
  PutOptions pinned;
  pinned.hard_pin = true;
  ASSERT_TRUE(h_.Put("pinned", kObj, pinned).ok());
  ASSERT_TRUE(h_.Put("read", kObj).ok());
  ASSERT_TRUE(h_.Get("read").ok());
  ASSERT_TRUE(h_.PutStart("putting", kObj).ok());
  ExpectError(Call("POST", ObjectPath("pinned", "/evict")), 409,
              "NOT_APPLICABLE");
  ExpectError(Call("POST", ObjectPath("read", "/evict")), 409, "OBJECT_LEASED");
  ExpectError(Call("POST", ObjectPath("putting", "/evict")), 409,
              "OBJECT_BUSY");
  EXPECT_EQ(h_.master().GetStats().memory.used, 3 * kObj);
}

TEST_F(AdminServerTest, ForcedEvictionOfAGroup) {
  h_.AddNode("n1", kMiB);
  ASSERT_TRUE(h_.Put("blk/1/k", kObj, Member("blk/1", 2, 0)).ok());
  ASSERT_TRUE(h_.Put("blk/1/v", kObj, Member("blk/1", 2, 1)).ok());
  ASSERT_TRUE(h_.Put("blk/2/k", kObj, Member("blk/2", 2, 0)).ok());
  const std::string path = "/api/v1/groups/" + PercentEncode("blk/1");
  ExpectError(Call("POST", path + "/evict", "", false), 401, "TOKEN_REQUIRED");
  ExpectError(Call("POST", "/api/v1/groups/nope/evict"), 404,
              "GROUP_NOT_FOUND");
  ExpectError(
      Call("POST", "/api/v1/groups/" + PercentEncode("blk/2") + "/evict"), 409,
      "NOT_APPLICABLE");  // still filling

  const Reply reply = Call("POST", path + "/evict");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["group"], "blk/1");
  EXPECT_EQ(reply.body["bytes_freed"], 2 * kObj);
  EXPECT_EQ(reply.body["offloads"], json::array());
  ExpectError(Get(path), 404, "GROUP_NOT_FOUND");
  EXPECT_FALSE(h_.Exists("blk/1/k")->exists);
  EXPECT_TRUE(h_.Exists("blk/2/k")->exists);
}

class AdminOnEvictTest : public AdminServerTest {
 protected:
  AdminOnEvictTest() : AdminServerTest(OnEvict()) {}
  static MasterConfig OnEvict() {
    MasterConfig c = Config();
    c.offload_mode = OffloadMode::kOnEvict;
    return c;
  }
};

TEST_F(AdminOnEvictTest, OffloadFirstAnswers202WithTheTasks) {
  const NodeId node = h_.AddNode("n1", kMiB, 64 * kMiB);
  ASSERT_TRUE(h_.Put("k", kObj).ok());
  const Reply reply = Call("POST", ObjectPath("k", "/evict"));
  ASSERT_EQ(reply.status, 202) << reply.text;
  EXPECT_EQ(reply.body["bytes_freed"], 0);
  ASSERT_EQ(reply.body["offloads"].size(), 1u);
  const uint64_t task = reply.body["offloads"][0];
  const Reply list = Get("/api/v1/offloads");
  ASSERT_EQ(list.status, 200) << list.text;
  ASSERT_EQ(list.body["tasks"].size(), 1u);
  EXPECT_EQ(list.body["tasks"][0]["id"], task);
  EXPECT_EQ(list.body["tasks"][0]["key"], "k");
  ExpectError(Call("POST", ObjectPath("k", "/evict")), 409, "OBJECT_BUSY");
  EXPECT_EQ(h_.CompleteOffloads(node), 1u);
  EXPECT_EQ(h_.Tiers("k"), std::vector<Tier>{Tier::kLocalDisk});

  ASSERT_TRUE(h_.Put("g/0", kObj, Member("g", 2, 0)).ok());
  ASSERT_TRUE(h_.Put("g/1", kObj, Member("g", 2, 1)).ok());
  const Reply group = Call("POST", "/api/v1/groups/g/evict");
  ASSERT_EQ(group.status, 202) << group.text;
  EXPECT_EQ(group.body["offloads"].size(), 2u);
  EXPECT_EQ(h_.CompleteOffloads(node), 2u);
  EXPECT_EQ(h_.Tiers("g/0"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_EQ(h_.Tiers("g/1"), std::vector<Tier>{Tier::kLocalDisk});
}

}  // namespace
}  // namespace admin_eviction_test
}  // namespace mooncake_tier::admin
