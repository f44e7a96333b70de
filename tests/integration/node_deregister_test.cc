// A `mooncake-tierd node` process that stops cleanly (SIGTERM) tells its
// `mooncake-tierd master` it is leaving: the master drops it, and the
// objects it held, well before node_ttl. The master runs with a long
// --node-ttl (60 s) so that only deregistration can explain the node being
// gone within the polling deadline. A node killed with SIGKILL says
// nothing: node_ttl still applies.
//
// The test talks to the master over gRPC only (GrpcMasterApi); puts are
// PutStart + PutEnd without bytes, which is all the master tracks.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rpc/grpc_master_api.h"
#include "tests/support/eventually.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tierd_process.h"

namespace mooncake_tier::testing {
namespace node_deregister_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

class NodeDeregisterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int port = PickFreePort();
    ASSERT_NE(port, 0);
    master_address_ = "127.0.0.1:" + std::to_string(port);
  }

  std::string Path(const std::string& name) const {
    return dir_.path() + "/" + name;
  }

  std::unique_ptr<Subprocess> Start(const std::string& name,
                                    std::vector<std::string> args) {
    return StartTierd(MOONCAKE_TIERD_PATH, dir_.path(), name, std::move(args));
  }

  void StartMaster(const std::string& node_ttl) {
    const std::string ready = Path("master.ready");
    master_ = Start("master", {"master", "--listen", master_address_,
                               "--admin-listen", "127.0.0.1:0", "--node-ttl",
                               node_ttl, "--ready-file", ready});
    ASSERT_NE(master_, nullptr);
    ASSERT_TRUE(WaitForFile(ready, seconds(30))) << master_->OutputTail();
    rpc::GrpcChannelOptions channel;
    channel.target = master_address_;
    channel.deadline = seconds(3);
    Result<std::unique_ptr<rpc::GrpcMasterApi>> api =
        rpc::GrpcMasterApi::Create(channel);
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    api_ = std::move(*api);
  }

  // Starts node `name` and returns the id the master gave it (from its
  // ready file, written once it registered).
  NodeId StartNode(const std::string& name) {
    const std::string ready = Path(name + ".ready");
    node_ = Start(
        name, {"node", "--master", master_address_, "--name", name,
               "--admin-listen", "127.0.0.1:0", "--dram", "16MiB", "--ssd-dir",
               Path(name + "-ssd"), "--ssd-capacity", "64MiB",
               "--heartbeat-interval", "100ms", "--ready-file", ready});
    if (node_ == nullptr) return kNoNode;
    EXPECT_TRUE(WaitForFile(ready, seconds(30))) << node_->OutputTail();
    const std::string fields = ReadFileOrEmpty(ready);
    const size_t at = fields.find("node_id=");
    return at == std::string::npos
               ? kNoNode
               : std::strtoull(fields.c_str() + at + 8, nullptr, 10);
  }

  // A put without bytes on node `node`: the master's record of it.
  Status Put(const std::string& key, const std::string& node) {
    PutStartRequest request{key, 4096, {}, "node-deregister-test"};
    request.options.preferred_node = node;
    Result<ReplicaDescriptor> started =
        std::move(api_->PutStart({&request, 1})[0]);
    if (!started.ok()) return started.status();
    return api_->PutEnd(request.client, {&key, 1})[0];
  }

  bool Exists(const std::string& key) {
    Result<ExistsInfo> info = std::move(api_->Exists({&key, 1})[0]);
    return info.ok() && info->exists;
  }

  // Whether the master no longer has `node` as a member of the store.
  bool Gone(NodeId node) {
    Result<NodeView> view = api_->GetNode(node);
    return view.ok() ? view->state == NodeState::kDead
                     : view.status().reason() == ErrorReason::kNodeNotFound;
  }

  TempDir dir_;
  std::string master_address_;
  std::unique_ptr<Subprocess> master_;
  std::unique_ptr<Subprocess> node_;
  std::unique_ptr<rpc::GrpcMasterApi> api_;
};

TEST_F(NodeDeregisterTest, SigtermedNodeIsGoneWellBeforeNodeTtl) {
  ASSERT_NO_FATAL_FAILURE(StartMaster("60s"));
  const NodeId id = StartNode("n1");
  ASSERT_NE(id, kNoNode);
  ASSERT_TRUE(Put("k", "n1").ok());
  ASSERT_TRUE(Exists("k"));
  ASSERT_FALSE(Gone(id));

  const auto stopped_at = SteadyClock::now();
  ASSERT_TRUE(node_->Signal(SIGTERM));
  const std::optional<ExitStatus> exit = node_->Wait(seconds(20));
  ASSERT_TRUE(exit.has_value()) << "the node did not stop\n"
                                << node_->OutputTail();
  EXPECT_TRUE(exit->exited() && exit->code == 0) << exit->ToString() << "\n"
                                                 << node_->OutputTail();

  // Deregistered as it stopped: gone at once, its object with it. The
  // deadline is a quarter of node_ttl, so expiry cannot be the cause.
  EXPECT_TRUE(Eventually([&] { return Gone(id) && !Exists("k"); }, seconds(15)))
      << node_->OutputTail();
  EXPECT_LT(SteadyClock::now() - stopped_at, seconds(30));
  EXPECT_TRUE(master_->Running()) << master_->OutputTail();

  // It comes back under its name as a fresh registration.
  const NodeId again = StartNode("n1");
  EXPECT_NE(again, kNoNode);
  EXPECT_NE(again, id);
  EXPECT_FALSE(Gone(again));
}

TEST_F(NodeDeregisterTest, KilledNodeIsStillKnownUntilNodeTtl) {
  ASSERT_NO_FATAL_FAILURE(StartMaster("60s"));
  const NodeId id = StartNode("n1");
  ASSERT_NE(id, kNoNode);
  ASSERT_TRUE(Put("k", "n1").ok());

  ASSERT_TRUE(node_->Kill());  // SIGKILL: no chance to say goodbye
  ASSERT_TRUE(node_->Wait(seconds(10)).has_value());

  // Seconds later (many heartbeat intervals) the master still holds the
  // node and its object: only node_ttl (60 s) will drop them.
  const auto until = SteadyClock::now() + seconds(3);
  while (SteadyClock::now() < until) {
    ASSERT_FALSE(Gone(id));
    ASSERT_TRUE(Exists("k"));
    std::this_thread::sleep_for(milliseconds(100));
  }
}

}  // namespace
}  // namespace node_deregister_test
}  // namespace mooncake_tier::testing
