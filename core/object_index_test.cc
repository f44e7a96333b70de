#include "core/object_index.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace mooncake_tier {
namespace object_index_test {
namespace {

ObjectMeta MetaOfSize(uint64_t size) {
  ObjectMeta meta;
  meta.size = size;
  return meta;
}

bool Exists(const ObjectIndex& index, std::string_view key) {
  return index.Read(key,
                    [](const ObjectMeta* meta) { return meta != nullptr; });
}

// A group `id` of `size` with every index reserved for key id/i and an
// object there that belongs to it.
void AddGroupWithMembers(ObjectIndex& index, const std::string& id,
                         uint32_t size) {
  for (uint32_t i = 0; i < size; ++i) {
    const std::string key = id + "/" + std::to_string(i);
    index.UpdateGroup(id, [&](GroupSlot& group) {
      if (!group) group.Create();
      ASSERT_TRUE(group.Reserve(GroupSpec{id, size, i}, key, TimePoint()).ok());
      GroupRef record = group->record;
      index.Update(key, [&](ObjectSlot& object) {
        ObjectMeta meta = MetaOfSize(10);
        meta.group = record;
        meta.group_index = i;
        object.Insert() = std::move(meta);
      });
    });
  }
}

TEST(ObjectIndexTest, UpdateInsertsFindsAndErasesAnObject) {
  ObjectIndex index(8, 4);
  EXPECT_FALSE(Exists(index, "k"));
  index.Update("k", [](ObjectSlot& object) {
    EXPECT_FALSE(object);
    EXPECT_EQ(object.get(), nullptr);
    EXPECT_EQ(object.key(), "k");
    object.Insert() = MetaOfSize(5);
    EXPECT_TRUE(object);
    EXPECT_EQ(object->size, 5u);
  });
  EXPECT_TRUE(Exists(index, "k"));
  const uint64_t size = index.Update("k", [](ObjectSlot& object) {
    EXPECT_EQ(object.key(), "k");
    return object->size;
  });
  EXPECT_EQ(size, 5u);
  index.Update("k", [](ObjectSlot& object) { object.Erase(); });
  EXPECT_FALSE(Exists(index, "k"));
  EXPECT_EQ(index.CountObjects().objects, 0u);
}

TEST(ObjectIndexTest, EraseIfEmptyKeepsAnObjectWithReplicas) {
  ObjectIndex index(8, 4);
  index.Update("k", [](ObjectSlot& object) {
    ObjectMeta meta = MetaOfSize(5);
    meta.replicas.push_back(Replica{});
    object.Insert() = std::move(meta);
    EXPECT_FALSE(object.EraseIfEmpty());
    object->replicas.clear();
    EXPECT_TRUE(object.EraseIfEmpty());
    EXPECT_FALSE(object);
  });
  EXPECT_FALSE(Exists(index, "k"));
}

TEST(ObjectIndexTest, PutMarksAreListedCountedAndGoWithTheirObject) {
  ObjectIndex index(8, 4);
  const TimePoint started = TimePoint() + std::chrono::seconds(7);
  for (const char* key : {"a", "b", "c"}) {
    index.Update(key, [&](ObjectSlot& object) {
      object.Insert() = MetaOfSize(1);
      object.MarkPutPending(started);
    });
  }
  index.Update("a", [](ObjectSlot& object) { object.ClearPutPending(); });
  index.Update("b", [&](ObjectSlot& object) {
    ASSERT_TRUE(object.PutPendingSince().has_value());
    EXPECT_EQ(*object.PutPendingSince(), started);
    object.Erase();  // the mark goes with it
  });
  std::set<std::string> pending;
  index.ForEachPendingPut(
      [&](const std::string& key, TimePoint when, const ObjectMeta* meta) {
        EXPECT_EQ(when, started);
        EXPECT_NE(meta, nullptr);
        pending.insert(key);
      });
  EXPECT_EQ(pending, std::set<std::string>{"c"});
  const ObjectCounts counts = index.CountObjects();
  EXPECT_EQ(counts.objects, 2u);
  EXPECT_EQ(counts.pending_puts, 1u);
}

TEST(ObjectIndexTest, AScanMayEraseWhatItVisitsAndStopEarly) {
  ObjectIndex index(4, 4);
  for (int i = 0; i < 100; ++i) {
    index.Update("k" + std::to_string(i),
                 [&](ObjectSlot& object) { object.Insert() = MetaOfSize(i); });
  }
  size_t visited = 0;
  index.ForEachObject([&](ObjectSlot& object) {
    ++visited;
    if (object->size % 2 == 0) object.Erase();
  });
  EXPECT_EQ(visited, 100u);
  EXPECT_EQ(index.CountObjects().objects, 50u);
  size_t seen = 0;
  index.ForEachObject([&](ObjectSlot&) { return ++seen < 10; });
  EXPECT_EQ(seen, 10u);
  uint64_t odd = 0;
  index.ReadEachObject([&](std::string_view key, const ObjectMeta& meta) {
    EXPECT_EQ(key.substr(0, 1), "k");
    odd += meta.size % 2;
  });
  EXPECT_EQ(odd, 50u);
}

TEST(ObjectIndexTest, SamplesCoverTheStripesInTurn) {
  ObjectIndex index(8, 4);
  for (int i = 0; i < 400; ++i) {
    index.Update("k" + std::to_string(i),
                 [&](ObjectSlot& object) { object.Insert() = MetaOfSize(1); });
  }
  std::set<std::string> seen;
  size_t per_call = 0;
  for (int pass = 0; pass < 4; ++pass) {
    per_call = 0;
    index.SampleObjects(2, 3, [&](const std::string& key, const ObjectMeta&) {
      seen.insert(key);
      ++per_call;
    });
    EXPECT_LE(per_call, 6u);  // two stripes, three each
  }
  // Four samples of two stripes each: all eight stripes, three objects each.
  EXPECT_EQ(seen.size(), 24u);
}

TEST(ObjectIndexTest, AGroupSlotCreatesReservesAndErases) {
  ObjectIndex index(8, 4);
  const GroupSpec spec{"g", 2, 0};
  index.UpdateGroup("g", [&](GroupSlot& group) {
    EXPECT_FALSE(group);
    group.Create();
    ASSERT_TRUE(group.Reserve(spec, "g/0", TimePoint()).ok());
    EXPECT_EQ(group.id().key, "g");
  });
  ASSERT_TRUE(index.FindGroup(HashedKey("g")).has_value());
  EXPECT_EQ(index.CountGroupsByState().filling, 1u);
  EXPECT_EQ(index.ListGroups(std::nullopt, 10, "").groups.size(), 1u);
  index.UpdateGroup("g", [](GroupSlot& group) {
    ASSERT_TRUE(group);
    group.Erase();
    EXPECT_FALSE(group);
  });
  EXPECT_FALSE(index.FindGroup(HashedKey("g")).has_value());
}

TEST(ObjectIndexTest, AMemberWalkVisitsOnlyTheGroupsOwnObjects) {
  ObjectIndex index(16, 4);
  AddGroupWithMembers(index, "g", 6);
  // Member 2's key now holds another object (not this incarnation's), and
  // member 4's object is gone.
  index.Update("g/2", [](ObjectSlot& object) {
    object->group = GroupRecord::Make("g", 6);
  });
  index.Update("g/4", [](ObjectSlot& object) { object.Erase(); });
  std::set<std::string> visited;
  index.UpdateGroup("g", [&](GroupSlot& group) {
    group.ForEachMember(
        [&](ObjectSlot& member) { visited.insert(std::string(member.key())); });
  });
  EXPECT_EQ(visited, (std::set<std::string>{"g/0", "g/1", "g/3", "g/5"}));
  // The key walk sees every key, objects or not, and the extra key once.
  std::set<std::string> keys;
  size_t with_object = 0;
  index.UpdateGroup("g", [&](GroupSlot& group) {
    group.ForEachMemberKey("g/9", [&](ObjectSlot& member) {
      keys.insert(std::string(member.key()));
      with_object += member ? 1 : 0;
    });
  });
  EXPECT_EQ(keys.size(), 7u);
  EXPECT_TRUE(keys.count("g/9"));
  EXPECT_EQ(with_object, 5u);  // g/4 and g/9 have none
}

TEST(ObjectIndexTest, AMemberWalkMayEraseItsObjects) {
  ObjectIndex index(16, 4);
  AddGroupWithMembers(index, "g", 4);
  index.UpdateGroup("g", [&](GroupSlot& group) {
    group.ForEachMember([](ObjectSlot& member) { member.Erase(); });
  });
  EXPECT_EQ(index.CountObjects().objects, 0u);
}

TEST(ObjectIndexTest, AnObjectUnderItsGroupIsTheOrder) {
  ObjectIndex index(8, 4);
  // Group, then object: allowed (a member's stripe under its group's).
  index.UpdateGroup("g", [&](GroupSlot&) {
    index.Update("k",
                 [](ObjectSlot& object) { object.Insert() = MetaOfSize(1); });
  });
  EXPECT_TRUE(Exists(index, "k"));
}

using ObjectIndexDeathTest = ::testing::Test;

TEST(ObjectIndexDeathTest, AnObjectStripeInsideAnotherAborts) {
  ObjectIndex index(8, 4);
  EXPECT_DEATH(
      index.Update("a",
                   [&](ObjectSlot&) { index.Update("b", [](ObjectSlot&) {}); }),
      "lock order violated.*object stripe while holding an object");
}

TEST(ObjectIndexDeathTest, AGroupStripeUnderAnObjectStripeAborts) {
  ObjectIndex index(8, 4);
  EXPECT_DEATH(
      index.Update(
          "a", [&](ObjectSlot&) { index.UpdateGroup("g", [](GroupSlot&) {}); }),
      "lock order violated.*group stripe while holding an object");
}

TEST(ObjectIndexDeathTest, TwoGroupStripesAbort) {
  ObjectIndex index(8, 4);
  EXPECT_DEATH(
      index.UpdateGroup(
          "g",
          [&](GroupSlot&) { index.ReadGroup("h", [](const GroupMeta*) {}); }),
      "lock order violated.*group stripe while holding a group");
}

TEST(ObjectIndexDeathTest, AGroupLookupUnderAnObjectStripeAborts) {
  ObjectIndex index(8, 4);
  EXPECT_DEATH(index.Update("a",
                            [&](ObjectSlot&) {
                              index.FindGroup(HashedKey("g")).has_value();
                            }),
               "lock order violated.*group stripe while holding an object");
}

TEST(ObjectIndexDeathTest, AMemberWalkUnderAnObjectStripeAborts) {
  ObjectIndex index(8, 4);
  AddGroupWithMembers(index, "g", 2);
  // A scan holds an object stripe; a member walk from inside it would take
  // more (in any order).
  EXPECT_DEATH(index.ForEachObject([&](ObjectSlot&) {
    index.UpdateGroup(
        "g", [](GroupSlot& group) { group.ForEachMember([](ObjectSlot&) {}); });
  }),
               "lock order violated");
}

// Puts of members under their group, plain puts and scans at once: the one
// order means no deadlock (and, under TSAN, no race).
TEST(ObjectIndexTest, GroupsObjectsAndScansRunTogether) {
  ObjectIndex index(4, 2);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const std::string id =
            "g" + std::to_string(t) + "-" + std::to_string(i);
        AddGroupWithMembers(index, id, 3);
        index.UpdateGroup(id, [](GroupSlot& group) {
          group.ForEachMember([](ObjectSlot& member) { member.Erase(); });
          group.Erase();
        });
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 2000; ++i) {
      index.Update("k" + std::to_string(i % 50), [](ObjectSlot& object) {
        if (object) {
          object.Erase();
        } else {
          object.Insert() = MetaOfSize(1);
        }
      });
    }
  });
  std::thread scanner([&] {
    while (!stop.load()) {
      index.ForEachGroup([](GroupSlot& group) {
        group.ForEachMember([](ObjectSlot& member) { ++member->leases; });
      });
      index.ReadEachObject([](std::string_view, const ObjectMeta&) {});
    }
  });
  for (std::thread& t : threads) t.join();
  stop = true;
  scanner.join();
  EXPECT_EQ(index.CountGroupsByState().total(), 0u);
}

}  // namespace
}  // namespace object_index_test
}  // namespace mooncake_tier
