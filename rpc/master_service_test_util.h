#pragma once

// MasterServiceTest, the fixture of the control-plane tests
// (master_service_test.cc, master_service_promotion_test.cc): a real Master
// (on a manual clock) behind MasterService on 127.0.0.1:0, reached through
// GrpcMasterApi and GrpcMasterLink.
//
// In a named namespace, not an anonymous one: the test files share one
// fixture class, as gtest requires of one test suite.
//
// Thread safety: one test thread per fixture.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/byte_units.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "rpc/grpc_master_api.h"
#include "rpc/grpc_master_link.h"
#include "rpc/master_service.h"
#include "rpc/proto/master.grpc.pb.h"
#include "rpc/rpc_server.h"
#include "tests/support/master_harness.h"

namespace mooncake_tier::rpc::service_test {

// Sends `body` as the raw request of `method` (a full "/pkg.Service/Method"
// name) to `target` and returns the call's status. Completion-queue form,
// drained on this thread: the callback form finishes on a gRPC thread whose
// synchronization TSAN cannot follow.
inline grpc::Status CallWithBody(const std::string& target,
                                 const std::string& method,
                                 const std::string& body) {
  grpc::GenericStub stub(
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  grpc::Slice slice(body);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer reply;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  grpc::CompletionQueue queue;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub.PrepareUnaryCall(&context, method, request, &queue);
  call->StartCall();
  grpc::Status status;
  call->Finish(&reply, &status, &status);
  void* tag = nullptr;
  bool ok = false;
  EXPECT_TRUE(queue.Next(&tag, &ok));
  EXPECT_EQ(tag, &status);
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  return status;
}

// Single-task forms of the link's batch reports.
inline Status OffloadSuccess(MasterLink& link, NodeId node, TaskId task) {
  return link.NotifyOffloadSuccess(node, {&task, 1})[0];
}
inline Status OffloadFailure(MasterLink& link, NodeId node, TaskId task,
                             Status cause) {
  const TaskFailure failure{task, std::move(cause)};
  return link.NotifyOffloadFailure(node, {&failure, 1})[0];
}
inline Result<ReplicaDescriptor> AllocStart(MasterLink& link, NodeId node,
                                            TaskId task) {
  return std::move(link.PromotionAllocStart(node, {&task, 1})[0]);
}
inline Status PromotionSuccess(MasterLink& link, NodeId node, TaskId task) {
  return link.NotifyPromotionSuccess(node, {&task, 1})[0];
}
inline Status PromotionFailure(MasterLink& link, NodeId node, TaskId task,
                               Status cause) {
  const TaskFailure failure{task, std::move(cause)};
  return link.NotifyPromotionFailure(node, {&failure, 1})[0];
}

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::MasterHarness;

inline MasterConfig WriteThrough() {
  MasterConfig config = MasterHarness::DefaultConfig();
  config.offload_mode = OffloadMode::kWriteThrough;
  return config;
}

inline NodeSpec Spec(const std::string& name, uint64_t dram, uint64_t ssd) {
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
        service_(&harness_.api(), &harness_.link(),
                 {.clock = &harness_.clock()}) {}

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
    Result<NodeId> id =
        link_->RegisterNode(Spec(name, dram, ssd), inventory, {});
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
    Result<NodeTasks> reply =
        link_->PullTasks(node, UINT32_MAX, Duration::zero());
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

}  // namespace mooncake_tier::rpc::service_test
