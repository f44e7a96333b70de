// The whole in-process store, stepped by hand on a manual clock: bytes go
// DRAM -> SSD on eviction and come back identical, nodes die and restart.

#include "client/embedded_cluster.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "base/byte_units.h"
#include "core/master.h"
#include "tests/support/client_conformance.h"
#include "tests/support/temp_dir.h"

namespace mooncake_tier {
namespace embedded_cluster_test {
namespace {

using testing::Pattern;

class EmbeddedClusterTest : public ::testing::Test {
 protected:
  void Start(OffloadMode mode, int nodes, bool real_files = false,
             Duration grant_window = std::chrono::seconds(2)) {
    EmbeddedClusterOptions options;
    options.master.shard_count = 16;
    options.master.grant_window = grant_window;
    options.master.offload_mode = mode;
    options.clock = &clock_;
    options.background = false;
    for (int i = 0; i < nodes; ++i) {
      EmbeddedNodeOptions node;
      node.node.name = "n" + std::to_string(i);
      node.node.dram_bytes = kMiB;
      node.ssd_bytes = 16 * kMiB;
      if (real_files) node.ssd_dir = dir_.path() + "/" + node.node.name;
      options.nodes.push_back(node);
    }
    Result<std::unique_ptr<EmbeddedCluster>> c =
        EmbeddedCluster::Start(std::move(options));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(*c);
    client_ = cluster_->NewClient();
  }

  // Puts `n` objects of 64 KiB, one simulated second apart, with a round of
  // background work after each (what the threads do in production).
  void PutMany(int n, int first = 0) {
    for (int i = first; i < first + n; ++i) {
      ASSERT_TRUE(client_->Put(Key(i), Pattern(64 * 1024, i)).ok()) << i;
      clock_.Advance(std::chrono::seconds(1));
      cluster_->Step();
    }
  }
  static std::string Key(int i) { return "obj-" + std::to_string(i); }

  void Settle() {
    for (int i = 0; i < 5; ++i) cluster_->Step();
  }

  testing::TempDir dir_;
  ManualClock clock_;
  std::unique_ptr<EmbeddedCluster> cluster_;
  std::unique_ptr<Client> client_;
};

TEST_F(EmbeddedClusterTest, OnEvictObjectsAreReadableFromSsdWithSameBytes) {
  Start(OffloadMode::kOnEvict, 1, /*real_files=*/true);
  PutMany(40);  // 2.5 MiB into 1 MiB of DRAM: most go to SSD
  Settle();
  const MasterStats stats = cluster_->master().GetStats();
  EXPECT_GT(stats.offload_completed, 0u);
  EXPECT_EQ(stats.objects, 40u);  // nothing lost
  for (int i = 0; i < 40; ++i) {
    Result<std::vector<std::byte>> got = client_->Get(Key(i));
    ASSERT_TRUE(got.ok()) << i << ": " << got.status().ToString();
    EXPECT_EQ(*got, Pattern(64 * 1024, i)) << i;
  }
  EXPECT_GT(cluster_->master().GetStats().get_local_disk_hit, 0u);
  EXPECT_EQ(cluster_->master().Audit().total_refcnt, 0u);
}

// A scattered get of an object on SSD is staged whole and copied out.
TEST_F(EmbeddedClusterTest, ScatteredGetsOfSsdObjectsGetTheSameBytes) {
  Start(OffloadMode::kOnEvict, 1, /*real_files=*/true);
  PutMany(40);
  Settle();
  ASSERT_GT(cluster_->master().GetStats().offload_completed, 0u);
  for (int i = 0; i < 40; ++i) {
    std::vector<std::byte> first(40000), second(30000);
    GetIntoItem item{Key(i), {}, {first, second}};
    Result<uint64_t> n = client_->GetIntoBatch({&item, 1})[0];
    ASSERT_TRUE(n.ok()) << i << ": " << n.status().ToString();
    ASSERT_EQ(*n, 64u * 1024);
    first.insert(first.end(), second.begin(),
                 second.begin() + 64 * 1024 - 40000);
    EXPECT_EQ(first, Pattern(64 * 1024, i)) << i;
  }
  EXPECT_GT(cluster_->master().GetStats().get_local_disk_hit, 0u);
}

// Promotion on hit end to end: an object evicted to SSD that is read again
// comes back into DRAM (the node reads its SSD copy straight into the staged
// range of its segment) with the same bytes.
TEST_F(EmbeddedClusterTest, HotSsdObjectIsPromotedBackWithSameBytes) {
  Start(OffloadMode::kOnEvict, 1, /*real_files=*/true);
  PutMany(40);
  Settle();
  // Make room below the high watermark: drop the objects still in DRAM.
  int on_ssd = -1;
  for (int i = 0; i < 40; ++i) {
    Result<ObjectDescription> d = cluster_->master().DescribeObject(Key(i));
    ASSERT_TRUE(d.ok());
    bool in_dram = false;
    for (const Replica& r : d->replicas)
      in_dram |= r.desc.tier == Tier::kMemory;
    if (in_dram) {
      ASSERT_TRUE(client_->Remove(Key(i), RemoveOptions{true}).ok());
    } else if (on_ssd < 0) {
      on_ssd = i;
    }
  }
  ASSERT_GE(on_ssd, 0);
  for (int read = 0; read < 2; ++read) {
    Result<std::vector<std::byte>> got = client_->Get(Key(on_ssd));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
  }
  EXPECT_EQ(cluster_->master().GetStats().promotion_queued, 1u);
  Settle();
  const MasterStats stats = cluster_->master().GetStats();
  EXPECT_EQ(stats.promotion_completed, 1u);
  EXPECT_EQ(cluster_->node(0).stats().promotions_done, 1u);
  const std::string key = Key(on_ssd);
  Result<ObjectReplicas> replicas =
      std::move(cluster_->master().GetReplicaList({&key, 1})[0]);
  ASSERT_TRUE(replicas.ok());
  EXPECT_EQ(replicas->replicas.front().tier, Tier::kMemory);
  const uint64_t memory_hits = stats.get_memory_hit;
  Result<std::vector<std::byte>> got = client_->Get(key);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, Pattern(64 * 1024, on_ssd));
  EXPECT_EQ(cluster_->master().GetStats().get_memory_hit, memory_hits + 2);
  EXPECT_EQ(cluster_->master().Audit().total_refcnt, 0u);
}

// When the holder's own segment is full the master stages the promoted copy
// on another node; the holder reads its SSD copy and writes it there through
// the transport.
TEST_F(EmbeddedClusterTest, PromotionStagedOnAnotherNodeIsWrittenThere) {
  EmbeddedClusterOptions options;
  options.master.shard_count = 16;
  options.master.offload_mode = OffloadMode::kOnEvict;
  options.clock = &clock_;
  options.background = false;
  EmbeddedNodeOptions holder;
  holder.node.name = "holder";
  holder.node.dram_bytes = 256 * 1024;
  holder.ssd_bytes = 16 * kMiB;
  EmbeddedNodeOptions other;
  other.node.name = "other";
  other.node.dram_bytes = kMiB;
  options.nodes = {holder, other};
  Result<std::unique_ptr<EmbeddedCluster>> c =
      EmbeddedCluster::Start(std::move(options));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  cluster_ = std::move(*c);
  client_ = cluster_->NewClient();

  PutOptions on_holder;
  on_holder.preferred_node = "holder";
  const std::vector<std::byte> bytes = Pattern(64 * 1024, 7);
  ASSERT_TRUE(client_->Put("cold", bytes, on_holder).ok());
  // Evict it to the holder's SSD.
  clock_.Advance(cluster_->master().config().lease_ttl);
  cluster_->master().EvictMemory(2 * kMiB);  // asks for more than there is
  Settle();
  ASSERT_EQ(cluster_->master().DescribeObject("cold")->replicas.size(), 1u);
  ASSERT_EQ(cluster_->master().DescribeObject("cold")->replicas[0].desc.tier,
            Tier::kLocalDisk);
  // Fill the holder's DRAM with objects eviction may not touch.
  PutOptions pinned = on_holder;
  pinned.hard_pin = true;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        client_->Put("pin" + std::to_string(i), Pattern(64 * 1024, i), pinned)
            .ok());
  }
  for (int read = 0; read < 2; ++read) ASSERT_TRUE(client_->Get("cold").ok());
  Settle();
  EXPECT_EQ(cluster_->node(0).stats().promotions_done, 1u);
  Result<ObjectDescription> d = cluster_->master().DescribeObject("cold");
  ASSERT_TRUE(d.ok());
  bool on_other = false;
  for (const Replica& r : d->replicas) {
    on_other |= r.desc.tier == Tier::kMemory &&
                r.desc.state == ReplicaState::kComplete &&
                r.desc.node == cluster_->node(1).id();
  }
  EXPECT_TRUE(on_other);
  Result<std::vector<std::byte>> got = client_->Get("cold");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, bytes);
  EXPECT_EQ(cluster_->master().Audit().total_refcnt, 0u);
}

// Flips one value byte of every record in the data files under `dir`.
// Records start on 4096-byte boundaries with the magic "MTSR"; values of
// 64 KiB start one block further.
int CorruptEveryValue(const std::string& dir) {
  int flipped = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const int fd = ::open(entry.path().c_str(), O_RDWR);
    if (fd < 0) continue;
    const off_t size = static_cast<off_t>(entry.file_size());
    for (off_t at = 0; at + 8192 <= size; at += 4096) {
      char magic[4];
      if (::pread(fd, magic, 4, at) != 4 ||
          std::memcmp(magic, "MTSR", 4) != 0) {
        continue;
      }
      char byte;
      if (::pread(fd, &byte, 1, at + 4096 + 100) != 1) continue;
      byte ^= 0x5a;
      if (::pwrite(fd, &byte, 1, at + 4096 + 100) == 1) ++flipped;
    }
    ::close(fd);
  }
  return flipped;
}

TEST_F(EmbeddedClusterTest, CorruptSsdRecordIsNeverServedAndIsDropped) {
  Start(OffloadMode::kOnEvict, 1, /*real_files=*/true);
  PutMany(40);
  Settle();
  std::vector<int> ssd_only;
  size_t with_ssd_copy = 0;  // written back objects still in DRAM too
  for (int i = 0; i < 40; ++i) {
    Result<ObjectDescription> d = cluster_->master().DescribeObject(Key(i));
    ASSERT_TRUE(d.ok());
    if (d->replicas.size() == 1 &&
        d->replicas[0].desc.tier == Tier::kLocalDisk) {
      ssd_only.push_back(i);
    }
    for (const Replica& r : d->replicas) {
      with_ssd_copy += r.desc.tier == Tier::kLocalDisk;
    }
  }
  ASSERT_FALSE(ssd_only.empty());
  ASSERT_GT(CorruptEveryValue(dir_.path() + "/n0"), 0);

  for (int i : ssd_only) {
    Result<std::vector<std::byte>> got = client_->Get(Key(i));
    ASSERT_FALSE(got.ok()) << i;
    EXPECT_EQ(got.status().reason(), ErrorReason::kChecksumMismatch);
  }
  Settle();  // the node reports the corrupt keys with its heartbeat
  for (int i : ssd_only) EXPECT_FALSE(client_->Exists(Key(i))->exists) << i;
  // Compaction may find the corrupt copies of objects also in DRAM too.
  EXPECT_GE(cluster_->master().GetStats().ssd_corruptions, ssd_only.size());
  EXPECT_LE(cluster_->master().GetStats().ssd_corruptions, with_ssd_copy);
  // Objects still in DRAM are untouched.
  Result<std::vector<std::byte>> newest = client_->Get(Key(39));
  ASSERT_TRUE(newest.ok());
  EXPECT_EQ(*newest, Pattern(64 * 1024, 39));
  EXPECT_TRUE(cluster_->master().Audit().consistent());
}

TEST_F(EmbeddedClusterTest, OffModeLosesEvictedObjectsCleanly) {
  Start(OffloadMode::kOff, 1);
  PutMany(40);
  Settle();
  int present = 0;
  for (int i = 0; i < 40; ++i) present += client_->Exists(Key(i))->exists;
  EXPECT_LT(present, 16);
  EXPECT_TRUE(client_->Exists(Key(39))->exists);  // the newest stays
  EXPECT_TRUE(cluster_->master().Audit().consistent());
}

TEST_F(EmbeddedClusterTest, RestartedNodeBringsItsSsdObjectsBack) {
  Start(OffloadMode::kWriteThrough, 1, /*real_files=*/true);
  PutMany(8);
  Settle();  // write-through offloads land
  ASSERT_EQ(cluster_->master().GetStats().offload_completed, 8u);
  ASSERT_TRUE(cluster_->RestartNode(0).ok());
  for (int i = 0; i < 8; ++i) {
    Result<std::vector<std::byte>> got = client_->Get(Key(i));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, Pattern(64 * 1024, i));
  }
  EXPECT_EQ(cluster_->master().GetStats().inventory_restored, 8u);
}

TEST_F(EmbeddedClusterTest, DeadNodeIsExpiredAndSurvivorsStayReadable) {
  Start(OffloadMode::kOff, 2);
  PutMany(8);
  cluster_->KillNode(0);
  for (int i = 0; i < 11; ++i) {
    clock_.Advance(std::chrono::seconds(1));
    cluster_->Step();
  }
  EXPECT_EQ(cluster_->master().GetStats().nodes_expired, 1u);
  int readable = 0;
  for (int i = 0; i < 8; ++i) {
    Result<std::vector<std::byte>> got = client_->Get(Key(i));
    if (got.ok()) {
      EXPECT_EQ(*got, Pattern(64 * 1024, i));
      ++readable;
    } else {
      EXPECT_EQ(got.status().reason(), ErrorReason::kObjectNotFound);
    }
  }
  EXPECT_GT(readable, 0);
  EXPECT_LT(readable, 8);
  const AuditReport audit = cluster_->master().Audit();
  EXPECT_EQ(audit.total_refcnt, 0u);
  EXPECT_TRUE(audit.consistent());
}

TEST_F(EmbeddedClusterTest, ReadBeforeExpiryOfAKilledNodeFailsClearly) {
  Start(OffloadMode::kOff, 1);
  PutMany(1);
  cluster_->KillNode(0);
  // The master still lists the replica; the data plane cannot reach it.
  EXPECT_EQ(client_->Get(Key(0)).status().reason(), ErrorReason::kUnavailable);
}

// A grant whose window ran out before the write could start: the client
// writes nothing (the range may be another put's by then), gives the put
// back and says so. A window under a millisecond is over as it arrives.
TEST_F(EmbeddedClusterTest, AGrantThatRanOutIsNeverWritten) {
  Start(OffloadMode::kOff, 1, false, std::chrono::microseconds(500));
  const Status put = client_->Put(Key(0), Pattern(64 * 1024, 0));
  EXPECT_EQ(put.reason(), ErrorReason::kTimeout) << put.ToString();
  Result<ExistsInfo> exists = client_->Exists(Key(0));
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_FALSE(exists->exists);
  // Revoked, not left to the put timeout: the space is free again.
  EXPECT_EQ(cluster_->master().Audit().allocated_memory_bytes, 0u);
}

}  // namespace
}  // namespace embedded_cluster_test
}  // namespace mooncake_tier
