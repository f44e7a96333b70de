// The control plane end to end in one process: a real Master (on a manual
// clock) behind MasterService on 127.0.0.1:0, reached through
// GrpcMasterApi and GrpcMasterLink.

#include "rpc/master_service.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "rpc/convert.h"
#include "rpc/grpc_master_api.h"
#include "rpc/grpc_master_link.h"
#include "rpc/master_methods.h"
#include "rpc/proto/master.grpc.pb.h"
#include "rpc/rpc_server.h"
#include "rpc/status_convert.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier::rpc {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::MasterHarness;

constexpr uint64_t kMiB = 1 << 20;

MasterConfig WriteThrough() {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.offload_mode = OffloadMode::kWriteThrough;
  return config;
}

NodeSpec Spec(const std::string& name, uint64_t dram, uint64_t ssd) {
  NodeSpec spec;
  spec.name = name;
  spec.dram_size = dram;
  spec.ssd_capacity = ssd;
  spec.transport_address = std::string("\0addr", 5);
  return spec;
}

class MasterServiceTest : public ::testing::Test {
 protected:
  MasterServiceTest()
      : harness_(WriteThrough()),
        service_(&harness_.master(), {.clock = &harness_.clock()}) {}

  void SetUp() override {
    Result<std::unique_ptr<RpcServer>> server =
        RpcServer::Start(RpcServerOptions(), {service_.grpc_service()});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    ASSERT_GT(server_->port(), 0);
    GrpcChannelOptions options;
    options.target = server_->address();
    api_ = std::move(*GrpcMasterApi::Create(options));
    link_ = std::move(*GrpcMasterLink::Create(options));
  }

  NodeId Register(const std::string& name, uint64_t dram, uint64_t ssd,
                  std::vector<SsdInventoryEntry> inventory = {}) {
    Result<NodeId> id = link_->RegisterNode(Spec(name, dram, ssd), inventory);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : kNoNode;
  }

  Status Put(const std::string& key, uint64_t size, PutOptions options = {}) {
    PutStartRequest request{key, size, std::move(options), "client"};
    Result<ReplicaDescriptor> started =
        std::move(api_->PutStart({&request, 1})[0]);
    if (!started.ok()) return started.status();
    return api_->PutEnd("client", {&key, 1})[0];
  }

  Result<ExistsInfo> Exists(const std::string& key) {
    return std::move(api_->Exists({&key, 1})[0]);
  }

  Result<ObjectReplicas> Get(const std::string& key) {
    return std::move(api_->GetReplicaList({&key, 1})[0]);
  }

  // Reads `key` twice over gRPC (the default admission threshold) and
  // returns the promotion tasks the next heartbeat of `node` carries.
  std::vector<Task> ReadTwiceAndBeat(const std::string& key, NodeId node) {
    for (int i = 0; i < 2; ++i) {
      Result<ObjectReplicas> read = Get(key);
      EXPECT_TRUE(read.ok()) << read.status().ToString();
    }
    Result<HeartbeatReply> reply = link_->Heartbeat(node, UINT32_MAX);
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return reply.ok() ? reply->promotions : std::vector<Task>{};
  }

  // A raw stub for requests the typed stubs would never send.
  std::unique_ptr<proto::MasterService::Stub> RawStub() {
    return proto::MasterService::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  MasterHarness harness_;
  MasterService service_;
  std::unique_ptr<RpcServer> server_;
  std::unique_ptr<GrpcMasterApi> api_;
  std::unique_ptr<GrpcMasterLink> link_;
};

TEST_F(MasterServiceTest, PutGetExistsRemove) {
  const NodeId node = Register("n1", 4 * kMiB, 0);
  ASSERT_NE(node, kNoNode);

  std::vector<PutStartRequest> puts = {{"a", 100, {}, "client"},
                                       {"", 100, {}, "client"},
                                       {"b", 0, {}, "client"},
                                       {"c", 8 * kMiB, {}, "client"}};
  std::vector<Result<ReplicaDescriptor>> started = api_->PutStart(puts);
  ASSERT_EQ(started.size(), 4u);
  ASSERT_TRUE(started[0].ok()) << started[0].status().ToString();
  EXPECT_EQ(started[0]->node, node);
  EXPECT_EQ(started[0]->tier, Tier::kMemory);
  EXPECT_EQ(started[0]->state, ReplicaState::kProcessing);
  EXPECT_EQ(started[0]->size, 100u);
  EXPECT_EQ(started[1].status().reason(), ErrorReason::kInvalidKey);
  EXPECT_EQ(started[2].status().reason(), ErrorReason::kInvalidSize);
  EXPECT_EQ(started[3].status().reason(), ErrorReason::kNoSpace);

  const std::string a = "a";
  EXPECT_EQ(api_->GetReplicaList({&a, 1})[0].status().reason(),
            ErrorReason::kObjectNotReady);  // not readable before PutEnd
  std::vector<std::string> ends = {"a", "never-started"};
  std::vector<Status> ended = api_->PutEnd("client", ends);
  EXPECT_TRUE(ended[0].ok()) << ended[0].ToString();
  EXPECT_EQ(ended[1].reason(), ErrorReason::kObjectNotFound);

  const TimePoint before = SystemClock::Default()->Now();
  std::vector<std::string> gets = {"a", "absent"};
  std::vector<Result<ObjectReplicas>> lists = api_->GetReplicaList(gets);
  const TimePoint after = SystemClock::Default()->Now();
  ASSERT_TRUE(lists[0].ok()) << lists[0].status().ToString();
  EXPECT_EQ(lists[0]->size, 100u);
  ASSERT_EQ(lists[0]->replicas.size(), 1u);
  EXPECT_EQ(lists[0]->replicas[0].offset, started[0]->offset);
  EXPECT_EQ(lists[0]->replicas[0].state, ReplicaState::kComplete);
  // The lease is the master's lease_ttl, counted on this process's clock.
  const Duration ttl = harness_.master().config().lease_ttl;
  EXPECT_GE(lists[0]->lease_deadline, before + ttl);
  EXPECT_LE(lists[0]->lease_deadline, after + ttl);
  EXPECT_EQ(lists[1].status().reason(), ErrorReason::kObjectNotFound);

  EXPECT_TRUE(Exists("a")->exists);
  EXPECT_EQ(Exists("a")->size, 100u);
  EXPECT_FALSE(Exists("absent")->exists);

  // Leased by the read above: removal needs force.
  EXPECT_EQ(api_->Remove({&a, 1}, RemoveOptions{})[0].reason(),
            ErrorReason::kObjectLeased);
  EXPECT_TRUE(api_->Remove({&a, 1}, RemoveOptions{.force = true})[0].ok());
  EXPECT_FALSE(Exists("a")->exists);

  // A revoked put frees its space and leaves nothing behind.
  const std::string r = "revoked";
  PutStartRequest put{r, 100, {}, "client"};
  ASSERT_TRUE(api_->PutStart({&put, 1})[0].ok());
  EXPECT_TRUE(api_->PutRevoke("client", {&r, 1})[0].ok());
  EXPECT_EQ(api_->PutEnd("client", {&r, 1})[0].reason(),
            ErrorReason::kObjectNotFound);

  Result<NodeView> view = api_->GetNode(node);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->spec.name, "n1");
  EXPECT_EQ(view->spec.transport_address, std::string("\0addr", 5));
  EXPECT_EQ(view->state, NodeState::kAlive);
  EXPECT_EQ(api_->GetNode(node + 100).status().reason(),
            ErrorReason::kNodeNotFound);
  EXPECT_TRUE(api_->PutStart({}).empty());  // nothing sent
}

TEST_F(MasterServiceTest, GroupsAndExists) {
  ASSERT_NE(Register("n1", 4 * kMiB, 0), kNoNode);
  PutOptions m0;
  m0.group = GroupSpec{"blk", 2, 0};
  ASSERT_TRUE(Put("k0", 10, m0).ok());

  Result<ExistsInfo> e = Exists("k0");
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(e->group.has_value());
  EXPECT_EQ(e->group->group_id, "blk");
  EXPECT_EQ(e->group->state, GroupState::kFilling);
  EXPECT_EQ(e->group->expected, 2u);
  EXPECT_EQ(e->group->present, 1u);
  const std::string k0 = "k0";
  EXPECT_EQ(api_->GetReplicaList({&k0, 1})[0].status().reason(),
            ErrorReason::kGroupIncomplete);

  PutOptions m1;
  m1.group = GroupSpec{"blk", 2, 1};
  ASSERT_TRUE(Put("k1", 10, m1).ok());
  e = Exists("k1");
  ASSERT_TRUE(e.ok() && e->group.has_value());
  EXPECT_EQ(e->group->state, GroupState::kComplete);
  EXPECT_EQ(e->group->present, 2u);
  Result<ObjectReplicas> list = std::move(api_->GetReplicaList({&k0, 1})[0]);
  ASSERT_TRUE(list.ok());
  ASSERT_TRUE(list->group.has_value());
  EXPECT_EQ(list->group->group_index, 0u);

  // The group is complete: another put under index 1 is refused (the core
  // decides which of its group reasons applies; it crosses the wire as is).
  PutOptions late;
  late.group = GroupSpec{"blk", 2, 1};
  const ErrorReason refused = Put("k2", 10, late).reason();
  EXPECT_TRUE(refused == ErrorReason::kGroupNotFilling ||
              refused == ErrorReason::kObjectExists)
      << ReasonName(refused);
  PutOptions wrong_size;
  wrong_size.group = GroupSpec{"blk", 3, 2};
  EXPECT_EQ(Put("k3", 10, wrong_size).reason(), ErrorReason::kInvalidGroup);

  std::vector<std::string> ids = {"blk", "nope"};
  std::vector<Result<GroupDescription>> groups = api_->GetGroup(ids);
  ASSERT_TRUE(groups[0].ok()) << groups[0].status().ToString();
  EXPECT_EQ(groups[0]->status.state, GroupState::kComplete);
  ASSERT_EQ(groups[0]->members.size(), 2u);
  EXPECT_EQ(groups[0]->members[1].key, "k1");
  EXPECT_EQ(groups[0]->members[1].tiers, std::vector<Tier>{Tier::kMemory});
  EXPECT_EQ(groups[1].status().reason(), ErrorReason::kGroupNotFound);

  std::vector<Status> removed =
      api_->RemoveGroup(ids, RemoveOptions{.force = true});
  EXPECT_TRUE(removed[0].ok()) << removed[0].ToString();
  EXPECT_EQ(removed[1].reason(), ErrorReason::kGroupNotFound);
  EXPECT_FALSE(Exists("k0")->exists);
  EXPECT_FALSE(Exists("k1")->exists);
}

TEST_F(MasterServiceTest, NodeHeartbeatAndOffloadNotifications) {
  const NodeId node = Register("n1", 4 * kMiB, 64 * kMiB);
  ASSERT_TRUE(Put("ok", 1000).ok());
  ASSERT_TRUE(Put("fails", 1000).ok());

  Result<HeartbeatReply> reply = link_->Heartbeat(node, 1);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_EQ(reply->offloads.size(), 1u);  // max_tasks is honoured
  const Task first = reply->offloads[0];
  reply = link_->Heartbeat(node, UINT32_MAX);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->offloads.size(), 1u);
  const Task second = reply->offloads[0];
  const Task& good = first.key == "ok" ? first : second;
  const Task& bad = first.key == "ok" ? second : first;
  EXPECT_EQ(good.kind, TaskKind::kOffload);
  EXPECT_EQ(good.node, node);
  EXPECT_EQ(good.source.tier, Tier::kMemory);

  ASSERT_TRUE(link_->NotifyOffloadSuccess(node, good.id).ok());
  EXPECT_EQ(harness_.Tiers("ok"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  ASSERT_TRUE(link_->NotifyOffloadFailure(node, bad.id,
                                          Status(ErrorReason::kIoError, "eio"))
                  .ok());
  EXPECT_EQ(harness_.Tiers("fails"), std::vector<Tier>{Tier::kMemory});
  EXPECT_EQ(harness_.master().GetStats().offload_failed, 1u);
  EXPECT_EQ(link_->NotifyOffloadSuccess(node, good.id).reason(),
            ErrorReason::kTaskNotFound);

  const std::string ok = "ok";
  ASSERT_TRUE(link_->ReportSsdCorruption(node, {&ok, 1}).ok());
  EXPECT_EQ(harness_.Tiers("ok"), std::vector<Tier>{Tier::kMemory});
  EXPECT_EQ(harness_.master().GetStats().ssd_corruptions, 1u);

  EXPECT_EQ(link_->Heartbeat(node + 100, 10).status().reason(),
            ErrorReason::kNodeNotFound);
  Result<NodeView> view = link_->GetNode(node);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->spec.ssd_capacity, 64 * kMiB);
}

TEST_F(MasterServiceTest, InventoryRebuildsObjectsAndGroups) {
  std::vector<SsdInventoryEntry> inventory = {
      {"x", 100, std::nullopt},
      {"g0", 10, GroupSpec{"g", 2, 0}},
      {"g1", 10, GroupSpec{"g", 2, 1}},
  };
  const NodeId node = Register("n1", 4 * kMiB, 64 * kMiB, inventory);
  ASSERT_NE(node, kNoNode);
  EXPECT_EQ(harness_.Tiers("x"), std::vector<Tier>{Tier::kLocalDisk});
  Result<ExistsInfo> e = Exists("g1");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->exists);
  ASSERT_TRUE(e->group.has_value());
  EXPECT_EQ(e->group->group_id, "g");
  EXPECT_EQ(e->group->present, 2u);
  EXPECT_EQ(harness_.master().GetStats().inventory_restored, 3u);
}

TEST_F(MasterServiceTest, PromotionOverGrpcCommitsADramReplica) {
  // Restored from the node's SSD inventory: the object is SSD-only.
  const NodeId node =
      Register("n1", 4 * kMiB, 64 * kMiB, {{"cold", 1000, std::nullopt}});
  ASSERT_NE(node, kNoNode);
  ASSERT_EQ(harness_.Tiers("cold"), std::vector<Tier>{Tier::kLocalDisk});

  // One read is not enough to promote (admission threshold 2).
  Result<ObjectReplicas> first = Get("cold");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->replicas.size(), 1u);
  EXPECT_EQ(first->replicas[0].tier, Tier::kLocalDisk);
  Result<HeartbeatReply> quiet = link_->Heartbeat(node, UINT32_MAX);
  ASSERT_TRUE(quiet.ok()) << quiet.status().ToString();
  EXPECT_TRUE(quiet->promotions.empty());

  // The second read queues a promotion; the next heartbeat carries it.
  ASSERT_TRUE(Get("cold").ok());
  Result<HeartbeatReply> reply = link_->Heartbeat(node, UINT32_MAX);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_TRUE(reply->offloads.empty());
  ASSERT_EQ(reply->promotions.size(), 1u);
  const Task task = reply->promotions[0];
  EXPECT_NE(task.id, 0u);
  EXPECT_EQ(task.kind, TaskKind::kPromotion);
  EXPECT_EQ(task.node, node);
  EXPECT_EQ(task.key, "cold");
  EXPECT_FALSE(task.group.has_value());
  EXPECT_EQ(task.source.tier, Tier::kLocalDisk);
  EXPECT_EQ(task.source.node, node);
  EXPECT_EQ(task.source.size, 1000u);
  EXPECT_EQ(task.target.id, 0u);  // nothing staged yet
  EXPECT_FALSE(task.forced);
  EXPECT_EQ(task.state, TaskState::kDispatched);

  // Staging: DRAM on the node's own segment, invisible to readers.
  Result<ReplicaDescriptor> target = link_->PromotionAllocStart(node, task.id);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_NE(target->id, 0u);
  EXPECT_EQ(target->tier, Tier::kMemory);
  EXPECT_EQ(target->state, ReplicaState::kProcessing);
  EXPECT_EQ(target->node, node);
  EXPECT_EQ(target->size, 1000u);
  EXPECT_EQ(harness_.Tiers("cold"), std::vector<Tier>{Tier::kLocalDisk});
  // A retried call gets the same staged replica back.
  Result<ReplicaDescriptor> again = link_->PromotionAllocStart(node, task.id);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->id, target->id);
  EXPECT_EQ(again->offset, target->offset);

  ASSERT_TRUE(link_->NotifyPromotionSuccess(node, task.id).ok());
  EXPECT_EQ(harness_.Tiers("cold"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  Result<ObjectReplicas> after = Get("cold");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_EQ(after->replicas.size(), 2u);
  EXPECT_EQ(after->replicas[0].tier, Tier::kMemory);
  EXPECT_EQ(after->replicas[0].id, target->id);
  EXPECT_EQ(after->replicas[0].offset, target->offset);
  EXPECT_EQ(harness_.master().GetStats().promotion_completed, 1u);

  // The task is gone: every promotion call about it says so.
  EXPECT_EQ(link_->NotifyPromotionSuccess(node, task.id).reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(link_->PromotionAllocStart(node, task.id).status().reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(link_->NotifyPromotionFailure(node, task.id,
                                          Status(ErrorReason::kIoError, "eio"))
                .reason(),
            ErrorReason::kTaskNotFound);
  // ... and so does a node that never had it.
  EXPECT_EQ(link_->PromotionAllocStart(node + 100, 12345).status().reason(),
            ErrorReason::kTaskNotFound);
}

TEST_F(MasterServiceTest, PromotionFailureOverGrpcLeavesTheSsdCopy) {
  const NodeId node = Register("n1", 4 * kMiB, 64 * kMiB,
                               {{"a", 1000, std::nullopt},
                                {"b", 2000, std::nullopt}});
  ASSERT_NE(node, kNoNode);

  // Staged, then the transfer fails: the staged DRAM copy is freed.
  std::vector<Task> tasks = ReadTwiceAndBeat("a", node);
  ASSERT_EQ(tasks.size(), 1u);
  const TaskId staged = tasks[0].id;
  ASSERT_TRUE(link_->PromotionAllocStart(node, staged).ok());
  ASSERT_TRUE(link_->NotifyPromotionFailure(
                       node, staged, Status(ErrorReason::kIoError, "eio"))
                  .ok());
  EXPECT_EQ(harness_.Tiers("a"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_EQ(harness_.master().GetStats().promotion_transfer_failed, 1u);
  EXPECT_EQ(harness_.master().GetStats().promotion_completed, 0u);
  EXPECT_EQ(link_->NotifyPromotionSuccess(node, staged).reason(),
            ErrorReason::kTaskNotFound);

  // The SSD read fails before anything is staged: counted as source lost.
  tasks = ReadTwiceAndBeat("b", node);
  ASSERT_EQ(tasks.size(), 1u);
  const TaskId unstaged = tasks[0].id;
  // A failure must carry its cause; an OK one is refused, the task stays.
  EXPECT_EQ(link_->NotifyPromotionFailure(node, unstaged, Status::Ok()).reason(),
            ErrorReason::kInvalidArgument);
  ASSERT_TRUE(link_->NotifyPromotionFailure(
                       node, unstaged,
                       Status(ErrorReason::kObjectNotFound, "record gone"))
                  .ok());
  EXPECT_EQ(harness_.Tiers("b"), std::vector<Tier>{Tier::kLocalDisk});
  EXPECT_EQ(harness_.master().GetStats().promotion_source_lost, 1u);
  EXPECT_EQ(link_->PromotionAllocStart(node, unstaged).status().reason(),
            ErrorReason::kTaskNotFound);

  // Success before staging is refused and leaves the task alone.
  tasks = ReadTwiceAndBeat("a", node);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(link_->NotifyPromotionSuccess(node, tasks[0].id).reason(),
            ErrorReason::kInvalidArgument);
  ASSERT_TRUE(link_->PromotionAllocStart(node, tasks[0].id).ok());
  ASSERT_TRUE(link_->NotifyPromotionSuccess(node, tasks[0].id).ok());
  EXPECT_EQ(harness_.Tiers("a"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
}

TEST_F(MasterServiceTest, ForcedGroupPromotionOverGrpcCommitsWhole) {
  const NodeId node =
      Register("n1", 4 * kMiB, 64 * kMiB,
               {{"g0", 100, GroupSpec{"g", 2, 0}},
                {"g1", 100, GroupSpec{"g", 2, 1}}});
  ASSERT_NE(node, kNoNode);
  Result<std::vector<TaskId>> queued = harness_.master().PromoteGroup("g");
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  ASSERT_EQ(queued->size(), 2u);

  Result<HeartbeatReply> reply = link_->Heartbeat(node, UINT32_MAX);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_EQ(reply->promotions.size(), 2u);
  for (const Task& t : reply->promotions) {
    EXPECT_TRUE(t.forced);
    ASSERT_TRUE(t.group.has_value());
    EXPECT_EQ(t.group->group_id, "g");
    EXPECT_EQ(t.key, t.group->group_index == 0 ? "g0" : "g1");
    ASSERT_TRUE(link_->PromotionAllocStart(node, t.id).ok());
  }
  // The first member waits, staged, for the other.
  const Task& first = reply->promotions[0];
  const Task& second = reply->promotions[1];
  ASSERT_TRUE(link_->NotifyPromotionSuccess(node, first.id).ok());
  EXPECT_EQ(harness_.Tiers(first.key), std::vector<Tier>{Tier::kLocalDisk});
  std::vector<Task> listed = harness_.master().ListTasks(TaskKind::kPromotion);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_TRUE(listed[0].state == TaskState::kStaged ||
              listed[1].state == TaskState::kStaged);
  ASSERT_TRUE(link_->NotifyPromotionSuccess(node, second.id).ok());
  EXPECT_EQ(harness_.Tiers("g0"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  EXPECT_EQ(harness_.Tiers("g1"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  EXPECT_EQ(harness_.master().GetStats().promotion_completed, 2u);
}

TEST_F(MasterServiceTest, CallsAreRecordedOnBothSides) {
  const NodeId node = Register("n1", 4 * kMiB, 0);
  ASSERT_TRUE(Put("k", 10).ok());
  Exists("k").status().IgnoreError();
  link_->Heartbeat(node + 100, 1).status().IgnoreError();  // in-band error

  const auto server = [&](MasterMethod m) {
    return service_.recorder().Get(static_cast<size_t>(m));
  };
  const auto client = [&](MasterMethod m) {
    return api_->recorder().Get(static_cast<size_t>(m));
  };
  EXPECT_EQ(server(MasterMethod::kPutStart).calls, 1u);
  EXPECT_EQ(server(MasterMethod::kPutEnd).calls, 1u);
  EXPECT_EQ(server(MasterMethod::kExists).by_code[0], 1u);
  EXPECT_EQ(server(MasterMethod::kRegisterNode).calls, 1u);
  EXPECT_EQ(server(MasterMethod::kHeartbeat).calls, 1u);
  EXPECT_EQ(client(MasterMethod::kPutStart).calls, 1u);
  EXPECT_EQ(client(MasterMethod::kExists).calls, 1u);
  EXPECT_GT(client(MasterMethod::kExists).latency_sum_ns, 0u);
  EXPECT_EQ(client(MasterMethod::kHeartbeat).calls, 0u);  // the link's
  EXPECT_EQ(link_->recorder().Get(static_cast<size_t>(MasterMethod::kHeartbeat))
                .calls,
            1u);
}

TEST_F(MasterServiceTest, MalformedRequestsAreRefusedAndServingGoesOn) {
  const NodeId node = Register("n1", 4 * kMiB, 0);
  std::unique_ptr<proto::MasterService::Stub> raw = RawStub();

  {  // Too many items: the whole call is refused, with the reason attached.
    proto::ExistsRequest req;
    for (size_t i = 0; i <= kMaxBatchItems; ++i) req.add_keys("k");
    proto::ExistsResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status s = raw->Exists(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(FromGrpcStatus(s, "Exists", "x").reason(),
              ErrorReason::kInvalidArgument);
  }
  {  // A bad key fails alone; its neighbours are served.
    proto::ExistsRequest req;
    req.add_keys(std::string(kMaxKeyBytes + 1, 'k'));
    req.add_keys("fine");
    req.add_keys(std::string("nul\0", 4));
    proto::ExistsResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(raw->Exists(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.results_size(), 3);
    EXPECT_EQ(resp.results(0).status().reason(), "INVALID_KEY");
    EXPECT_TRUE(resp.results(1).status().reason().empty());
    EXPECT_FALSE(resp.results(1).info().exists());
    EXPECT_EQ(resp.results(2).status().reason(), "INVALID_KEY");
  }
  {  // Missing node id / spec.
    proto::HeartbeatRequest hb;
    proto::HeartbeatResponse hb_resp;
    grpc::ClientContext ctx1;
    EXPECT_EQ(raw->Heartbeat(&ctx1, hb, &hb_resp).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    proto::RegisterNodeRequest reg;
    proto::RegisterNodeResponse reg_resp;
    grpc::ClientContext ctx2;
    EXPECT_EQ(raw->RegisterNode(&ctx2, reg, &reg_resp).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    proto::NotifyOffloadSuccessRequest n;
    n.add_task_ids(1);
    proto::NotifyOffloadSuccessResponse n_resp;
    grpc::ClientContext ctx3;
    EXPECT_EQ(raw->NotifyOffloadSuccess(&ctx3, n, &n_resp).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    proto::PromotionAllocStartRequest alloc;
    alloc.add_task_ids(1);
    proto::PromotionAllocStartResponse alloc_resp;
    grpc::ClientContext ctx4;
    EXPECT_EQ(raw->PromotionAllocStart(&ctx4, alloc, &alloc_resp).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    proto::NotifyPromotionSuccessRequest done;
    done.add_task_ids(1);
    proto::NotifyPromotionSuccessResponse done_resp;
    grpc::ClientContext ctx5;
    EXPECT_EQ(raw->NotifyPromotionSuccess(&ctx5, done, &done_resp).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  {  // A promotion failure without a cause fails alone.
    proto::NotifyPromotionFailureRequest req;
    req.set_node_id(node);
    req.add_failures()->set_task_id(1);  // no cause
    proto::PromotionFailure* unknown = req.add_failures();
    unknown->set_task_id(2);
    unknown->mutable_cause()->set_reason("IO_ERROR");
    proto::NotifyPromotionFailureResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(raw->NotifyPromotionFailure(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.results_size(), 2);
    EXPECT_EQ(resp.results(0).reason(), "INVALID_ARGUMENT");
    EXPECT_EQ(resp.results(1).reason(), "TASK_NOT_FOUND");
  }
  {  // Bytes that are no request at all.
    grpc::GenericStub generic(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
    const std::string junk = "\xff\xff\xff\xff not a proto";
    grpc::Slice slice(junk);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
    // Completion-queue form, drained on this thread: the callback form
    // would finish on a gRPC thread that TSAN cannot follow.
    grpc::CompletionQueue cq;
    std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
        generic.PrepareUnaryCall(
            &ctx, "/mooncake_tier.proto.MasterService/PutStart", request, &cq);
    call->StartCall();
    grpc::Status s;
    call->Finish(&response, &s, &s);
    void* tag = nullptr;
    bool ok = false;
    ASSERT_TRUE(cq.Next(&tag, &ok));
    EXPECT_EQ(tag, &s);
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  // Still serving.
  ASSERT_TRUE(Put("after", 10).ok());
  EXPECT_TRUE(Exists("after")->exists);
  EXPECT_TRUE(link_->Heartbeat(node, 1).ok());
}

TEST(RpcServerTest, ShutdownStopsServingAndIsIdempotent) {
  MasterHarness harness;
  MasterService service(&harness.master(), {.clock = &harness.clock()});
  std::unique_ptr<RpcServer> server =
      std::move(*RpcServer::Start(RpcServerOptions(), {service.grpc_service()}));
  GrpcChannelOptions options;
  options.target = server->address();
  options.deadline = milliseconds(500);
  std::unique_ptr<GrpcMasterApi> api = std::move(*GrpcMasterApi::Create(options));
  const std::string k = "k";
  EXPECT_TRUE(api->Exists({&k, 1})[0].ok());
  server->Shutdown(milliseconds(100));
  server->Shutdown();
  const Status after = api->Exists({&k, 1})[0].status();
  EXPECT_TRUE(after.reason() == ErrorReason::kUnavailable ||
              after.reason() == ErrorReason::kTimeout)
      << after.ToString();
}

TEST(RpcServerTest, BadAddressesAreRefused) {
  MasterHarness harness;
  MasterService service(&harness.master());
  std::unique_ptr<RpcServer> first =
      std::move(*RpcServer::Start(RpcServerOptions(), {service.grpc_service()}));
  MasterService other(&harness.master());
  RpcServerOptions same;
  same.address = first->address();
  EXPECT_EQ(RpcServer::Start(same, {other.grpc_service()}).status().reason(),
            ErrorReason::kUnavailable);
  RpcServerOptions empty;
  empty.address = "";
  EXPECT_EQ(RpcServer::Start(empty, {other.grpc_service()}).status().reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ(RpcServer::Start(RpcServerOptions(), {}).status().reason(),
            ErrorReason::kInvalidArgument);
}

// A port nobody listens on: bound, then closed.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(GrpcStubTest, UnreachableMasterIsAClearErrorWithinTheDeadline) {
  GrpcChannelOptions options;
  options.target = "127.0.0.1:" + std::to_string(ClosedPort());
  options.deadline = milliseconds(500);
  std::unique_ptr<GrpcMasterApi> api = std::move(*GrpcMasterApi::Create(options));
  std::unique_ptr<GrpcMasterLink> link =
      std::move(*GrpcMasterLink::Create(options));

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> keys = {"a", "b"};
  std::vector<Result<ExistsInfo>> exists = api->Exists(keys);
  ASSERT_EQ(exists.size(), 2u);
  for (const Result<ExistsInfo>& e : exists) {
    EXPECT_TRUE(e.status().reason() == ErrorReason::kUnavailable ||
                e.status().reason() == ErrorReason::kTimeout)
        << e.status().ToString();
    EXPECT_NE(e.status().message().find(options.target), std::string::npos);
  }
  const Status hb = link->Heartbeat(1, 1).status();
  EXPECT_TRUE(hb.reason() == ErrorReason::kUnavailable ||
              hb.reason() == ErrorReason::kTimeout)
      << hb.ToString();
  // Bounded by the deadlines (two calls), with room for a slow machine.
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
}

TEST(GrpcStubTest, SilentMasterTimesOut) {
  // Accepts TCP connections (the kernel's backlog) but never speaks.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);

  GrpcChannelOptions options;
  options.target = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  options.deadline = milliseconds(300);
  std::unique_ptr<GrpcMasterLink> link =
      std::move(*GrpcMasterLink::Create(options));
  const auto start = std::chrono::steady_clock::now();
  const Status s = link->Heartbeat(1, 1).status();
  EXPECT_TRUE(s.reason() == ErrorReason::kTimeout ||
              s.reason() == ErrorReason::kUnavailable)
      << s.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  close(fd);
}

TEST(GrpcStubTest, BadOptionsAreRejected) {
  GrpcChannelOptions options;
  EXPECT_EQ(GrpcMasterApi::Create(options).status().reason(),
            ErrorReason::kInvalidArgument);
  options.target = "127.0.0.1:1";
  options.deadline = Duration::zero();
  EXPECT_EQ(GrpcMasterLink::Create(options).status().reason(),
            ErrorReason::kInvalidArgument);
}

}  // namespace
}  // namespace mooncake_tier::rpc
