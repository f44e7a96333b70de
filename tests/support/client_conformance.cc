#include "tests/support/client_conformance.h"

#include <algorithm>
#include <thread>

namespace mooncake_tier::testing {

std::vector<std::byte> Pattern(size_t size, uint32_t seed) {
  std::vector<std::byte> out(size);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = static_cast<std::byte>(x);
  }
  return out;
}

namespace {

TEST_P(ClientConformanceTest, RoundTripsManySizes) {
  const std::vector<size_t> sizes = {1, 63, 64, 65, 4096, 100000, 1 << 20};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string key = "size-" + std::to_string(sizes[i]);
    const std::vector<std::byte> value = Pattern(sizes[i], i);
    ASSERT_TRUE(client().Put(key, value).ok()) << key;
    Result<std::vector<std::byte>> got = client().Get(key);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, value) << key;
    std::vector<std::byte> buf(sizes[i] + 10);
    Result<uint64_t> n = client().GetInto(key, buf);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, sizes[i]);
    EXPECT_TRUE(std::equal(value.begin(), value.end(), buf.begin()));
  }
}

TEST_P(ClientConformanceTest, MissingKeysAndBadInputAreClearErrors) {
  EXPECT_EQ(client().Get("absent").status().reason(),
            ErrorReason::kObjectNotFound);
  EXPECT_FALSE(client().Exists("absent")->exists);
  EXPECT_EQ(client().Remove("absent").reason(), ErrorReason::kObjectNotFound);
  const std::vector<std::byte> v = Pattern(10, 1);
  EXPECT_EQ(client().Put("", v).reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(client().Put(std::string(kMaxKeyBytes + 1, 'k'), v).reason(),
            ErrorReason::kInvalidKey);
  EXPECT_EQ(client().Put("empty", {}).reason(), ErrorReason::kInvalidSize);
  EXPECT_EQ(client().Put("huge", Pattern(env_->dram_bytes() + 1, 1)).reason(),
            ErrorReason::kNoSpace);
  EXPECT_FALSE(client().Exists("empty")->exists);
  EXPECT_FALSE(client().Exists("huge")->exists);
}

TEST_P(ClientConformanceTest, RePutIsRefusedAndKeepsTheOriginal) {
  const std::vector<std::byte> first = Pattern(1000, 1);
  ASSERT_TRUE(client().Put("k", first).ok());
  EXPECT_EQ(client().Put("k", Pattern(1000, 2)).reason(),
            ErrorReason::kObjectExists);
  EXPECT_EQ(*client().Get("k"), first);
}

TEST_P(ClientConformanceTest, GetIntoTooSmallBufferWritesNothing) {
  ASSERT_TRUE(client().Put("k", Pattern(1000, 3)).ok());
  std::vector<std::byte> small(999, std::byte{0x5a});
  EXPECT_EQ(client().GetInto("k", small).status().reason(),
            ErrorReason::kBufferTooSmall);
  EXPECT_EQ(small[0], std::byte{0x5a});
}

TEST_P(ClientConformanceTest, BatchesReportPerKey) {
  const std::vector<std::byte> a = Pattern(100, 1), b = Pattern(200, 2);
  std::vector<PutItem> puts = {{"a", a, {}}, {"", a, {}}, {"b", b, {}}};
  std::vector<Status> put = client().PutBatch(puts);
  EXPECT_TRUE(put[0].ok());
  EXPECT_EQ(put[1].reason(), ErrorReason::kInvalidKey);
  EXPECT_TRUE(put[2].ok());

  std::vector<std::string> keys = {"a", "nope", "b"};
  auto got = client().GetBatch(keys);
  EXPECT_EQ(*got[0], a);
  EXPECT_EQ(got[1].status().reason(), ErrorReason::kObjectNotFound);
  EXPECT_EQ(*got[2], b);

  std::vector<std::byte> ba(100), bb(100);
  std::vector<GetIntoItem> into = {{"a", ba}, {"b", bb}};
  auto n = client().GetIntoBatch(into);
  EXPECT_EQ(*n[0], 100u);
  EXPECT_EQ(n[1].status().reason(), ErrorReason::kBufferTooSmall);
  EXPECT_EQ(ba, a);

  auto exists = client().ExistsBatch(keys);
  EXPECT_TRUE(exists[0]->exists);
  EXPECT_EQ(exists[0]->size, 100u);
  EXPECT_FALSE(exists[1]->exists);

  auto removed = client().RemoveBatch(keys, RemoveOptions{true});
  EXPECT_TRUE(removed[0].ok());
  EXPECT_EQ(removed[1].reason(), ErrorReason::kObjectNotFound);
  EXPECT_TRUE(removed[2].ok());
  EXPECT_FALSE(client().Exists("a")->exists);
}

// An engine's KV block spread over per-layer pages: gathered on put,
// scattered on get, byte for byte the same object as a contiguous one.
TEST_P(ClientConformanceTest, GatheredPutsAndScatteredGets) {
  const std::vector<std::byte> whole = Pattern(10000, 4);
  const std::span<const std::byte> w(whole);
  std::vector<PutItem> puts(2);
  puts[0].key = "gathered";
  puts[0].parts = {w.subspan(0, 4096), w.subspan(4096, 0),
                   w.subspan(4096, 5000), w.subspan(9096)};
  puts[1].key = "both";
  puts[1].value = w;
  puts[1].parts = {w};
  std::vector<Status> put = client().PutBatch(puts);
  ASSERT_TRUE(put[0].ok()) << put[0].ToString();
  EXPECT_EQ(put[1].reason(), ErrorReason::kInvalidArgument);
  EXPECT_FALSE(client().Exists("both")->exists);
  EXPECT_EQ(*client().Get("gathered"), whole);

  // Scattered into pages of 3000 bytes with room to spare: the last page
  // is filled in part and the spare page is untouched.
  std::vector<std::vector<std::byte>> pages(5, std::vector<std::byte>(3000));
  pages[4].assign(3000, std::byte{0x77});
  std::vector<GetIntoItem> gets(3);
  gets[0].key = "gathered";
  for (auto& page : pages) gets[0].parts.push_back(page);
  std::vector<std::byte> tiny(2000, std::byte{0x5a});
  gets[1].key = "gathered";
  gets[1].parts = {std::span<std::byte>(tiny), std::span<std::byte>(tiny)};
  gets[2].key = "gathered";
  gets[2].buffer = pages[0];
  gets[2].parts = {pages[1]};
  std::vector<Result<uint64_t>> got = client().GetIntoBatch(gets);
  ASSERT_TRUE(got[0].ok()) << got[0].status().ToString();
  EXPECT_EQ(*got[0], whole.size());
  std::vector<std::byte> joined;
  for (size_t p = 0; p < 4; ++p) {
    joined.insert(joined.end(), pages[p].begin(), pages[p].end());
  }
  joined.resize(whole.size());
  EXPECT_EQ(joined, whole);
  EXPECT_EQ(pages[4], std::vector<std::byte>(3000, std::byte{0x77}));
  EXPECT_EQ(got[1].status().reason(), ErrorReason::kBufferTooSmall);
  EXPECT_EQ(tiny[0], std::byte{0x5a});
  EXPECT_EQ(got[2].status().reason(), ErrorReason::kInvalidArgument);
}

TEST_P(ClientConformanceTest, HealthCheckAnswersWhileTheStoreServes) {
  EXPECT_TRUE(client().CheckHealth().ok());
}

TEST_P(ClientConformanceTest, ReadersLeaseBlocksOtherRemovalUnlessForced) {
  // A remote reader's lease goes back a few milliseconds after its copy
  // (the client's lease releaser lingers to batch): a removal that loses
  // the race to that release finds no lease. So a few tries; a lease must
  // block at least one.
  bool blocked = false;
  for (int attempt = 0; attempt < 5 && !blocked; ++attempt) {
    ASSERT_TRUE(client().Put("k", Pattern(10, 1)).ok());
    ASSERT_TRUE(client().Get("k").ok());
    const Status removed = client().Remove("k");
    if (removed.reason() == ErrorReason::kObjectLeased) {
      blocked = true;
    } else {
      ASSERT_TRUE(removed.ok()) << removed.ToString();
    }
  }
  EXPECT_TRUE(blocked) << "no read's lease blocked a removal";
  EXPECT_TRUE(client().Remove("k", RemoveOptions{true}).ok());
  EXPECT_TRUE(client().Put("k", Pattern(10, 2)).ok());
  EXPECT_EQ(*client().Get("k"), Pattern(10, 2));
}

TEST_P(ClientConformanceTest, KeysWithAnyBytesButNul) {
  const std::string key = "tok/\xe6\x97\xa5 \x01\xff:block#7";
  ASSERT_TRUE(client().Put(key, Pattern(50, 9)).ok());
  EXPECT_EQ(*client().Get(key), Pattern(50, 9));
}

TEST_P(ClientConformanceTest, GroupMembersAreReadableOnlyWhenComplete) {
  const std::vector<std::byte> k = Pattern(2048, 1), v = Pattern(2048, 2);
  PutOptions first, second;
  first.group = GroupSpec{"block-7", 2, 0};
  second.group = GroupSpec{"block-7", 2, 1};
  ASSERT_TRUE(client().Put("block-7/k", k, first).ok());
  Result<ExistsInfo> probe = client().Exists("block-7/k");
  ASSERT_TRUE(probe.ok() && probe->group.has_value());
  EXPECT_EQ(probe->group->state, GroupState::kFilling);
  EXPECT_EQ(probe->group->present, 1u);
  EXPECT_EQ(client().Get("block-7/k").status().reason(),
            ErrorReason::kGroupIncomplete);
  PutOptions wrong_size = second;
  wrong_size.group->group_size = 3;
  EXPECT_EQ(client().Put("block-7/x", v, wrong_size).reason(),
            ErrorReason::kInvalidGroup);
  ASSERT_TRUE(client().Put("block-7/v", v, second).ok());
  EXPECT_EQ(client().Exists("block-7/v")->group->state, GroupState::kComplete);
  EXPECT_EQ(*client().Get("block-7/k"), k);
  EXPECT_EQ(*client().Get("block-7/v"), v);

  Result<GroupInfo> group = client().GetGroup("block-7");
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  EXPECT_EQ(group->status.present, 2u);
  ASSERT_EQ(group->members.size(), 2u);
  EXPECT_EQ(group->members[1].key, "block-7/v");
  EXPECT_FALSE(group->members[1].tiers.empty());
  EXPECT_EQ(client().GetGroup("no-such-group").status().reason(),
            ErrorReason::kGroupNotFound);
  EXPECT_TRUE(client().RemoveGroup("block-7", RemoveOptions{true}).ok());
  EXPECT_FALSE(client().Exists("block-7/k")->exists);
  EXPECT_FALSE(client().Exists("block-7/v")->exists);
}

// An engine's lookup: a prompt's blocks, each a group of two members, the
// third block half put. The probe counts the readable members from the
// first, in one call.
TEST_P(ClientConformanceTest, PrefixProbeCountsTheReadableBlocks) {
  std::vector<std::string> keys;
  for (uint32_t block = 0; block < 4; ++block) {
    for (uint32_t index = 0; index < 2; ++index) {
      const std::string id = "prompt-" + std::to_string(block);
      keys.push_back(id + "/" + std::to_string(index));
      if (block == 3 || (block == 2 && index == 1)) continue;
      PutOptions member;
      member.group = GroupSpec{id, 2, index};
      ASSERT_TRUE(client().Put(keys.back(), Pattern(1000, block), member).ok());
    }
  }
  Result<PrefixInfo> prefix = client().ProbePrefix(keys);
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  EXPECT_EQ(prefix->length, 4u);
  EXPECT_EQ(prefix->bytes, 4000u);
  EXPECT_EQ(client().ProbePrefix({})->length, 0u);
  keys.push_back("");
  EXPECT_EQ(client().ProbePrefix(keys).status().reason(),
            ErrorReason::kInvalidKey);
}

TEST_P(ClientConformanceTest, RegisteredBuffersCarryPutsAndGets) {
  constexpr size_t kSlice = 64 << 10, kSlices = 8;
  std::vector<std::byte> arena(2 * kSlices * kSlice);
  std::span<std::byte> all(arena);
  ASSERT_TRUE(client().RegisterBuffer(arena).ok());
  EXPECT_EQ(client().RegisterBuffer({}).reason(),
            ErrorReason::kInvalidArgument);
  std::vector<PutItem> puts;
  std::vector<GetIntoItem> gets;
  for (size_t i = 0; i < kSlices; ++i) {
    std::span<std::byte> out = all.subspan(i * kSlice, kSlice);
    const std::vector<std::byte> v = Pattern(kSlice, 500 + i);
    std::copy(v.begin(), v.end(), out.begin());
    const std::string key = "registered-" + std::to_string(i);
    puts.push_back({key, out, {}});
    gets.push_back({key, all.subspan((kSlices + i) * kSlice, kSlice)});
  }
  for (const Status& s : client().PutBatch(puts)) {
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  std::vector<Result<uint64_t>> got = client().GetIntoBatch(gets);
  for (size_t i = 0; i < kSlices; ++i) {
    ASSERT_TRUE(got[i].ok()) << got[i].status().ToString();
    EXPECT_EQ(*got[i], kSlice);
    EXPECT_TRUE(std::equal(gets[i].buffer.begin(), gets[i].buffer.end(),
                           puts[i].value.begin()))
        << "slice " << i;
  }
  EXPECT_TRUE(client().UnregisterBuffer(arena).ok());
}

TEST_P(ClientConformanceTest, ManyClientsInParallel) {
  constexpr int kThreads = 4, kPerThread = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<Client> c = env_->NewClient();
      for (int i = 0; i < kPerThread; ++i) {
        const std::string key =
            "p" + std::to_string(t) + "-" + std::to_string(i);
        const std::vector<std::byte> v = Pattern(4096, t * 1000 + i);
        if (!c->Put(key, v).ok()) failures++;
        Result<std::vector<std::byte>> got = c->Get(key);
        if (!got.ok() || *got != v) failures++;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace mooncake_tier::testing
