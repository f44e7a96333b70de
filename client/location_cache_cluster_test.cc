// Reads served from clients' location caches against everything that frees
// or reuses DRAM: removals (forced too), evictions to SSD, re-puts of the
// same keys with new bytes, and puts that take freed space at once. Every
// byte every reader gets is checked: each value must be whole and the
// key's own (of some version), never another object's bytes.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "base/byte_units.h"
#include "client/embedded_cluster.h"
#include "client/store_client.h"
#include "core/master.h"

namespace mooncake_tier {
namespace location_cache_cluster_test {
namespace {

using std::chrono::milliseconds;

constexpr size_t kValueBytes = 16 * 1024;
constexpr int kHotKeys = 8;

// Key `k`, version `v`: 8-byte words, each naming k, v and its position.
uint64_t Word(uint32_t k, uint32_t v, uint64_t j) {
  return (uint64_t{k} << 48) | (uint64_t{v & 0xffffff} << 24) | (j & 0xffffff);
}

std::vector<std::byte> Value(uint32_t k, uint32_t v) {
  std::vector<std::byte> out(kValueBytes);
  for (uint64_t j = 0; j < kValueBytes / 8; ++j) {
    const uint64_t w = Word(k, v, j);
    std::memcpy(out.data() + j * 8, &w, 8);
  }
  return out;
}

// Empty when `bytes` is a whole value of key `k`; else what is wrong.
std::string Check(uint32_t k, std::span<const std::byte> bytes) {
  if (bytes.size() != kValueBytes) return "wrong size";
  uint64_t first;
  std::memcpy(&first, bytes.data(), 8);
  if (first >> 48 != k) {
    return "another object's bytes (key " + std::to_string(first >> 48) + ")";
  }
  const uint32_t v = static_cast<uint32_t>(first >> 24 & 0xffffff);
  for (uint64_t j = 0; j < kValueBytes / 8; ++j) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + j * 8, 8);
    if (w != Word(k, v, j)) {
      return "torn or mixed value at word " + std::to_string(j);
    }
  }
  return "";
}

std::string HotKey(int k) { return "hot-" + std::to_string(k); }

class LocationCacheClusterTest : public ::testing::Test {
 protected:
  void Start(Duration location_grant) {
    EmbeddedClusterOptions options;
    options.master.shard_count = 16;
    options.master.location_grant = location_grant;
    options.master.offload_mode = OffloadMode::kOnEvict;
    options.tick_interval = milliseconds(10);
    EmbeddedNodeOptions node;
    node.node.name = "n0";
    node.node.dram_bytes = 2 * kMiB;
    node.ssd_bytes = 64 * kMiB;
    options.nodes.push_back(node);
    Result<std::unique_ptr<EmbeddedCluster>> c =
        EmbeddedCluster::Start(std::move(options));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(*c);
  }

  std::unique_ptr<EmbeddedCluster> cluster_;
};

// Readers loop over hot keys with their caches on while another client
// removes them (every other time by force, with a reader's lease on),
// puts them again with new bytes, and fills DRAM with other objects, which
// take freed ranges as soon as the master hands them out and push the hot
// keys to SSD and back.
TEST_F(LocationCacheClusterTest, CachedReadsNeverReturnAnotherObjectsBytes) {
  // Short grants: many run out and are renewed, and held ranges come back
  // into use within the test.
  ASSERT_NO_FATAL_FAILURE(Start(milliseconds(100)));
  std::unique_ptr<Client> writer = cluster_->NewClient();
  for (int k = 0; k < kHotKeys; ++k) {
    ASSERT_TRUE(writer->Put(HotKey(k), Value(k, 0)).ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> good_reads{0};
  std::atomic<uint64_t> bad_reads{0};
  std::string first_bad;
  std::mutex bad_mu;

  // Every reader's client exists before any thread starts: the threads
  // index the vector.
  std::vector<std::unique_ptr<Client>> readers;
  for (int r = 0; r < 2; ++r) readers.push_back(cluster_->NewClient());
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      Client& client = *readers[r];
      std::minstd_rand rng(r + 1);
      std::vector<std::byte> buffer(kValueBytes);
      while (!stop.load(std::memory_order_relaxed)) {
        const int k = static_cast<int>(rng() % kHotKeys);
        Result<uint64_t> got = client.GetInto(HotKey(k), buffer);
        if (!got.ok()) continue;  // removed, not ready, leased: fine
        const std::string wrong =
            Check(k, std::span<const std::byte>(buffer).first(*got));
        if (wrong.empty()) {
          good_reads.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        bad_reads.fetch_add(1, std::memory_order_relaxed);
        std::lock_guard<std::mutex> lock(bad_mu);
        if (first_bad.empty()) first_bad = HotKey(k) + ": " + wrong;
      }
    });
  }

  // The writer: 2 MiB of DRAM holds 128 values; it keeps putting fillers
  // (keys 1000+) and removing old ones, and replaces hot keys.
  std::minstd_rand rng(99);
  uint32_t version = 1;
  int filler = 0;
  const auto end = std::chrono::steady_clock::now() + milliseconds(1500);
  while (std::chrono::steady_clock::now() < end) {
    const int k = static_cast<int>(rng() % kHotKeys);
    const bool force = version % 2 == 0;
    if (writer->Remove(HotKey(k), RemoveOptions{force}).ok()) {
      // New bytes under the same key, then other objects straight into
      // whatever DRAM the master hands out now.
      (void)writer->Put(HotKey(k), Value(k, version++));
    }
    for (int i = 0; i < 4; ++i, ++filler) {
      (void)writer->Put("fill-" + std::to_string(filler),
                        Value(1000 + filler % 50000, 0));
      if (filler >= 64) {
        (void)writer->Remove("fill-" + std::to_string(filler - 64),
                             RemoveOptions{true});
      }
    }
  }
  stop = true;
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(bad_reads.load(), 0u) << first_bad;
  EXPECT_GT(good_reads.load(), 100u);
  uint64_t cache_hits = 0;
  for (const auto& reader : readers) {
    cache_hits +=
        static_cast<StoreClient&>(*reader).location_cache()->stats().hits;
  }
  // The caches served reads (the point of the test), and the master saw
  // them afterwards.
  EXPECT_GT(cache_hits, 0u);
  const MasterStats stats = cluster_->master().GetStats();
  EXPECT_GT(stats.location_grants, 0u);
  EXPECT_GT(stats.removes, 10u);
}

// A stepped cluster (manual clock) with a writer and a reader client, and
// the group "g" of two members ("g/0", "g/1").
class LocationCacheGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EmbeddedClusterOptions options;
    options.master.shard_count = 16;
    options.clock = &clock_;
    options.background = false;
    EmbeddedNodeOptions node;
    node.node.name = "n0";
    node.node.dram_bytes = 4 * kMiB;
    options.nodes.push_back(node);
    Result<std::unique_ptr<EmbeddedCluster>> cluster =
        EmbeddedCluster::Start(std::move(options));
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(*cluster);
    writer_ = cluster_->NewClient();
    reader_ = cluster_->NewClient();
  }

  // Puts both members, member m as Value(m + 1, version).
  void PutGroup(uint32_t version) {
    for (uint32_t m = 0; m < 2; ++m) {
      PutOptions put;
      put.group = GroupSpec{"g", 2, m};
      ASSERT_TRUE(
          writer_->Put("g/" + std::to_string(m), Value(m + 1, version), put)
              .ok());
    }
  }

  ManualClock clock_;
  std::unique_ptr<EmbeddedCluster> cluster_;
  std::unique_ptr<Client> writer_;
  std::unique_ptr<Client> reader_;
};

// One batch never shows part of a group that broke after some members were
// cached: when a key of the batch fails at the master, the members read
// from the cache are confirmed there too.
TEST_F(LocationCacheGroupTest, ABatchNeverShowsPartOfABrokenGroup) {
  ASSERT_NO_FATAL_FAILURE(PutGroup(0));
  std::vector<std::byte> one(kValueBytes), two(kValueBytes);
  // The reader caches the second member only.
  ASSERT_TRUE(reader_->GetInto("g/1", two).ok());
  // Another client takes the first member away: the group breaks.
  ASSERT_TRUE(writer_->Remove("g/0", RemoveOptions{true}).ok());
  std::vector<GetIntoItem> items{{"g/0", one, {}}, {"g/1", two, {}}};
  std::vector<Result<uint64_t>> got = reader_->GetIntoBatch(items);
  EXPECT_EQ(got[0].ok(), got[1].ok())
      << "part of a group read: " << got[0].status().ToString() << " / "
      << got[1].status().ToString();
  EXPECT_GT(static_cast<StoreClient&>(*reader_).location_cache()->stats().hits,
            0u);
}

// A group removed and put again under the same keys while one member was
// cached: a batch reads both members of the same incarnation.
TEST_F(LocationCacheGroupTest, ABatchNeverMixesTwoIncarnationsOfAGroup) {
  ASSERT_NO_FATAL_FAILURE(PutGroup(0));
  std::vector<std::byte> one(kValueBytes), two(kValueBytes);
  ASSERT_TRUE(reader_->GetInto("g/0", one).ok());  // cached: version 0
  ASSERT_TRUE(writer_->RemoveGroup("g", RemoveOptions{true}).ok());
  ASSERT_NO_FATAL_FAILURE(PutGroup(1));
  std::vector<GetIntoItem> items{{"g/0", one, {}}, {"g/1", two, {}}};
  std::vector<Result<uint64_t>> got = reader_->GetIntoBatch(items);
  ASSERT_TRUE(got[0].ok() && got[1].ok());
  EXPECT_EQ(Check(1, one), "");
  EXPECT_EQ(Check(2, two), "");
  uint64_t first = 0, second = 0;
  std::memcpy(&first, one.data(), 8);
  std::memcpy(&second, two.data(), 8);
  EXPECT_EQ(first >> 24 & 0xffffff, second >> 24 & 0xffffff)
      << "members of two incarnations of one group in one batch";
}

}  // namespace
}  // namespace location_cache_cluster_test
}  // namespace mooncake_tier
