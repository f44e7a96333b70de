// The control plane end to end in one process: a real Master (on a manual
// clock) behind MasterService on 127.0.0.1:0, reached through
// GrpcMasterApi and GrpcMasterLink (the fixture is in
// master_service_test_util.h): data calls, groups, heartbeats and task
// reports, inventory, call recording, and requests the typed stubs would
// never send. Promotion over gRPC is in master_service_promotion_test.cc.

#include "rpc/master_service.h"

#include <gtest/gtest.h>

#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "rpc/convert.h"
#include "rpc/master_methods.h"
#include "rpc/master_service_test_util.h"
#include "rpc/proto/master.grpc.pb.h"
#include "rpc/status_convert.h"

namespace mooncake_tier::rpc {
namespace master_service_test {
namespace {

using namespace service_test;  // NOLINT(build/namespaces): test helpers

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

// The prefix probe over the wire: one call, the prefix's length and
// bytes; a bad key fails the call with its reason and position.
TEST_F(MasterServiceTest, ProbePrefixInOneCall) {
  ASSERT_NE(Register("n1", 4 * kMiB, 0), kNoNode);
  PutOptions m0;
  m0.group = GroupSpec{"blk", 2, 0};
  ASSERT_TRUE(Put("p0", 10).ok());
  ASSERT_TRUE(Put("p1", 20).ok());
  ASSERT_TRUE(Put("g0", 30, m0).ok());  // its group is still filling
  const std::vector<std::string> keys = {"p0", "p1", "g0", "p3"};
  Result<PrefixInfo> prefix = api_->ProbePrefix(keys);
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  EXPECT_EQ(prefix->length, 2u);
  EXPECT_EQ(prefix->bytes, 30u);
  EXPECT_EQ(prefix->memory_bytes, 30u);  // both in DRAM
  EXPECT_EQ(api_->recorder()
                .Get(static_cast<size_t>(MasterMethod::kProbePrefix))
                .calls,
            1u);

  const std::vector<std::string> bad = {"p0", std::string("nul\0", 4)};
  Result<PrefixInfo> refused = api_->ProbePrefix(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().reason(), ErrorReason::kInvalidKey);
  EXPECT_NE(refused.status().message().find("key 1"), std::string::npos)
      << refused.status().ToString();
  // Still serving.
  EXPECT_EQ(api_->ProbePrefix(keys)->length, 2u);
}

TEST_F(MasterServiceTest, NodeHeartbeatAndOffloadNotifications) {
  const NodeId node = Register("n1", 4 * kMiB, 64 * kMiB);
  ASSERT_TRUE(Put("ok", 1000).ok());
  ASSERT_TRUE(Put("fails", 1000).ok());

  Result<NodeTasks> reply = link_->PullTasks(node, 1, Duration::zero());
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_EQ(reply->offloads.size(), 1u);  // max_tasks is honoured
  const Task first = reply->offloads[0];
  reply = link_->PullTasks(node, UINT32_MAX, Duration::zero());
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->offloads.size(), 1u);
  const Task second = reply->offloads[0];
  const Task& good = first.key == "ok" ? first : second;
  const Task& bad = first.key == "ok" ? second : first;
  EXPECT_EQ(good.kind, TaskKind::kOffload);
  EXPECT_EQ(good.node, node);
  EXPECT_EQ(good.source.tier, Tier::kMemory);

  ASSERT_TRUE(OffloadSuccess(*link_, node, good.id).ok());
  EXPECT_EQ(harness_.Tiers("ok"),
            (std::vector<Tier>{Tier::kMemory, Tier::kLocalDisk}));
  ASSERT_TRUE(
      OffloadFailure(*link_, node, bad.id, Status(ErrorReason::kIoError, "eio"))
          .ok());
  EXPECT_EQ(harness_.Tiers("fails"), std::vector<Tier>{Tier::kMemory});
  EXPECT_EQ(harness_.master().GetStats().offload_failed, 1u);
  EXPECT_EQ(OffloadSuccess(*link_, node, good.id).reason(),
            ErrorReason::kTaskNotFound);

  const std::string ok = "ok";
  ASSERT_TRUE(link_->ReportSsdCorruption(node, {&ok, 1}).ok());
  EXPECT_EQ(harness_.Tiers("ok"), std::vector<Tier>{Tier::kMemory});
  EXPECT_EQ(harness_.master().GetStats().ssd_corruptions, 1u);

  EXPECT_EQ(link_->Heartbeat(node + 100, std::nullopt).reason(),
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

TEST_F(MasterServiceTest, CallsAreRecordedOnBothSides) {
  const NodeId node = Register("n1", 4 * kMiB, 0);
  ASSERT_TRUE(Put("k", 10).ok());
  Exists("k").status().IgnoreError();
  link_->Heartbeat(node + 100, std::nullopt).IgnoreError();  // in-band error

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
  EXPECT_EQ(link_->recorder()
                .Get(static_cast<size_t>(MasterMethod::kHeartbeat))
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
    const grpc::Status s = CallWithBody(
        server_->address(), "/mooncake_tier.proto.MasterService/PutStart",
        "\xff\xff\xff\xff not a proto");
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  // Still serving.
  ASSERT_TRUE(Put("after", 10).ok());
  EXPECT_TRUE(Exists("after")->exists);
  EXPECT_TRUE(link_->Heartbeat(node, std::nullopt).ok());
}

}  // namespace
}  // namespace master_service_test
}  // namespace mooncake_tier::rpc
