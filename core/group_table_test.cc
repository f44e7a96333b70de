#include "core/group_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"

namespace mooncake_tier {
namespace group_table_test {
namespace {

using std::chrono::seconds;

// What PutStart will do: find or create the group under its stripe lock and
// reserve the index; a group the failed attempt created is dropped again.
Status Reserve(GroupTable& table, const GroupSpec& spec, std::string_view key,
               TimePoint now, GroupCounters* counters = nullptr) {
  GroupTable::Shard& shard = table.ShardFor(spec.group_id);
  MutexLock lock(&shard.mu);
  auto [it, inserted] = shard.groups.try_emplace(spec.group_id);
  Status status = GroupTable::Reserve(it, spec, key, now);
  if (!status.ok() && it->second.Empty()) {
    shard.groups.erase(it);
  } else if (status.ok() && inserted && counters != nullptr) {
    counters->groups_created.fetch_add(1, std::memory_order_relaxed);
  }
  return status;
}

// What PutEnd will do.
void MarkPresent(GroupTable& table, const std::string& id, uint32_t index,
                 TimePoint now, GroupCounters* counters = nullptr) {
  GroupTable::Shard& shard = table.ShardFor(id);
  MutexLock lock(&shard.mu);
  auto it = shard.groups.find(id);
  ASSERT_NE(it, shard.groups.end()) << id;
  if (it->second.MarkPresent(index, now) && counters != nullptr) {
    counters->groups_completed.fetch_add(1, std::memory_order_relaxed);
  }
}

// A group of `size` with `present` members put, all reserved.
void AddGroup(GroupTable& table, const std::string& id, uint32_t size,
              uint32_t present, TimePoint now) {
  for (uint32_t i = 0; i < size; ++i) {
    ASSERT_TRUE(Reserve(table, GroupSpec{id, size, i},
                        id + "/" + std::to_string(i), now)
                    .ok());
  }
  for (uint32_t i = 0; i < present; ++i) MarkPresent(table, id, i, now);
}

// Calls fn(GroupMeta&) under the group's stripe lock.
template <typename Fn>
void WithGroup(GroupTable& table, const std::string& id, Fn fn) {
  GroupTable::Shard& shard = table.ShardFor(id);
  MutexLock lock(&shard.mu);
  auto it = shard.groups.find(id);
  ASSERT_NE(it, shard.groups.end()) << id;
  fn(it->second);
}

std::string Id(int n) {
  std::string s = std::to_string(n);
  return "group-" + std::string(4 - s.size(), '0') + s;
}

// Every page of a listing, concatenated; fails on an empty non-final page.
std::vector<std::string> ListAll(const GroupTable& table,
                                 std::optional<GroupState> filter, size_t limit,
                                 size_t* pages) {
  std::vector<std::string> ids;
  std::string cursor;
  *pages = 0;
  do {
    GroupPage page = table.ListPage(filter, limit, cursor);
    ++*pages;
    EXPECT_LE(page.groups.size(), limit);
    EXPECT_FALSE(page.groups.empty() && !page.next_cursor.empty());
    for (const GroupStatus& g : page.groups) {
      if (filter.has_value()) {
        EXPECT_EQ(g.state, *filter) << g.group_id;
      }
      ids.push_back(g.group_id);
    }
    cursor = page.next_cursor;
  } while (!cursor.empty() && *pages < 10000);
  return ids;
}

class GroupTableTest : public ::testing::Test {
 protected:
  GroupTable table_{8};
  ManualClock clock_;
};

TEST_F(GroupTableTest, StripesAreStableAndAllUsed) {
  std::set<uint32_t> used;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = Id(i);
    const uint32_t index = table_.ShardIndex(id);
    ASSERT_LT(index, table_.shard_count());
    EXPECT_EQ(index, table_.ShardIndex(id));
    EXPECT_EQ(&table_.ShardFor(id), &table_.shard(index));
    used.insert(index);
  }
  EXPECT_EQ(used.size(), table_.shard_count());
}

TEST_F(GroupTableTest, FindReportsTheGroupOrNothing) {
  AddGroup(table_, "g", 4, 3, clock_.Now());
  std::optional<GroupStatus> found = table_.Find("g");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->group_id, "g");
  EXPECT_EQ(found->state, GroupState::kFilling);
  EXPECT_EQ(found->expected, 4u);
  EXPECT_EQ(found->present, 3u);
  EXPECT_FALSE(table_.Find("h").has_value());
  EXPECT_EQ(table_.Size(), 1u);
}

TEST_F(GroupTableTest, AFailedFirstReservationLeavesNoGroup) {
  EXPECT_EQ(Reserve(table_, GroupSpec{"g", 2, 5}, "a", clock_.Now()).reason(),
            ErrorReason::kInvalidGroup);
  EXPECT_FALSE(table_.Find("g").has_value());
  EXPECT_EQ(table_.Size(), 0u);
}

// The table keeps no copy of an id: an entry's key views its record's. A
// group that starts afresh gets a new record (the old one freed with the
// last member object holding it), and the key must follow it: the id
// reserved with comes from a string that is gone by then.
TEST_F(GroupTableTest, AnEntryStartedAfreshIsStillFoundByItsId) {
  {
    const std::string id = Id(7);  // freed at the end of the block
    ASSERT_TRUE(Reserve(table_, GroupSpec{id, 2, 0}, "a", clock_.Now()).ok());
  }
  const std::string id = Id(7);
  WithGroup(table_, id, [&](GroupMeta& g) {
    EXPECT_TRUE(g.Expire(clock_.Now() + seconds(120), seconds(60)));
    g.DropAllMembers();  // the sweep removed the expired group's members
  });
  const GroupRecord* old = nullptr;
  WithGroup(table_, id, [&](GroupMeta& g) { old = g.record.get(); });
  ASSERT_TRUE(Reserve(table_, GroupSpec{id, 3, 1}, "b", clock_.Now()).ok());
  WithGroup(table_, id, [&](GroupMeta& g) {
    EXPECT_NE(g.record.get(), old);
    EXPECT_EQ(g.state, GroupState::kFilling);
    EXPECT_EQ(g.expected, 3u);
  });
  {
    // The entry's key views the new record's id. (Still viewing the first
    // record's, whose id was freed with it, the lookups below would read
    // freed memory: caught under ASAN only; this check fails in any build.)
    GroupTable::Shard& shard = table_.ShardFor(id);
    MutexLock lock(&shard.mu);
    auto it = shard.groups.find(id);
    ASSERT_NE(it, shard.groups.end());
    EXPECT_EQ(it->first.id.data(), it->second.record->group_id().data());
  }
  std::optional<GroupStatus> found = table_.Find(id);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->group_id, id);
  EXPECT_EQ(found->expected, 3u);
  EXPECT_EQ(table_.ListPage(std::nullopt, 10, "").groups.size(), 1u);
}

// An entry's key keeps its id's hash, and the table growing moves entries
// by that hash alone: after many growths every group, whichever way its
// entry was made, is still found by its id.
TEST_F(GroupTableTest, EntriesKeepTheirIdsHashAsTheTableGrows) {
  constexpr int kGroups = 2000;
  for (int i = 0; i < kGroups; ++i) {
    const std::string id = Id(i);
    if (i % 2 == 0) {  // from the id alone (GroupKey hashes it)
      ASSERT_TRUE(Reserve(table_, GroupSpec{id, 2, 0}, "k", clock_.Now()).ok());
      continue;
    }
    // As a put makes it: from the id it already hashed.
    const HashedKey hashed(id);
    GroupTable::Shard& shard = table_.ShardFor(hashed);
    MutexLock lock(&shard.mu);
    auto [it, inserted] = shard.groups.try_emplace(GroupKey(hashed));
    ASSERT_TRUE(inserted);
    ASSERT_TRUE(GroupTable::Reserve(it, GroupSpec{id, 2, 0}, "k", clock_.Now(),
                                    hashed.hash)
                    .ok());
  }
  ASSERT_EQ(table_.Size(), static_cast<size_t>(kGroups));
  for (uint32_t s = 0; s < table_.shard_count(); ++s) {
    GroupTable::Shard& shard = table_.shard(s);
    MutexLock lock(&shard.mu);
    for (const auto& [key, group] : shard.groups) {
      EXPECT_EQ(key.hash, HashKey(key.id)) << key.id;
    }
  }
  for (int i = 0; i < kGroups; ++i) {
    const std::string id = Id(i);
    EXPECT_TRUE(table_.Find(id).has_value()) << id;
    EXPECT_TRUE(table_.Find(HashedKey(id)).has_value()) << id;
  }
}

TEST_F(GroupTableTest, CountsGroupsByState) {
  for (int i = 0; i < 5; ++i) AddGroup(table_, Id(i), 2, 1, clock_.Now());
  for (int i = 5; i < 9; ++i) AddGroup(table_, Id(i), 2, 2, clock_.Now());
  for (int i = 9; i < 12; ++i) {
    AddGroup(table_, Id(i), 2, 2, clock_.Now());
    WithGroup(table_, Id(i), [&](GroupMeta& g) {
      EXPECT_TRUE(g.Lose(0, BreakCause::kRemoved, clock_.Now()));
    });
  }
  clock_.Advance(seconds(60));
  for (int i = 0; i < 2; ++i) {
    WithGroup(table_, Id(i), [&](GroupMeta& g) {
      EXPECT_TRUE(g.Expire(clock_.Now(), seconds(60)));
    });
  }
  GroupStateCounts counts = table_.CountsByState();
  EXPECT_EQ(counts.filling, 3u);
  EXPECT_EQ(counts.complete, 4u);
  EXPECT_EQ(counts.broken, 3u);
  EXPECT_EQ(counts.expired, 2u);
  EXPECT_EQ(counts.Of(GroupState::kBroken), 3u);
  EXPECT_EQ(counts.total(), 12u);
  EXPECT_EQ(table_.Size(), 12u);
}

TEST_F(GroupTableTest, PagesWalkEveryGroupOnceInIdOrder) {
  std::vector<std::string> all;
  for (int i = 0; i < 200; ++i) {
    all.push_back(Id(i));
    AddGroup(table_, Id(i), 1, i % 2, clock_.Now());
  }
  std::sort(all.begin(), all.end());
  size_t pages = 0;
  EXPECT_EQ(ListAll(table_, std::nullopt, 7, &pages), all);
  EXPECT_EQ(pages, 29u);  // ceil(200 / 7), no empty trailing page
  EXPECT_EQ(ListAll(table_, std::nullopt, 8, &pages), all);
  EXPECT_EQ(pages, 25u);
  EXPECT_EQ(ListAll(table_, std::nullopt, 1000, &pages), all);
  EXPECT_EQ(pages, 1u);
}

TEST_F(GroupTableTest, PagesFilterByState) {
  std::vector<std::string> complete;
  for (int i = 0; i < 50; ++i) {
    const bool done = i % 3 == 0;
    AddGroup(table_, Id(i), 2, done ? 2 : 1, clock_.Now());
    if (done) complete.push_back(Id(i));
  }
  size_t pages = 0;
  EXPECT_EQ(ListAll(table_, GroupState::kComplete, 4, &pages), complete);
  EXPECT_EQ(pages, 5u);  // 17 groups
  EXPECT_TRUE(ListAll(table_, GroupState::kExpired, 4, &pages).empty());
  EXPECT_EQ(pages, 1u);
}

TEST_F(GroupTableTest, CursorSurvivesChangesBetweenPages) {
  for (int i = 10; i < 30; ++i) AddGroup(table_, Id(i), 1, 1, clock_.Now());
  GroupPage first = table_.ListPage(std::nullopt, 5, "");
  ASSERT_EQ(first.groups.size(), 5u);
  ASSERT_EQ(first.next_cursor, Id(14));
  // Drop the cursor's group and one not yet listed; add one on each side.
  for (const std::string& id : {Id(14), Id(20)}) {
    GroupTable::Shard& shard = table_.ShardFor(id);
    MutexLock lock(&shard.mu);
    shard.groups.erase(id);
  }
  AddGroup(table_, Id(5), 1, 1, clock_.Now());
  AddGroup(table_, Id(40), 1, 1, clock_.Now());

  std::vector<std::string> rest;
  std::string cursor = first.next_cursor;
  while (!cursor.empty()) {
    GroupPage page = table_.ListPage(std::nullopt, 5, cursor);
    for (const GroupStatus& g : page.groups) rest.push_back(g.group_id);
    cursor = page.next_cursor;
  }
  std::vector<std::string> want;
  for (int i = 15; i < 30; ++i) {
    if (i != 20) want.push_back(Id(i));
  }
  want.push_back(Id(40));
  EXPECT_EQ(rest, want);
}

TEST_F(GroupTableTest, ALimitOfZeroIsOne) {
  AddGroup(table_, "a", 1, 0, clock_.Now());
  AddGroup(table_, "b", 1, 0, clock_.Now());
  GroupPage page = table_.ListPage(std::nullopt, 0, "");
  ASSERT_EQ(page.groups.size(), 1u);
  EXPECT_EQ(page.groups[0].group_id, "a");
  EXPECT_EQ(page.next_cursor, "a");
  EXPECT_TRUE(table_.ListPage(std::nullopt, 5, "b").groups.empty());
}

TEST(GroupCountersTest, SnapshotAndVisitorCoverEveryCounter) {
  GroupCounters counters;
  counters.groups_created.fetch_add(3);
  counters.Broken(BreakCause::kRemoved).fetch_add(1);
  counters.Broken(BreakCause::kNodeLost).fetch_add(2);
  counters.Broken(BreakCause::kCorrupt).fetch_add(4);
  GroupCounterSnapshot snap = counters.Snapshot();
  EXPECT_EQ(snap.groups_created, 3u);
  EXPECT_EQ(snap.groups_broken_removed, 1u);
  EXPECT_EQ(snap.groups_broken_node_lost, 2u);
  EXPECT_EQ(snap.groups_broken_corrupt, 4u);
  std::vector<std::string> names;
  uint64_t sum = 0;
  snap.VisitCounters([&](std::string_view name, uint64_t value) {
    names.emplace_back(name);
    sum += value;
  });
  EXPECT_EQ(sum, 10u);
  ASSERT_EQ(names.size(), 11u);
  EXPECT_EQ(names.front(), "groups_created");
  EXPECT_EQ(names[6], "groups_collected");
}

// Threads put members of shared and private groups, and race for the same
// index, through the stripe locks while a reader lists and counts.
TEST(GroupTableConcurrencyTest, ConcurrentMembersCountExactly) {
  constexpr int kThreads = 8;
  constexpr int kShared = 16;   // one member per thread in each
  constexpr int kPrivate = 20;  // per thread, 4 members each
  constexpr int kRaced = 32;    // size-1 groups every thread tries to take
  GroupTable table(4);
  GroupCounters counters;
  ManualClock clock;
  std::atomic<int> raced_wins{0};
  std::atomic<bool> done{false};

  const uint64_t complete = kShared + kThreads * kPrivate;
  std::thread reader([&] {
    while (!done.load()) {
      GroupPage page = table.ListPage(GroupState::kComplete, 10, "");
      EXPECT_LE(page.groups.size(), 10u);
      for (const GroupStatus& g : page.groups) {
        EXPECT_EQ(g.present, g.expected) << g.group_id;
      }
      EXPECT_LE(table.CountsByState().complete, complete);
      if (std::optional<GroupStatus> s = table.Find("shared-3")) {
        EXPECT_LE(s->present, static_cast<uint32_t>(kThreads));
      }
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      const uint32_t me = static_cast<uint32_t>(t);
      for (int g = 0; g < kShared; ++g) {
        const std::string id = "shared-" + std::to_string(g);
        const std::string key = id + "/" + std::to_string(t);
        ASSERT_TRUE(Reserve(table, GroupSpec{id, kThreads, me}, key,
                            clock.Now(), &counters)
                        .ok());
        // A retry of the same put is harmless.
        ASSERT_TRUE(Reserve(table, GroupSpec{id, kThreads, me}, key,
                            clock.Now(), &counters)
                        .ok());
        MarkPresent(table, id, me, clock.Now(), &counters);
      }
      for (int g = 0; g < kPrivate; ++g) {
        const std::string id =
            "t" + std::to_string(t) + "-" + std::to_string(g);
        for (uint32_t i = 0; i < 4; ++i) {
          ASSERT_TRUE(Reserve(table, GroupSpec{id, 4, i},
                              id + std::to_string(i), clock.Now(), &counters)
                          .ok());
        }
        for (uint32_t i = 4; i-- > 0;) {
          MarkPresent(table, id, i, clock.Now(), &counters);
        }
      }
      for (int g = 0; g < kRaced; ++g) {
        const std::string id = "raced-" + std::to_string(g);
        if (Reserve(table, GroupSpec{id, 1, 0}, "by-" + std::to_string(t),
                    clock.Now(), &counters)
                .ok()) {
          raced_wins.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& w : writers) w.join();
  done.store(true);
  reader.join();

  GroupStateCounts counts = table.CountsByState();
  EXPECT_EQ(counts.complete, complete);
  EXPECT_EQ(counts.filling, static_cast<uint64_t>(kRaced));
  EXPECT_EQ(counts.total(), complete + kRaced);
  EXPECT_EQ(raced_wins.load(), kRaced);
  GroupCounterSnapshot snap = counters.Snapshot();
  EXPECT_EQ(snap.groups_completed, complete);
  EXPECT_EQ(snap.groups_created, complete + kRaced);
  for (int g = 0; g < kShared; ++g) {
    std::optional<GroupStatus> s = table.Find("shared-" + std::to_string(g));
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->present, static_cast<uint32_t>(kThreads));
    EXPECT_EQ(s->state, GroupState::kComplete);
  }
}

}  // namespace
}  // namespace group_table_test
}  // namespace mooncake_tier
