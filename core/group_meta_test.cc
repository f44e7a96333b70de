#include "core/group_meta.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"

namespace mooncake_tier {
namespace group_meta_test {
namespace {

using std::chrono::seconds;

GroupSpec Spec(uint32_t size, uint32_t index, std::string id = "g") {
  return GroupSpec{std::move(id), size, index};
}

std::string Key(uint32_t index) { return "k" + std::to_string(index); }

class GroupMetaTest : public ::testing::Test {
 protected:
  // Reserves and completes every member of a group of `size`.
  void Fill(GroupMeta& g, uint32_t size) {
    for (uint32_t i = 0; i < size; ++i) {
      ASSERT_TRUE(g.Reserve(Spec(size, i), Key(i), clock_.Now()).ok());
    }
    for (uint32_t i = 0; i < size; ++i) g.MarkPresent(i, clock_.Now());
    ASSERT_EQ(g.state, GroupState::kComplete);
  }

  ManualClock clock_;
};

TEST_F(GroupMetaTest, CompletesOnlyWhenTheLastMemberLandsInAnyOrder) {
  GroupMeta g;
  const TimePoint start = clock_.Now();
  for (uint32_t i = 8; i-- > 0;) {  // reserved in reverse
    ASSERT_TRUE(g.Reserve(Spec(8, i), Key(i), clock_.Now()).ok());
    clock_.Advance(seconds(1));
  }
  EXPECT_EQ(g.expected, 8u);
  EXPECT_EQ(g.created, start);
  const std::vector<uint32_t> order = {3, 0, 7, 5, 1, 6, 2, 4};
  for (size_t n = 0; n < order.size(); ++n) {
    EXPECT_EQ(g.state, GroupState::kFilling);
    EXPECT_EQ(g.present(), n);
    const bool completed = g.MarkPresent(order[n], clock_.Now());
    EXPECT_EQ(completed, n + 1 == order.size()) << "member " << n;
  }
  EXPECT_EQ(g.state, GroupState::kComplete);
  EXPECT_EQ(g.state_since, clock_.Now());
  EXPECT_EQ(g.created, start);
  GroupStatus status = g.ToStatus("g");
  EXPECT_EQ(status.group_id, "g");
  EXPECT_EQ(status.state, GroupState::kComplete);
  EXPECT_EQ(status.expected, 8u);
  EXPECT_EQ(status.present, 8u);
  std::vector<GroupMemberView> members = g.Members();
  ASSERT_EQ(members.size(), 8u);
  for (uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(members[i], (GroupMemberView{i, Key(i), true}));
  }
}

TEST_F(GroupMetaTest, MarkPresentIsIdempotent) {
  GroupMeta g;
  ASSERT_TRUE(g.Reserve(Spec(1, 0), "a", clock_.Now()).ok());
  EXPECT_TRUE(g.MarkPresent(0, clock_.Now()));
  EXPECT_FALSE(g.MarkPresent(0, clock_.Now()));
  EXPECT_FALSE(g.MarkPresent(5, clock_.Now()));  // not a member
  EXPECT_EQ(g.present(), 1u);
  EXPECT_EQ(g.state, GroupState::kComplete);
}

TEST_F(GroupMetaTest, SizeMismatchIsRefusedAndChangesNothing) {
  GroupMeta g;
  ASSERT_TRUE(g.Reserve(Spec(4, 0), "a", clock_.Now()).ok());
  Status s = g.Reserve(Spec(8, 1), "b", clock_.Now());
  EXPECT_EQ(s.reason(), ErrorReason::kInvalidGroup);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find('4'), std::string::npos) << s.message();
  EXPECT_NE(s.message().find('8'), std::string::npos) << s.message();
  EXPECT_EQ(g.expected, 4u);
  EXPECT_EQ(g.Members(), (std::vector<GroupMemberView>{{0, "a", false}}));
}

TEST_F(GroupMetaTest, IndexOutOfRangeIsInvalid) {
  GroupMeta g;
  EXPECT_EQ(g.Reserve(Spec(4, 4), "a", clock_.Now()).reason(),
            ErrorReason::kInvalidGroup);
  EXPECT_TRUE(g.Empty());
  EXPECT_EQ(g.expected, 0u);
}

TEST_F(GroupMetaTest, TakenIndexIsRefusedAndChangesNothing) {
  GroupMeta g;
  ASSERT_TRUE(g.Reserve(Spec(4, 3), "a", clock_.Now()).ok());
  const std::vector<GroupMemberView> before = g.Members();
  Status s = g.Reserve(Spec(4, 3), "b", clock_.Now());
  EXPECT_EQ(s.reason(), ErrorReason::kObjectExists);
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(), "group 'g' index 3 is already taken by key 'a'");
  EXPECT_EQ(g.Members(), before);

  // Once present, not even the same key may take it again.
  g.MarkPresent(3, clock_.Now());
  EXPECT_EQ(g.Reserve(Spec(4, 3), "a", clock_.Now()).reason(),
            ErrorReason::kObjectExists);
  EXPECT_EQ(g.Reserve(Spec(4, 3), "b", clock_.Now()).reason(),
            ErrorReason::kObjectExists);
  EXPECT_EQ(g.Members(), (std::vector<GroupMemberView>{{3, "a", true}}));
  EXPECT_EQ(g.present(), 1u);
}

TEST_F(GroupMetaTest, SameKeyRetryOfAReservationIsOk) {
  GroupMeta g;
  const TimePoint first = clock_.Now();
  ASSERT_TRUE(g.Reserve(Spec(2, 1), "a", first).ok());
  clock_.Advance(seconds(5));
  EXPECT_TRUE(g.Reserve(Spec(2, 1), "a", clock_.Now()).ok());
  EXPECT_EQ(g.created, first);
  EXPECT_EQ(g.Members(), (std::vector<GroupMemberView>{{1, "a", false}}));
  EXPECT_EQ(g.present(), 0u);
}

TEST_F(GroupMetaTest, OnlyAFillingGroupAcceptsMembers) {
  GroupMeta complete;
  Fill(complete, 2);
  GroupMeta broken;
  ASSERT_TRUE(broken.Reserve(Spec(2, 0), "a", clock_.Now()).ok());
  ASSERT_TRUE(broken.Reserve(Spec(2, 1), "b", clock_.Now()).ok());
  broken.Lose(1, BreakCause::kRemoved, clock_.Now());
  GroupMeta expired;
  ASSERT_TRUE(expired.Reserve(Spec(2, 0), "a", clock_.Now()).ok());
  clock_.Advance(seconds(61));
  ASSERT_TRUE(expired.Expire(clock_.Now(), seconds(60)));

  // An index that is taken is taken, whatever the state.
  EXPECT_EQ(complete.Reserve(Spec(2, 1), "c", clock_.Now()).reason(),
            ErrorReason::kObjectExists);
  for (GroupMeta* g : {&broken, &expired}) {
    const GroupState state = g->state;
    const std::vector<GroupMemberView> before = g->Members();
    Status s = g->Reserve(Spec(2, 1), "c", clock_.Now());
    EXPECT_EQ(s.reason(), ErrorReason::kGroupNotFilling) << s.ToString();
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(ReasonName(s.reason()), "GROUP_NOT_FILLING");
    EXPECT_EQ(g->state, state);
    EXPECT_EQ(g->Members(), before);
  }
  // With no member left a group holds nothing: the next reservation starts
  // it afresh, as an engine re-putting the block expects.
  broken.Lose(0, BreakCause::kRemoved, clock_.Now());
  EXPECT_TRUE(broken.Empty());
  ASSERT_TRUE(broken.Reserve(Spec(3, 0), "a", clock_.Now()).ok());
  EXPECT_EQ(broken.state, GroupState::kFilling);
  EXPECT_EQ(broken.expected, 3u);
  EXPECT_FALSE(broken.break_cause.has_value());
}

TEST_F(GroupMetaTest, RetriedReservationSurvivesTheGroupBreaking) {
  GroupMeta g;
  ASSERT_TRUE(g.Reserve(Spec(2, 0), "a", clock_.Now()).ok());
  ASSERT_TRUE(g.Reserve(Spec(2, 1), "b", clock_.Now()).ok());
  ASSERT_TRUE(g.MarkPresent(1, clock_.Now()) == false);
  g.Lose(1, BreakCause::kNodeLost, clock_.Now());
  ASSERT_EQ(g.state, GroupState::kBroken);
  // "a"'s put is still in flight and its client retries PutStart.
  EXPECT_TRUE(g.Reserve(Spec(2, 0), "a", clock_.Now()).ok());
  EXPECT_EQ(g.Reserve(Spec(2, 1), "b", clock_.Now()).reason(),
            ErrorReason::kGroupNotFilling);
}

TEST_F(GroupMetaTest, UnreserveFreesTheIndex) {
  GroupMeta g;
  ASSERT_TRUE(g.Reserve(Spec(2, 0), "a", clock_.Now()).ok());
  ASSERT_TRUE(g.Reserve(Spec(2, 1), "b", clock_.Now()).ok());
  g.MarkPresent(0, clock_.Now());
  g.Unreserve(1, "a", 0);  // another key's index: nothing happens
  ASSERT_NE(g.Find(1), nullptr);
  g.Unreserve(1, "b", 0);  // the put of "b" was revoked
  EXPECT_EQ(g.state, GroupState::kFilling);
  EXPECT_EQ(g.Find(1), nullptr);
  g.Unreserve(0, "a", 0);  // present: not a reservation, nothing happens
  ASSERT_NE(g.Find(0), nullptr);
  EXPECT_EQ(g.present(), 1u);

  ASSERT_TRUE(g.Reserve(Spec(2, 1), "c", clock_.Now()).ok());
  EXPECT_TRUE(g.MarkPresent(1, clock_.Now()));
  EXPECT_EQ(g.Members(),
            (std::vector<GroupMemberView>{{0, "a", true}, {1, "c", true}}));
}

TEST_F(GroupMetaTest, AFillingGroupLeftEmptyStartsAfresh) {
  GroupMeta g;
  ASSERT_TRUE(g.Reserve(Spec(4, 0), "a", clock_.Now()).ok());
  g.Unreserve(0, "a", 0);
  EXPECT_TRUE(g.Empty());
  clock_.Advance(seconds(100));
  EXPECT_FALSE(g.Expire(clock_.Now(), seconds(60)));  // holds nothing
  ASSERT_TRUE(g.Reserve(Spec(2, 1), "b", clock_.Now()).ok());
  EXPECT_EQ(g.expected, 2u);
  EXPECT_EQ(g.created, clock_.Now());
}

TEST_F(GroupMetaTest, LosingAMemberBreaksACompleteGroup) {
  GroupMeta g;
  Fill(g, 3);
  clock_.Advance(seconds(2));
  EXPECT_TRUE(g.Lose(1, BreakCause::kNodeLost, clock_.Now()));
  EXPECT_EQ(g.state, GroupState::kBroken);
  EXPECT_EQ(g.break_cause, BreakCause::kNodeLost);
  EXPECT_EQ(g.state_since, clock_.Now());
  EXPECT_EQ(g.present(), 2u);
  EXPECT_EQ(g.Find(1), nullptr);

  // Later losses drop members but keep the first cause and time.
  const TimePoint broke = clock_.Now();
  clock_.Advance(seconds(1));
  EXPECT_FALSE(g.Lose(0, BreakCause::kCorrupt, clock_.Now()));
  EXPECT_FALSE(g.Lose(0, BreakCause::kCorrupt, clock_.Now()));  // gone
  EXPECT_EQ(g.break_cause, BreakCause::kNodeLost);
  EXPECT_EQ(g.state_since, broke);
  EXPECT_EQ(g.present(), 1u);
  EXPECT_FALSE(g.Lose(2, BreakCause::kRemoved, clock_.Now()));
  EXPECT_TRUE(g.Empty());
  EXPECT_EQ(g.present(), 0u);
}

TEST_F(GroupMetaTest, LosingAMemberBreaksAFillingGroup) {
  GroupMeta g;
  ASSERT_TRUE(g.Reserve(Spec(4, 0), "a", clock_.Now()).ok());
  ASSERT_TRUE(g.Reserve(Spec(4, 1), "b", clock_.Now()).ok());
  g.MarkPresent(0, clock_.Now());
  EXPECT_FALSE(g.Lose(3, BreakCause::kRemoved, clock_.Now()));  // no member
  EXPECT_EQ(g.state, GroupState::kFilling);
  EXPECT_TRUE(g.Lose(0, BreakCause::kCorrupt, clock_.Now()));
  EXPECT_EQ(g.state, GroupState::kBroken);
  EXPECT_EQ(g.break_cause, BreakCause::kCorrupt);
  EXPECT_EQ(g.present(), 0u);
  // The reserved member may still finish; the group stays broken.
  EXPECT_FALSE(g.MarkPresent(1, clock_.Now()));
  EXPECT_EQ(g.present(), 1u);
  EXPECT_EQ(g.state, GroupState::kBroken);
}

TEST_F(GroupMetaTest, LosingAMemberOfAnExpiredGroupKeepsItExpired) {
  GroupMeta g;
  ASSERT_TRUE(g.Reserve(Spec(2, 0), "a", clock_.Now()).ok());
  g.MarkPresent(0, clock_.Now());
  clock_.Advance(seconds(60));
  ASSERT_TRUE(g.Expire(clock_.Now(), seconds(60)));
  EXPECT_FALSE(g.Lose(0, BreakCause::kRemoved, clock_.Now()));
  EXPECT_EQ(g.state, GroupState::kExpired);
  EXPECT_FALSE(g.break_cause.has_value());
  EXPECT_TRUE(g.Empty());
}

TEST_F(GroupMetaTest, ExpiresOnlyWhenFillingPastTheTimeout) {
  GroupMeta g;
  const TimePoint start = clock_.Now();
  ASSERT_TRUE(g.Reserve(Spec(2, 0), "a", clock_.Now()).ok());
  clock_.Advance(seconds(30));
  // Later members do not restart the clock.
  ASSERT_TRUE(g.Reserve(Spec(2, 1), "b", clock_.Now()).ok());
  clock_.Advance(seconds(29));
  EXPECT_FALSE(g.Expire(clock_.Now(), seconds(60)));
  EXPECT_EQ(g.state, GroupState::kFilling);
  clock_.Advance(seconds(1));
  EXPECT_TRUE(g.Expire(clock_.Now(), seconds(60)));
  EXPECT_EQ(g.state, GroupState::kExpired);
  EXPECT_EQ(g.state_since, clock_.Now());
  EXPECT_EQ(g.created, start);
  EXPECT_FALSE(g.Expire(clock_.Now(), seconds(60)));  // once

  GroupMeta complete;
  Fill(complete, 2);
  clock_.Advance(seconds(600));
  EXPECT_FALSE(complete.Expire(clock_.Now(), seconds(60)));
  EXPECT_EQ(complete.state, GroupState::kComplete);

  GroupMeta broken;
  ASSERT_TRUE(broken.Reserve(Spec(2, 0), "a", clock_.Now()).ok());
  ASSERT_TRUE(broken.Reserve(Spec(2, 1), "b", clock_.Now()).ok());
  broken.Lose(0, BreakCause::kRemoved, clock_.Now());
  clock_.Advance(seconds(600));
  EXPECT_FALSE(broken.Expire(clock_.Now(), seconds(60)));
  EXPECT_EQ(broken.state, GroupState::kBroken);
}

TEST(BreakCauseTest, Names) {
  EXPECT_EQ(BreakCauseName(BreakCause::kRemoved), "removed");
  EXPECT_EQ(BreakCauseName(BreakCause::kNodeLost), "node_lost");
  EXPECT_EQ(BreakCauseName(BreakCause::kCorrupt), "corrupt");
}

}  // namespace
}  // namespace group_meta_test
}  // namespace mooncake_tier

namespace mooncake_tier {
namespace group_meta_test {
namespace {

// The record the members share says "complete" exactly while the group is,
// and a group that starts afresh gets a new record.
TEST_F(GroupMetaTest, RecordFollowsTheStateAndIsNewPerIncarnation) {
  GroupMeta g;
  EXPECT_EQ(g.record, nullptr);
  ASSERT_TRUE(g.Reserve(Spec(2, 0), Key(0), clock_.Now()).ok());
  const GroupRef first = g.record;
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->group_id(), "g");
  EXPECT_EQ(first->group_size(), 2u);
  EXPECT_EQ(first->id_hash(), HashKey("g"));
  ASSERT_TRUE(g.Reserve(Spec(2, 1), Key(1), clock_.Now()).ok());
  EXPECT_EQ(g.record, first);  // later members join the same incarnation
  g.MarkPresent(0, clock_.Now());
  EXPECT_FALSE(first->IsComplete());
  g.MarkPresent(1, clock_.Now());
  EXPECT_TRUE(first->IsComplete());
  g.Lose(0, BreakCause::kRemoved, clock_.Now());
  EXPECT_FALSE(first->IsComplete());  // broken: unreadable again
  g.Lose(1, BreakCause::kRemoved, clock_.Now());
  ASSERT_TRUE(g.Empty());
  // Started afresh: a new record, so objects of the old incarnation never
  // read the new one's state.
  ASSERT_TRUE(g.Reserve(Spec(1, 0), Key(5), clock_.Now()).ok());
  ASSERT_FALSE(g.record == first);
  g.MarkPresent(0, clock_.Now());
  EXPECT_TRUE(g.record->IsComplete());
  EXPECT_FALSE(first->IsComplete());
}

// Members' keys live in one buffer; members leaving and coming back again
// and again do not grow it without bound, and every key stays right.
TEST_F(GroupMetaTest, KeyBufferStaysBoundedUnderRevokeAndRetry) {
  GroupMeta g;
  const std::string long_key(200, 'x');
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(g.Reserve(Spec(8, i), long_key + Key(i), clock_.Now()).ok());
  }
  for (int round = 0; round < 1000; ++round) {
    const uint32_t index = 4 + round % 4;
    ASSERT_TRUE(
        g.Reserve(Spec(8, index), long_key + Key(index), clock_.Now()).ok());
    g.Unreserve(index, long_key + Key(index), 0);
  }
  EXPECT_LE(g.member_keys.size(), 3 * 4 * (long_key.size() + 2) + 256);
  const std::vector<GroupMemberView> members = g.Members();
  ASSERT_EQ(members.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(members[i].key, long_key + Key(i));
    EXPECT_EQ(g.KeyOf(*g.Find(i)), long_key + Key(i));
  }
  // Emptied, the buffer is dropped too.
  for (uint32_t i = 0; i < 4; ++i) g.Unreserve(i, long_key + Key(i), 0);
  EXPECT_TRUE(g.Empty());
  EXPECT_TRUE(g.member_keys.empty());
}

}  // namespace
}  // namespace group_meta_test
}  // namespace mooncake_tier

namespace mooncake_tier {
namespace group_meta_test {
namespace {

// Lookups take a shortcut when slot i holds index i; a sparse list, where
// slot i holds another index, must still find every member and only them.
TEST(GroupMetaLookupTest, SparseAndOutOfOrderMembersAreFound) {
  ManualClock clock;
  GroupMeta g;
  for (uint32_t index : {5u, 1u, 2u, 7u}) {
    ASSERT_TRUE(g.Reserve(Spec(8, index), Key(index), clock.Now()).ok());
  }
  for (uint32_t index = 0; index < 8; ++index) {
    const GroupMember* m = g.Find(index);
    const bool member = index == 1 || index == 2 || index == 5 || index == 7;
    ASSERT_EQ(m != nullptr, member) << index;
    if (member) {
      EXPECT_EQ(g.KeyOf(*m), Key(index));
    }
  }
  ASSERT_TRUE(g.Reserve(Spec(8, 0), Key(0), clock.Now()).ok());
  std::vector<uint32_t> order;
  for (const GroupMemberView& m : g.Members()) order.push_back(m.index);
  EXPECT_EQ(order, (std::vector<uint32_t>{0, 1, 2, 5, 7}));
  EXPECT_FALSE(g.MarkPresent(3, clock.Now()));  // not a member
  EXPECT_FALSE(g.MarkPresent(6, clock.Now()));
  EXPECT_EQ(g.present(), 0u);
}

// Keys named after their group ("<id>_0_k") keep only what follows the id;
// any other key is kept whole. Either way every lookup sees the whole key,
// and the buffer stays packed correctly when members leave.
TEST(GroupMetaKeyTest, KeysStartingWithTheGroupIdStoreOnlyTheirRest) {
  ManualClock clock;
  GroupMeta g;
  const std::string id(64, 'a');  // a block hash, as engines name groups
  const std::vector<std::string> keys = {id + "_0_k", id + "_0_v", "other-key",
                                         id, "aaaa"};
  for (uint32_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(g.Reserve(Spec(8, i, id), keys[i], clock.Now()).ok());
  }
  // "_0_k" + "_0_v" + "other-key" + "" + "aaaa" (shorter than the id).
  EXPECT_EQ(g.member_keys.size(), 4u + 4u + 9u + 0u + 4u);
  for (uint32_t i = 0; i < keys.size(); ++i) {
    const GroupMember& m = *g.Find(i);
    EXPECT_EQ(g.KeyOf(m), keys[i]) << i;
    EXPECT_TRUE(g.KeyIs(m, keys[i])) << i;
    for (uint32_t j = 0; j < keys.size(); ++j) {
      if (j != i) {
        EXPECT_FALSE(g.KeyIs(m, keys[j])) << i << " vs " << j;
      }
    }
    EXPECT_FALSE(g.KeyIs(m, keys[i] + "x")) << i;
  }
  EXPECT_FALSE(g.KeyIs(*g.Find(0), id + "_0_v"));
  // The same put retried keeps its slot; another key for it is refused.
  EXPECT_TRUE(g.Reserve(Spec(8, 1, id), keys[1], clock.Now()).ok());
  EXPECT_EQ(g.Reserve(Spec(8, 1, id), id + "_9_v", clock.Now()).reason(),
            ErrorReason::kObjectExists);
  // Members leaving and coming back (repacking the buffer) keep the rest.
  for (int round = 0; round < 200; ++round) {
    g.Unreserve(1, keys[1], 0);
    ASSERT_TRUE(g.Reserve(Spec(8, 1, id), keys[1], clock.Now()).ok());
  }
  for (const GroupMemberView& m : g.Members()) {
    EXPECT_EQ(m.key, keys[m.index]);
  }
}

TEST(GroupRecordTest, CompleteStatusIsSharedAndKeepsTheRecordAlive) {
  GroupRef record = GroupRecord::Make("block-9", 4);
  SharedGroupStatus a = record->CompleteStatus();
  SharedGroupStatus b = record->CompleteStatus();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(&*a, &*b);  // one status, not a copy per answer
  EXPECT_EQ(a->group_id, "block-9");
  EXPECT_EQ(a->state, GroupState::kComplete);
  EXPECT_EQ(a->expected, 4u);
  EXPECT_EQ(a->present, 4u);
  record = nullptr;  // the answers keep the record (and its status) alive
  EXPECT_EQ(b->group_id, "block-9");
  EXPECT_EQ(a, b);
}

// PutEnd's split: members count themselves in the record (CountPresent,
// under their object stripes), and only the last one completes the group
// under the group stripe (CompleteWithLast).
TEST_F(GroupMetaTest, OnlyTheLastCountedPutCompletesAndNoOneSeesItEarly) {
  GroupMeta g;
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(g.Reserve(Spec(4, i), Key(i), clock_.Now()).ok());
  }
  for (uint32_t i : {2u, 0u, 3u}) {
    EXPECT_FALSE(g.record->CountPresent(i));
    EXPECT_TRUE(g.IsPresent(i));
  }
  EXPECT_EQ(g.present(), 3u);
  EXPECT_TRUE(g.record->CountPresent(1));  // the last put
  // Until it reaches the group stripe, the group reads as filling with the
  // last member still on its way, never as filling with every member.
  EXPECT_FALSE(g.IsPresent(1));
  EXPECT_EQ(g.ToStatus("g").present, 3u);
  std::vector<GroupMemberView> members;
  EXPECT_EQ(g.ToStatus("g", &members).present, 3u);
  EXPECT_EQ(members, (std::vector<GroupMemberView>{{0, Key(0), true},
                                                   {1, Key(1), false},
                                                   {2, Key(2), true},
                                                   {3, Key(3), true}}));
  EXPECT_EQ(g.state, GroupState::kFilling);
  EXPECT_FALSE(g.record->IsComplete());
  // A retried PutStart of the last member still holds its reservation.
  EXPECT_TRUE(g.Reserve(Spec(4, 1), Key(1), clock_.Now()).ok());

  clock_.Advance(seconds(2));
  EXPECT_TRUE(g.CompleteWithLast(1, clock_.Now()));
  EXPECT_EQ(g.state, GroupState::kComplete);
  EXPECT_EQ(g.state_since, clock_.Now());
  EXPECT_TRUE(g.record->IsComplete());
  EXPECT_EQ(g.ToStatus("g").present, 4u);
  for (const GroupMemberView& m : g.Members()) EXPECT_TRUE(m.present);
  // Present members hold their index: no retry, no unreserve.
  EXPECT_EQ(g.Reserve(Spec(4, 1), Key(1), clock_.Now()).reason(),
            ErrorReason::kObjectExists);
  g.Unreserve(1, Key(1), 0);
  EXPECT_EQ(g.member_count, 4u);
}

TEST_F(GroupMetaTest, TheLastPutIntoABrokenGroupIsPresentButRevivesNothing) {
  GroupMeta g;
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(g.Reserve(Spec(3, i), Key(i), clock_.Now()).ok());
  }
  EXPECT_FALSE(g.record->CountPresent(0));
  EXPECT_FALSE(g.record->CountPresent(1));
  EXPECT_TRUE(g.record->CountPresent(2));
  // A member is lost before the last put reaches the group stripe.
  EXPECT_TRUE(g.Lose(0, BreakCause::kNodeLost, clock_.Now()));
  EXPECT_FALSE(g.CompleteWithLast(2, clock_.Now()));
  EXPECT_EQ(g.state, GroupState::kBroken);
  EXPECT_FALSE(g.record->IsComplete());
  EXPECT_EQ(g.present(), 2u);  // members 1 and 2; 0 is gone
  EXPECT_FALSE(g.IsPresent(0));
}

// Indexes below kDenseMembers have slots in the record; those above live
// in the sparse list. Both halves answer alike and list in index order.
TEST_F(GroupMetaTest, MembersAcrossTheDenseBoundAnswerAlike) {
  constexpr uint32_t kSize = 1000;
  const uint32_t dense = GroupMeta::kDenseMembers;
  GroupMeta g;
  const std::vector<uint32_t> indexes = {999, 0, dense, dense - 1, 500, 7};
  for (uint32_t i : indexes) {
    ASSERT_TRUE(g.Reserve(Spec(kSize, i), Key(i), clock_.Now()).ok()) << i;
  }
  EXPECT_EQ(g.member_count, indexes.size());
  ASSERT_NE(g.sparse, nullptr);
  EXPECT_EQ(g.sparse->size(), 3u);  // dense, 500, 999
  std::vector<uint32_t> listed;
  g.ForEachMember([&](uint32_t index, const GroupMember& member) {
    listed.push_back(index);
    EXPECT_EQ(g.KeyOf(member), Key(index));
  });
  EXPECT_EQ(listed, (std::vector<uint32_t>{0, 7, dense - 1, dense, 500, 999}));
  for (uint32_t i : {1u, dense + 1, 998u}) EXPECT_EQ(g.Find(i), nullptr) << i;
  // Taken on either side: refused; retried on either side: kept.
  EXPECT_EQ(g.Reserve(Spec(kSize, 500), "other", clock_.Now()).reason(),
            ErrorReason::kObjectExists);
  EXPECT_EQ(g.Reserve(Spec(kSize, 7), "other", clock_.Now()).reason(),
            ErrorReason::kObjectExists);
  GroupMeta::Reservation again;
  ASSERT_TRUE(
      g.Reserve(Spec(kSize, 999), Key(999), clock_.Now(), 0, &again).ok());
  EXPECT_TRUE(again.retried);
  EXPECT_EQ(again.member, g.Find(999));

  g.Unreserve(500, Key(500), 0);
  g.Unreserve(7, Key(7), 0);
  EXPECT_EQ(g.Find(500), nullptr);
  EXPECT_EQ(g.Find(7), nullptr);
  EXPECT_EQ(g.member_count, 4u);
  EXPECT_TRUE(g.Lose(dense, BreakCause::kRemoved, clock_.Now()));
  EXPECT_FALSE(g.Lose(999, BreakCause::kRemoved, clock_.Now()));  // broken
  EXPECT_EQ(g.sparse, nullptr);  // the last sparse member took the list
  EXPECT_EQ(g.Members(),
            (std::vector<GroupMemberView>{{0, Key(0), false},
                                          {dense - 1, Key(dense - 1), false}}));
  g.DropAllMembers();
  EXPECT_TRUE(g.Empty());
  EXPECT_EQ(g.Find(0), nullptr);
  // Emptied, it starts afresh with a new record and no old slot held.
  const GroupRecord* old = g.record.get();
  ASSERT_TRUE(g.Reserve(Spec(4, 3), Key(3), clock_.Now()).ok());
  EXPECT_NE(g.record.get(), old);
  EXPECT_EQ(g.member_count, 1u);
  EXPECT_EQ(g.Find(0), nullptr);
  EXPECT_EQ(g.state, GroupState::kFilling);
}

// TryReserveFree takes only Reserve's common case (a free dense index of a
// filling group with members); there it leaves the group exactly as
// Reserve would, and in every other case it changes nothing.
TEST_F(GroupMetaTest, TryReserveFreeTakesOnlyAFreeIndexOfAFillingGroup) {
  const std::string id(24, 'b');
  auto members_of = [](const GroupMeta& g) {
    return std::make_pair(g.Members(), g.member_keys);
  };
  GroupMeta fast;
  GroupMeta slow;
  EXPECT_EQ(fast.TryReserveFree(Spec(100, 0, id), id + "/0"), nullptr);
  ASSERT_TRUE(fast.Reserve(Spec(100, 0, id), id + "/0", clock_.Now()).ok());
  ASSERT_TRUE(slow.Reserve(Spec(100, 0, id), id + "/0", clock_.Now()).ok());
  for (uint32_t i : {5u, 1u, 63u}) {
    const std::string key = i == 1 ? "other-" + Key(i) : id + "/" + Key(i);
    GroupMember* slot = fast.TryReserveFree(Spec(100, i, id), key);
    ASSERT_NE(slot, nullptr) << i;
    EXPECT_EQ(slot, fast.Find(i));
    EXPECT_EQ(fast.KeyOf(*slot), key);
    ASSERT_TRUE(slow.Reserve(Spec(100, i, id), key, clock_.Now()).ok());
  }
  EXPECT_EQ(fast.member_count, slow.member_count);
  EXPECT_EQ(members_of(fast), members_of(slow));
  // Anything else is Reserve's to decide, and changes nothing here: a
  // taken index (even by the same key), another size, a sparse index, and
  // any group that is not filling.
  const auto before = members_of(fast);
  EXPECT_EQ(fast.TryReserveFree(Spec(100, 5, id), id + "/" + Key(5)), nullptr);
  EXPECT_EQ(fast.TryReserveFree(Spec(99, 2, id), id + "/x"), nullptr);
  EXPECT_EQ(fast.TryReserveFree(Spec(100, 64, id), id + "/x"), nullptr);
  EXPECT_EQ(fast.TryReserveFree(Spec(100, 100, id), id + "/x"), nullptr);
  EXPECT_TRUE(fast.Lose(5, BreakCause::kRemoved, clock_.Now()));
  const auto broken = members_of(fast);
  EXPECT_EQ(fast.TryReserveFree(Spec(100, 2, id), id + "/x"), nullptr);
  EXPECT_EQ(members_of(fast), broken);
  EXPECT_NE(broken, before);  // Lose did drop member 5
  GroupMeta complete;
  Fill(complete, 2);
  complete.Unreserve(1, Key(1), 0);  // present: stays
  EXPECT_EQ(complete.TryReserveFree(Spec(2, 1), "x"), nullptr);
  EXPECT_EQ(complete.member_count, 2u);
}

// The DRAM a filling group holds: counted once per put (a retried put
// stages the same bytes), returned by an unreserved put, forgotten once the
// group stops filling, and started from zero by a new incarnation.
TEST_F(GroupMetaTest, FillingBytesFollowThePuts) {
  GroupMeta g;
  GroupMeta::Reservation r;
  ASSERT_TRUE(g.Reserve(Spec(3, 0), Key(0), clock_.Now(), 0, &r).ok());
  g.BindPut(r, 11, 100);
  ASSERT_TRUE(g.Reserve(Spec(3, 1), Key(1), clock_.Now(), 0, &r).ok());
  g.BindPut(r, 12, 40);
  EXPECT_EQ(g.Find(1)->key_hash, 12u);
  EXPECT_EQ(g.FillingDramBytes(), 140u);
  ASSERT_TRUE(g.Reserve(Spec(3, 1), Key(1), clock_.Now(), 0, &r).ok());
  ASSERT_TRUE(r.retried);
  g.BindPut(r, 12, 40);
  EXPECT_EQ(g.FillingDramBytes(), 140u);
  g.Unreserve(1, Key(1), 40);
  EXPECT_EQ(g.FillingDramBytes(), 100u);
  EXPECT_TRUE(g.Lose(0, BreakCause::kNodeLost, clock_.Now()));
  EXPECT_EQ(g.FillingDramBytes(), 0u);  // broken: not filling
  ASSERT_TRUE(g.Reserve(Spec(2, 0), Key(0), clock_.Now(), 0, &r).ok());
  EXPECT_EQ(g.FillingDramBytes(), 0u);
  g.BindPut(r, 11, 7);
  EXPECT_EQ(g.FillingDramBytes(), 7u);
}

TEST(GroupRecordTest, PresentBitsCoverLargeGroupsWordByWord) {
  // 130 members: three words of bits, the last one partly used.
  GroupRef record = GroupRecord::Make("wide", 130);
  EXPECT_EQ(record->group_id(), "wide");
  EXPECT_EQ(record->PresentCount(), 0u);
  for (uint32_t i = 0; i < 129; ++i) {
    ASSERT_FALSE(record->CountPresent(i)) << i;
  }
  EXPECT_EQ(record->PresentCount(), 129u);
  EXPECT_TRUE(record->IsPresent(63));
  EXPECT_TRUE(record->IsPresent(64));
  EXPECT_TRUE(record->IsPresent(128));
  EXPECT_FALSE(record->IsPresent(129));
  EXPECT_TRUE(record->CountPresent(129));
  EXPECT_FALSE(record->IsPresent(129));
  record->SetAllPresent();
  EXPECT_EQ(record->PresentCount(), 130u);  // no bit past the last index
  record->ClearPresent(64);
  EXPECT_FALSE(record->IsPresent(64));
  EXPECT_EQ(record->PresentCount(), 129u);
  EXPECT_EQ(record->group_id(), "wide");  // the bits never reach the id
}

TEST(SharedGroupStatusTest, ReadsLikeAnOptional) {
  SharedGroupStatus none;
  EXPECT_FALSE(none.has_value());
  EXPECT_FALSE(none);
  EXPECT_TRUE(none == std::nullopt);
  EXPECT_THROW(none.value(), std::bad_optional_access);

  const GroupStatus status{"g", GroupState::kFilling, 3, 1};
  SharedGroupStatus owned = status;  // owns a copy
  SharedGroupStatus copy = owned;
  EXPECT_EQ(&*copy, &*owned);
  EXPECT_EQ(*owned, status);
  EXPECT_EQ(owned, SharedGroupStatus(GroupStatus(status)));  // by value
  EXPECT_FALSE(owned == none);
  std::optional<GroupStatus> as_optional = copy;
  EXPECT_EQ(as_optional, status);

  copy.reset();
  EXPECT_FALSE(copy.has_value());
  EXPECT_EQ(owned->present, 1u);  // the other copy still holds it
  owned = std::optional<GroupStatus>();
  EXPECT_FALSE(owned.has_value());
}

}  // namespace
}  // namespace group_meta_test
}  // namespace mooncake_tier
