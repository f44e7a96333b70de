#include "rpc/convert.h"

#include <gtest/gtest.h>

#include <vector>

#include "rpc/status_convert.h"

namespace mooncake_tier::rpc {
namespace convert_test {
namespace {

using std::chrono::seconds;

const std::vector<ErrorReason>& AllReasons() {
  static const std::vector<ErrorReason> reasons = {
#define MT_TEST_REASON(name, wire, code) ErrorReason::name,
      MOONCAKE_TIER_ERROR_REASONS(MT_TEST_REASON)
#undef MT_TEST_REASON
  };
  return reasons;
}

TEST(StatusConvertTest, EveryReasonRoundTripsInBand) {
  for (ErrorReason reason : AllReasons()) {
    const Status in =
        reason == ErrorReason::kNone
            ? Status::Ok()
            : Status(reason, "msg of " + std::string(ReasonName(reason)));
    proto::ItemStatus wire;
    ToProto(in, &wire);
    EXPECT_EQ(FromProto(wire), in) << ReasonName(reason);
    if (!in.ok()) {
      EXPECT_EQ(wire.reason(), ReasonName(reason));
      EXPECT_EQ(wire.code(), static_cast<int>(GrpcCodeOf(reason)));
    } else {
      EXPECT_EQ(wire.ByteSizeLong(), 0u);  // OK costs nothing on the wire
    }
  }
}

TEST(StatusConvertTest, EveryReasonRoundTripsAsACallFailure) {
  for (ErrorReason reason : AllReasons()) {
    if (reason == ErrorReason::kNone) continue;
    const grpc::Status wire = ToGrpcStatus(Status(reason, "why"));
    EXPECT_EQ(wire.error_code(), GrpcCodeOf(reason));
    const Status back = FromGrpcStatus(wire, "PutStart", "host:1");
    EXPECT_EQ(back.reason(), reason) << ReasonName(reason);
    EXPECT_NE(back.message().find("why"), std::string::npos);
    EXPECT_NE(back.message().find("PutStart"), std::string::npos);
    EXPECT_NE(back.message().find("host:1"), std::string::npos);
  }
}

TEST(StatusConvertTest, CanonicalCodesMapOneToOne) {
  const std::vector<std::pair<StatusCode, grpc::StatusCode>> table = {
      {StatusCode::kOk, grpc::StatusCode::OK},
      {StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
      {StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND},
      {StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS},
      {StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION},
      {StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
      {StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
      {StatusCode::kAborted, grpc::StatusCode::ABORTED},
      {StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS},
      {StatusCode::kInternal, grpc::StatusCode::INTERNAL},
      {StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED},
  };
  for (const auto& [core, grpc_code] : table) {
    EXPECT_EQ(ToGrpcCode(core), grpc_code) << CodeName(core);
  }
  EXPECT_EQ(GrpcCodeOf(ErrorReason::kObjectNotFound),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(GrpcCodeOf(ErrorReason::kGroupIncomplete),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(GrpcCodeOf(ErrorReason::kNoSpace),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST(StatusConvertTest, TransportFailuresGetAReason) {
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                        "connection refused"),
                           "Exists", "h:1")
                .reason(),
            ErrorReason::kUnavailable);
  const Status timeout = FromGrpcStatus(
      grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"),
      "Heartbeat", "h:1");
  EXPECT_EQ(timeout.reason(), ErrorReason::kTimeout);
  EXPECT_NE(timeout.message().find("DEADLINE_EXCEEDED"), std::string::npos);
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, ""),
                           "X", "h:1")
                .reason(),
            ErrorReason::kInternal);
  // Details that do not parse are ignored.
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "x",
                                        "\xff\xff garbage"),
                           "X", "h:1")
                .reason(),
            ErrorReason::kUnavailable);
}

TEST(StatusConvertTest, UnknownReasonNameIsInternalAndKeepsTheName) {
  proto::ItemStatus wire;
  wire.set_reason("FUTURE_REASON");
  wire.set_code(9);
  wire.set_message("m");
  const Status s = FromProto(wire);
  EXPECT_EQ(s.reason(), ErrorReason::kInternal);
  EXPECT_NE(s.message().find("FUTURE_REASON"), std::string::npos);
  wire.set_reason("OK");
  EXPECT_TRUE(FromProto(wire).ok());
}

TEST(ConvertTest, EnumsRoundTripAndRejectUnspecifiedAndUnknown) {
  for (Tier v : {Tier::kMemory, Tier::kLocalDisk}) {
    EXPECT_EQ(*TierFromProto(ToProto(v)), v);
  }
  for (ReplicaState v : {ReplicaState::kProcessing, ReplicaState::kComplete}) {
    EXPECT_EQ(*ReplicaStateFromProto(ToProto(v)), v);
  }
  for (GroupState v : {GroupState::kFilling, GroupState::kComplete,
                       GroupState::kBroken, GroupState::kExpired}) {
    EXPECT_EQ(*GroupStateFromProto(ToProto(v)), v);
  }
  for (NodeState v :
       {NodeState::kAlive, NodeState::kSuspect, NodeState::kDead}) {
    EXPECT_EQ(*NodeStateFromProto(ToProto(v)), v);
  }
  for (TaskKind v : {TaskKind::kOffload, TaskKind::kPromotion}) {
    EXPECT_EQ(*TaskKindFromProto(ToProto(v)), v);
  }
  for (TaskState v :
       {TaskState::kQueued, TaskState::kDispatched, TaskState::kStaged}) {
    EXPECT_EQ(*TaskStateFromProto(ToProto(v)), v);
  }
  for (std::optional<BreakCause> v :
       {std::optional<BreakCause>(), std::optional(BreakCause::kRemoved),
        std::optional(BreakCause::kNodeLost),
        std::optional(BreakCause::kCorrupt)}) {
    EXPECT_EQ(*BreakCauseFromProto(ToProto(v)), v);
  }
  EXPECT_EQ(TierFromProto(0).status().reason(), ErrorReason::kInvalidArgument);
  EXPECT_EQ(TierFromProto(42).status().reason(), ErrorReason::kInvalidArgument);
  EXPECT_FALSE(GroupStateFromProto(0).ok());
  EXPECT_FALSE(NodeStateFromProto(-3).ok());
  EXPECT_FALSE(TaskKindFromProto(0).ok());
  EXPECT_FALSE(TaskStateFromProto(7).ok());
  EXPECT_FALSE(ReplicaStateFromProto(0).ok());
  EXPECT_FALSE(BreakCauseFromProto(9).ok());
}

ReplicaDescriptor SomeReplica(Tier tier) {
  return ReplicaDescriptor{7, tier, ReplicaState::kComplete, 3, 4096, 100};
}

void ExpectSameReplica(const ReplicaDescriptor& a, const ReplicaDescriptor& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.tier, b.tier);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.node, b.node);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(a.size, b.size);
}

TEST(ConvertTest, PutStartRequestRoundTrips) {
  PutStartRequest in;
  in.key = std::string("k\x01\xff", 3);  // not UTF-8: keys are bytes
  in.size = 123;
  in.options.group = GroupSpec{"g", 4, 2};
  in.options.preferred_node = "n1";
  in.options.hard_pin = true;
  in.client = "c";
  proto::PutStartItem wire;
  ToProto(in, &wire);
  // Through serialized bytes, as on the network.
  proto::PutStartItem parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire.SerializeAsString()));
  Result<PutStartRequest> out = FromProto(parsed);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->key, in.key);
  EXPECT_EQ(out->size, 123u);
  EXPECT_EQ(out->options.group, in.options.group);
  EXPECT_EQ(out->options.preferred_node, "n1");
  EXPECT_TRUE(out->options.hard_pin);
  EXPECT_EQ(out->client, "c");

  in.options.group.reset();
  ToProto(in, &wire);
  wire.clear_group();
  EXPECT_FALSE(FromProto(wire)->options.group.has_value());
}

TEST(ConvertTest, BadRequestItemsAreRejectedWithReasons) {
  proto::PutStartItem item;
  item.set_key(std::string(kMaxKeyBytes + 1, 'k'));
  item.set_size(1);
  EXPECT_EQ(FromProto(item).status().reason(), ErrorReason::kInvalidKey);
  item.set_key("");
  EXPECT_EQ(FromProto(item).status().reason(), ErrorReason::kInvalidKey);
  item.set_key(std::string("a\0b", 3));
  EXPECT_EQ(FromProto(item).status().reason(), ErrorReason::kInvalidKey);
  item.set_key("ok");
  item.mutable_group()->set_group_id("g");
  item.mutable_group()->set_group_size(2);
  item.mutable_group()->set_group_index(2);
  EXPECT_EQ(FromProto(item).status().reason(), ErrorReason::kInvalidGroup);
  item.clear_group();
  item.set_client_id(std::string(kMaxNameBytes + 1, 'c'));
  EXPECT_EQ(FromProto(item).status().reason(), ErrorReason::kInvalidArgument);

  EXPECT_EQ(GroupIdFromProto(std::string(kMaxGroupIdBytes + 1, 'g'))
                .status()
                .reason(),
            ErrorReason::kInvalidGroup);
  EXPECT_TRUE(GroupIdFromProto("g").ok());

  proto::Replica replica;
  ToProto(SomeReplica(Tier::kMemory), &replica);
  replica.set_tier(static_cast<proto::Tier>(9));
  EXPECT_EQ(FromProto(replica).status().reason(),
            ErrorReason::kInvalidArgument);
  replica.set_tier(proto::TIER_UNSPECIFIED);
  EXPECT_NE(FromProto(replica).status().message().find("tier: missing"),
            std::string::npos);

  proto::NodeView node;  // no spec
  EXPECT_EQ(FromProto(node, TimePoint()).status().reason(),
            ErrorReason::kInvalidArgument);
  proto::Task task;  // no source
  EXPECT_FALSE(FromProto(task, TimePoint()).ok());
  proto::GroupDescription group;  // no status
  EXPECT_FALSE(FromProto(group).ok());
}

TEST(ConvertTest, ObjectReplicasCarryTheLeaseAcrossClocks) {
  const TimePoint master_now = TimePoint(seconds(1000));
  ObjectReplicas in;
  in.size = 100;
  in.replicas = {SomeReplica(Tier::kMemory), SomeReplica(Tier::kLocalDisk)};
  in.lease_deadline = master_now + seconds(10);
  in.group = GroupSpec{"g", 2, 1};
  proto::ObjectReplicas wire;
  ToProto(in, master_now, &wire);
  EXPECT_EQ(wire.lease_expires_in_ns(), 10'000'000'000);
  // The receiver's clock reads something else entirely.
  const TimePoint client_now = TimePoint(seconds(5));
  Result<ObjectReplicas> out = FromProto(wire, client_now);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->size, 100u);
  ASSERT_EQ(out->replicas.size(), 2u);
  ExpectSameReplica(out->replicas[0], in.replicas[0]);
  ExpectSameReplica(out->replicas[1], in.replicas[1]);
  EXPECT_EQ(out->lease_deadline, client_now + seconds(10));
  EXPECT_EQ(out->group, in.group);
  // An absurd offset does not overflow.
  wire.set_lease_expires_in_ns(INT64_MIN);
  EXPECT_TRUE(FromProto(wire, client_now).ok());
}

TEST(ConvertTest, ExistsAndGroupsRoundTrip) {
  ExistsInfo in{true, 42, GroupStatus{"g", GroupState::kComplete, 3, 3}};
  proto::ExistsInfo wire;
  ToProto(in, &wire);
  Result<ExistsInfo> out = FromProto(wire);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->exists);
  EXPECT_EQ(out->size, 42u);
  ASSERT_TRUE(out->group.has_value());
  EXPECT_EQ(out->group->group_id, "g");
  EXPECT_EQ(out->group->state, GroupState::kComplete);
  EXPECT_EQ(out->group->expected, 3u);
  EXPECT_EQ(out->group->present, 3u);

  GroupDescription group;
  group.status = GroupStatus{"g", GroupState::kBroken, 2, 1};
  group.break_cause = BreakCause::kNodeLost;
  group.members = {{0, "m0", true, {Tier::kMemory, Tier::kLocalDisk}},
                   {1, "m1", false, {}}};
  proto::GroupDescription gwire;
  ToProto(group, &gwire);
  Result<GroupDescription> gout = FromProto(gwire);
  ASSERT_TRUE(gout.ok()) << gout.status().ToString();
  EXPECT_EQ(gout->status.state, GroupState::kBroken);
  EXPECT_EQ(gout->break_cause, BreakCause::kNodeLost);
  ASSERT_EQ(gout->members.size(), 2u);
  EXPECT_EQ(gout->members[0].key, "m0");
  EXPECT_TRUE(gout->members[0].present);
  EXPECT_EQ(gout->members[0].tiers,
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  EXPECT_EQ(gout->members[1].index, 1u);
  EXPECT_FALSE(gout->members[1].present);
}

TEST(ConvertTest, NodeViewRoundTrips) {
  const TimePoint now = TimePoint(seconds(500));
  NodeView in;
  in.id = 9;
  in.spec = NodeSpec{"n",    "rpc:1", std::string("\0ucx", 4),
                     0x1000, 1 << 20, std::string("\0rkey", 5),
                     1 << 30};
  in.state = NodeState::kSuspect;
  in.registered_at = now - seconds(60);
  in.last_heartbeat = now - seconds(2);
  in.dram_used = 11;
  in.ssd_used = 22;
  proto::NodeView wire;
  ToProto(in, now, &wire);
  Result<NodeView> out = FromProto(wire, now);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->id, 9u);
  EXPECT_EQ(out->spec.name, "n");
  EXPECT_EQ(out->spec.rpc_address, "rpc:1");
  EXPECT_EQ(out->spec.transport_address, in.spec.transport_address);
  EXPECT_EQ(out->spec.dram_base, 0x1000u);
  EXPECT_EQ(out->spec.dram_size, 1u << 20);
  EXPECT_EQ(out->spec.dram_remote_key, in.spec.dram_remote_key);
  EXPECT_EQ(out->spec.ssd_capacity, 1u << 30);
  EXPECT_EQ(out->state, NodeState::kSuspect);
  EXPECT_EQ(out->registered_at, in.registered_at);
  EXPECT_EQ(out->last_heartbeat, in.last_heartbeat);
  EXPECT_EQ(out->dram_used, 11u);
  EXPECT_EQ(out->ssd_used, 22u);
}

TEST(ConvertTest, NodeTasksAndInventoryRoundTrip) {
  const TimePoint now = TimePoint(seconds(500));
  Task task;
  task.id = 5;
  task.kind = TaskKind::kOffload;
  task.node = 3;
  task.key = "k";
  task.group = GroupSpec{"g", 2, 0};
  task.source = SomeReplica(Tier::kMemory);
  task.drop_source_on_success = true;
  task.state = TaskState::kDispatched;
  task.created = now - seconds(3);
  task.dispatched = now - seconds(1);
  NodeTasks in;
  in.offloads = {task};
  in.ssd_deletes = {"d1", "d2"};
  proto::PullTasksResponse wire;
  ToProto(in, now, &wire);
  Result<NodeTasks> out = FromProto(wire, now);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->offloads.size(), 1u);
  const Task& t = out->offloads[0];
  EXPECT_EQ(t.id, 5u);
  EXPECT_EQ(t.kind, TaskKind::kOffload);
  EXPECT_EQ(t.node, 3u);
  EXPECT_EQ(t.key, "k");
  EXPECT_EQ(t.group, task.group);
  ExpectSameReplica(t.source, task.source);
  EXPECT_TRUE(t.drop_source_on_success);
  EXPECT_EQ(t.state, TaskState::kDispatched);
  EXPECT_EQ(t.created, task.created);
  EXPECT_EQ(t.dispatched, task.dispatched);
  EXPECT_EQ(out->ssd_deletes, (std::vector<std::string>{"d1", "d2"}));
  EXPECT_TRUE(out->promotions.empty());
  // An offload carries no target: the field stays absent on the wire.
  EXPECT_FALSE(wire.offloads(0).has_target());
  EXPECT_EQ(t.target.id, 0u);

  SsdInventoryEntry entry{"x", 77, GroupSpec{"g", 2, 1}};
  proto::SsdInventoryEntry ewire;
  ToProto(entry, &ewire);
  Result<SsdInventoryEntry> eout = FromProto(ewire);
  ASSERT_TRUE(eout.ok());
  EXPECT_EQ(eout->key, "x");
  EXPECT_EQ(eout->size, 77u);
  EXPECT_EQ(eout->group, entry.group);
}

TEST(ConvertTest, PromotionTasksRoundTrip) {
  const TimePoint now = TimePoint(seconds(500));
  Task staged;
  staged.id = 9;
  staged.kind = TaskKind::kPromotion;
  staged.node = 4;
  staged.key = "hot";
  staged.group = GroupSpec{"g", 2, 1};
  staged.source = SomeReplica(Tier::kLocalDisk);
  staged.target = SomeReplica(Tier::kMemory);
  staged.forced = true;
  staged.state = TaskState::kStaged;
  staged.created = now - seconds(2);
  staged.dispatched = now - seconds(1);
  Task fresh = staged;  // dispatched, nothing staged yet
  fresh.id = 10;
  fresh.group.reset();
  fresh.target = ReplicaDescriptor{};
  fresh.forced = false;
  fresh.state = TaskState::kDispatched;
  NodeTasks in;
  in.promotions = {staged, fresh};
  proto::PullTasksResponse wire;
  ToProto(in, now, &wire);
  EXPECT_EQ(wire.offloads_size(), 0);
  ASSERT_EQ(wire.promotions_size(), 2);
  EXPECT_TRUE(wire.promotions(0).has_target());
  EXPECT_FALSE(wire.promotions(1).has_target());

  Result<NodeTasks> out = FromProto(wire, now);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->promotions.size(), 2u);
  const Task& a = out->promotions[0];
  EXPECT_EQ(a.id, 9u);
  EXPECT_EQ(a.kind, TaskKind::kPromotion);
  EXPECT_EQ(a.node, 4u);
  EXPECT_EQ(a.key, "hot");
  EXPECT_EQ(a.group, staged.group);
  ExpectSameReplica(a.source, staged.source);
  ExpectSameReplica(a.target, staged.target);
  EXPECT_TRUE(a.forced);
  EXPECT_EQ(a.state, TaskState::kStaged);
  EXPECT_EQ(a.created, staged.created);
  EXPECT_EQ(a.dispatched, staged.dispatched);
  const Task& b = out->promotions[1];
  EXPECT_EQ(b.id, 10u);
  EXPECT_FALSE(b.group.has_value());
  EXPECT_EQ(b.target.id, 0u);
  EXPECT_FALSE(b.forced);
  EXPECT_EQ(b.state, TaskState::kDispatched);

  // A promotion whose target does not decode makes the reply malformed.
  wire.mutable_promotions(0)->mutable_target()->set_tier(
      proto::TIER_UNSPECIFIED);
  EXPECT_EQ(FromProto(wire, now).status().reason(),
            ErrorReason::kInvalidArgument);
}

}  // namespace
}  // namespace convert_test
}  // namespace mooncake_tier::rpc
