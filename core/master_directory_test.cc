// The master's side of the nodes' DRAM directories (docs/design/ha.md):
// puts acknowledged only once recorded, space freed only once dropped, and
// the DRAM tier rebuilt from a registering node's entries.

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <thread>

#include "base/byte_units.h"
#include "core/master.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier {
namespace master_directory_test {
namespace {

using testing::MasterHarness;
using namespace std::chrono_literals;

MasterConfig Config() {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.put_wait_timeout = Duration::zero();  // NO_SPACE at once
  return config;
}

NodeSpec DirectorySpec(const std::string& name, uint64_t dram) {
  NodeSpec spec;
  spec.name = name;
  spec.dram_size = dram;
  spec.keeps_directory = true;
  return spec;
}

// What a node's directory holds, kept as the master's changes say.
struct FakeDirectory {
  std::map<uint64_t, DramEntry> entries;
  uint64_t acked = 0;
  // One sync: acknowledges what was applied, applies what comes.
  size_t Sync(Master& master, NodeId node, Duration wait = 0ms) {
    Result<DirectoryChanges> changes = master.SyncDirectory(
        node, acked, UINT32_MAX, master.clock()->Now() + wait);
    EXPECT_TRUE(changes.ok()) << changes.status().ToString();
    if (!changes.ok()) return 0;
    for (const DirectoryOp& op : changes->ops) {
      if (op.kind == DirectoryOp::Kind::kAdd) {
        entries[op.entry.offset] = op.entry;
      } else {
        entries.erase(op.entry.offset);
      }
      acked = op.seq;
    }
    return changes->ops.size();
  }
};

std::future<Status> PutEndLater(MasterHarness& h, const std::string& key) {
  return std::async(std::launch::async, [&h, key] { return h.PutEnd(key); });
}

TEST(MasterDirectoryTest, PutEndAnswersOnceTheNodeRecordedThePlacement) {
  MasterHarness h(Config());
  const NodeId node = *h.link().RegisterNode(DirectorySpec("n", kMiB), {}, {});
  ASSERT_TRUE(h.PutStart("k", 1000).ok());
  std::future<Status> ended = PutEndLater(h, "k");
  // Readable at once, but not acknowledged before the node has it.
  FakeDirectory dir;
  size_t got = 0;
  for (int i = 0; i < 100 && got == 0; ++i)
    got = dir.Sync(h.master(), node, 50ms);
  ASSERT_EQ(got, 1u);
  EXPECT_EQ(ended.wait_for(100ms), std::future_status::timeout);
  ASSERT_EQ(dir.entries.size(), 1u);
  const DramEntry& entry = dir.entries.begin()->second;
  EXPECT_EQ(entry.key, "k");
  EXPECT_EQ(entry.size, 1000u);
  EXPECT_EQ(entry.offset, h.Get("k")->replicas[0].offset);
  dir.Sync(h.master(), node);  // the acknowledgement
  ASSERT_EQ(ended.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(ended.get().ok());
}

TEST(MasterDirectoryTest, AGroupMemberIsRecordedWithItsGroup) {
  MasterHarness h(Config());
  const NodeId node = *h.link().RegisterNode(DirectorySpec("n", kMiB), {}, {});
  PutOptions member;
  member.group = GroupSpec{"g", 2, 1};
  ASSERT_TRUE(h.PutStart("g/1", 100, member).ok());
  std::future<Status> ended = PutEndLater(h, "g/1");
  FakeDirectory dir;
  while (dir.entries.empty()) dir.Sync(h.master(), node, 50ms);
  dir.Sync(h.master(), node);
  ASSERT_TRUE(ended.get().ok());
  const DramEntry& entry = dir.entries.begin()->second;
  ASSERT_TRUE(entry.group.has_value());
  EXPECT_EQ(entry.group->group_id, "g");
  EXPECT_EQ(entry.group->group_size, 2u);
  EXPECT_EQ(entry.group->group_index, 1u);
}

TEST(MasterDirectoryTest, PutEndTimesOutWhenTheNodeNeverRecords) {
  MasterConfig config = Config();
  config.directory_record_timeout = 50ms;
  MasterHarness h(config);
  h.link()
      .RegisterNode(DirectorySpec("n", kMiB), {}, {})
      .status()
      .IgnoreError();
  ASSERT_TRUE(h.PutStart("k", 1000).ok());
  const Status ended = h.PutEnd("k");
  EXPECT_EQ(ended.reason(), ErrorReason::kTimeout) << ended.ToString();
  EXPECT_EQ(h.master().GetStats().put_unrecorded, 1u);
}

TEST(MasterDirectoryTest, ANodeLeavingFailsThePutsWaitingForIt) {
  MasterHarness h(Config());
  const NodeId node = *h.link().RegisterNode(DirectorySpec("n", kMiB), {}, {});
  ASSERT_TRUE(h.PutStart("k", 1000).ok());
  std::future<Status> ended = PutEndLater(h, "k");
  EXPECT_EQ(ended.wait_for(50ms), std::future_status::timeout);
  ASSERT_TRUE(h.master().DeregisterNode(node).ok());
  ASSERT_EQ(ended.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(ended.get().reason(), ErrorReason::kUnavailable);
}

TEST(MasterDirectoryTest, FreedSpaceIsReusedOnlyOnceTheNodeDroppedTheEntry) {
  MasterHarness h(Config());
  const NodeId node = *h.link().RegisterNode(DirectorySpec("n", kMiB), {}, {});
  FakeDirectory dir;
  ASSERT_TRUE(h.PutStart("old", kMiB).ok());
  std::future<Status> ended = PutEndLater(h, "old");
  while (dir.entries.empty()) dir.Sync(h.master(), node, 50ms);
  dir.Sync(h.master(), node);
  ASSERT_TRUE(ended.get().ok());

  // The removal answers once the node dropped the entry (tested below);
  // here what matters is the range meanwhile.
  std::future<Status> removed =
      std::async(std::launch::async, [&h] { return h.Remove("old"); });
  while (h.Exists("old")->exists) std::this_thread::sleep_for(1ms);
  // The node still lists "old" there: its range is not handed out again.
  EXPECT_EQ(h.PutStart("new", kMiB).status().reason(), ErrorReason::kNoSpace);
  EXPECT_EQ(dir.Sync(h.master(), node), 1u);  // the drop
  EXPECT_TRUE(dir.entries.empty());
  EXPECT_EQ(h.PutStart("new", kMiB).status().reason(), ErrorReason::kNoSpace);
  dir.Sync(h.master(), node);  // its acknowledgement frees the range
  EXPECT_TRUE(h.PutStart("new", kMiB).ok());
  EXPECT_TRUE(removed.get().ok());
}

TEST(MasterDirectoryTest, RemoveAnswersOnceTheNodeDroppedTheEntry) {
  MasterHarness h(Config());
  const NodeId node = *h.link().RegisterNode(DirectorySpec("n", kMiB), {}, {});
  FakeDirectory dir;
  ASSERT_TRUE(h.PutStart("k", 1000).ok());
  std::future<Status> ended = PutEndLater(h, "k");
  while (dir.entries.empty()) dir.Sync(h.master(), node, 50ms);
  dir.Sync(h.master(), node);
  ASSERT_TRUE(ended.get().ok());

  std::future<Status> removed =
      std::async(std::launch::async, [&h] { return h.Remove("k"); });
  // Gone from the master at once, but not answered while the node lists it.
  size_t got = 0;
  for (int i = 0; i < 100 && got == 0; ++i)
    got = dir.Sync(h.master(), node, 50ms);
  ASSERT_EQ(got, 1u);
  EXPECT_TRUE(dir.entries.empty());
  EXPECT_EQ(removed.wait_for(100ms), std::future_status::timeout);
  EXPECT_FALSE(h.Exists("k")->exists);
  dir.Sync(h.master(), node);  // the acknowledgement
  ASSERT_EQ(removed.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(removed.get().ok());
}

TEST(MasterDirectoryTest, RemoveSaysWhenTheNodeDidNotDropInTime) {
  MasterConfig config = Config();
  config.directory_record_timeout = 50ms;
  MasterHarness h(config);
  const NodeId node = *h.link().RegisterNode(DirectorySpec("n", kMiB), {}, {});
  FakeDirectory dir;
  ASSERT_TRUE(h.PutStart("k", 1000).ok());
  std::future<Status> ended = PutEndLater(h, "k");
  while (dir.entries.empty()) dir.Sync(h.master(), node, 50ms);
  dir.Sync(h.master(), node);
  ASSERT_TRUE(ended.get().ok());
  const Status removed = h.Remove("k");
  EXPECT_EQ(removed.reason(), ErrorReason::kTimeout) << removed.ToString();
  EXPECT_FALSE(h.Exists("k")->exists);
  // Removing what is not there waits for nothing.
  EXPECT_EQ(h.Remove("absent").reason(), ErrorReason::kObjectNotFound);
}

TEST(MasterDirectoryTest, NodesWithoutADirectoryAreServedAsBefore) {
  MasterHarness h(Config());
  h.AddNode("plain", kMiB);
  ASSERT_TRUE(h.Put("k", kMiB).ok());
  ASSERT_TRUE(h.Remove("k").ok());
  EXPECT_TRUE(h.Put("k2", kMiB).ok());  // freed at once
}

TEST(MasterDirectoryTest, RegistrationRebuildsTheDramTierFromTheDirectory) {
  MasterHarness h(Config());
  std::vector<DramEntry> dram = {
      {"plain", 0, 1000, std::nullopt},
      {"g/0", 1024, 500, GroupSpec{"g", 2, 0}},
      {"g/1", 2048, 500, GroupSpec{"g", 2, 1}},
      {"filling/0", 4096, 100, GroupSpec{"filling", 3, 0}},
      // Overlaps "plain": the first entry keeps the range.
      {"overlap", 512, 64, std::nullopt},
      // Outside the segment, and a key the master cannot take.
      {"outside", kMiB, 64, std::nullopt},
      {"", 8192, 64, std::nullopt},
  };
  const NodeId node =
      *h.link().RegisterNode(DirectorySpec("n", kMiB), {}, dram);
  Result<ObjectReplicas> plain = h.Get("plain");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_EQ(plain->replicas.size(), 1u);
  EXPECT_EQ(plain->replicas[0].tier, Tier::kMemory);
  EXPECT_EQ(plain->replicas[0].node, node);
  EXPECT_EQ(plain->replicas[0].offset, 0u);
  EXPECT_EQ(plain->size, 1000u);
  // A complete group is complete again; a filling one fills on.
  EXPECT_TRUE(h.Get("g/0").ok());
  EXPECT_TRUE(h.Get("g/1").ok());
  const std::string ids[] = {"g", "filling"};
  std::vector<Result<GroupDescription>> described = h.api().GetGroup(ids);
  ASSERT_TRUE(described[0].ok());
  EXPECT_EQ(described[0]->status.state, GroupState::kComplete);
  ASSERT_TRUE(described[1].ok());
  EXPECT_EQ(described[1]->status.state, GroupState::kFilling);
  EXPECT_EQ(described[1]->status.present, 1u);
  EXPECT_FALSE(h.Exists("overlap")->exists);
  EXPECT_FALSE(h.Exists("outside")->exists);
  EXPECT_EQ(h.master().GetStats().dram_restored, 4u);

  // The entries not taken go from the node's directory.
  FakeDirectory dir;
  for (const DramEntry& e : dram) dir.entries[e.offset] = e;
  dir.Sync(h.master(), node);
  EXPECT_EQ(dir.entries.count(512), 0u);
  EXPECT_EQ(dir.entries.count(kMiB), 0u);
  EXPECT_EQ(dir.entries.count(8192), 0u);
  EXPECT_EQ(dir.entries.size(), 4u);

  // New puts land beside the rebuilt ranges, never on them.
  Result<ReplicaDescriptor> next = h.PutStart("next", 3000);
  ASSERT_TRUE(next.ok());
  for (const auto& [offset, e] : dir.entries) {
    EXPECT_TRUE(next->offset >= offset + e.size ||
                next->offset + 3000 <= offset)
        << "new put at " << next->offset << " overlaps " << e.key;
  }
  const AuditReport audit = h.master().Audit();
  EXPECT_TRUE(audit.consistent());
}

// An entry the master does not take back (here: its key is restored from
// another node already) keeps its range until the node dropped it: a put
// placed there sooner, whose add the node has not applied when the master
// dies, would be restored as the stale object with the new put's bytes.
TEST(MasterDirectoryTest, AnEntryNotTakenBackKeepsItsRangeUntilDropped) {
  MasterHarness h(Config());
  const std::vector<DramEntry> held = {{"k", 0, kMiB, std::nullopt}};
  ASSERT_TRUE(h.link().RegisterNode(DirectorySpec("a", kMiB), {}, held).ok());
  const NodeId b = *h.link().RegisterNode(DirectorySpec("b", kMiB), {}, held);
  EXPECT_EQ(h.master().GetStats().dram_restored, 1u);
  // "a" is full with "k"; "b"'s copy was not taken, and its range waits.
  EXPECT_EQ(h.PutStart("new", kMiB).status().reason(), ErrorReason::kNoSpace);
  FakeDirectory dir;
  dir.entries[0] = held[0];
  EXPECT_EQ(dir.Sync(h.master(), b), 1u);  // the drop
  EXPECT_TRUE(dir.entries.empty());
  EXPECT_EQ(h.PutStart("new", kMiB).status().reason(), ErrorReason::kNoSpace);
  dir.Sync(h.master(), b);  // its acknowledgement frees the range
  Result<ReplicaDescriptor> placed = h.PutStart("new", kMiB);
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ(placed->node, b);
  EXPECT_TRUE(h.master().Audit().consistent());
}

TEST(MasterDirectoryTest, ADramEntryJoinsTheSameKeysSsdCopy) {
  MasterHarness h(Config());
  std::vector<SsdInventoryEntry> ssd = {{"k", 1000, std::nullopt}};
  std::vector<DramEntry> dram = {{"k", 0, 1000, std::nullopt}};
  NodeSpec spec = DirectorySpec("n", kMiB);
  spec.ssd_capacity = 64 * kMiB;
  ASSERT_TRUE(h.link().RegisterNode(spec, ssd, dram).ok());
  EXPECT_EQ(h.Tiers("k"), (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  EXPECT_EQ(h.master().GetStats().dram_restored, 1u);
  EXPECT_EQ(h.master().GetStats().inventory_restored, 1u);
}

}  // namespace
}  // namespace master_directory_test
}  // namespace mooncake_tier
