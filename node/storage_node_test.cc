#include "node/storage_node.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/byte_units.h"
#include "core/local_master.h"
#include "core/master.h"
#include "node/memory_ssd_device.h"
#include "transport/in_process_transport.h"

namespace mooncake_tier {
namespace storage_node_test {
namespace {

// A link to the master that passes every call on to `inner`; the links
// below change one call each.
class ForwardingLink : public MasterLink {
 public:
  explicit ForwardingLink(MasterLink* inner) : inner_(inner) {}
  Result<NodeId> RegisterNode(const NodeSpec& spec,
                              std::span<const SsdInventoryEntry> inventory,
                              std::span<const DramEntry> dram) override {
    return inner_->RegisterNode(spec, inventory, dram);
  }
  Result<DirectoryChanges> SyncDirectory(NodeId node, uint64_t acked,
                                         uint32_t max_changes,
                                         Duration wait) override {
    return inner_->SyncDirectory(node, acked, max_changes, wait);
  }
  Status Heartbeat(NodeId node, const std::optional<SsdReport>& ssd) override {
    return inner_->Heartbeat(node, ssd);
  }
  Result<NodeTasks> PullTasks(NodeId node, uint32_t max_tasks,
                              Duration wait) override {
    return inner_->PullTasks(node, max_tasks, wait);
  }
  Status DeregisterNode(NodeId node) override {
    return inner_->DeregisterNode(node);
  }
  void InterruptPull(NodeId node) override { inner_->InterruptPull(node); }
  std::vector<Status> NotifyOffloadSuccess(
      NodeId node, std::span<const TaskId> tasks) override {
    return inner_->NotifyOffloadSuccess(node, tasks);
  }
  std::vector<Status> NotifyOffloadFailure(
      NodeId node, std::span<const TaskFailure> failures) override {
    return inner_->NotifyOffloadFailure(node, failures);
  }
  Status ReportSsdCorruption(NodeId node,
                             std::span<const std::string> keys) override {
    return inner_->ReportSsdCorruption(node, keys);
  }
  std::vector<Result<ReplicaDescriptor>> PromotionAllocStart(
      NodeId node, std::span<const TaskId> tasks) override {
    return inner_->PromotionAllocStart(node, tasks);
  }
  std::vector<Status> NotifyPromotionSuccess(
      NodeId node, std::span<const TaskId> tasks) override {
    return inner_->NotifyPromotionSuccess(node, tasks);
  }
  std::vector<Status> NotifyPromotionFailure(
      NodeId node, std::span<const TaskFailure> failures) override {
    return inner_->NotifyPromotionFailure(node, failures);
  }
  Result<NodeView> GetNode(NodeId node) override {
    return inner_->GetNode(node);
  }

 private:
  MasterLink* const inner_;
};

// A link to the master whose DeregisterNode never gets through, as when
// the master is down or silent past the RPC deadline.
class UnansweredDeregisterLink final : public ForwardingLink {
 public:
  using ForwardingLink::ForwardingLink;
  Status DeregisterNode(NodeId) override {
    ++deregister_calls;
    return Status(ErrorReason::kTimeout, "the master did not answer");
  }

  std::atomic<int> deregister_calls{0};
};

// A link whose PullTasks waits at the master until interrupted and then
// fails as a cancelled gRPC call does (ABORTED).
class CancelledPullLink final : public ForwardingLink {
 public:
  using ForwardingLink::ForwardingLink;
  Result<NodeTasks> PullTasks(NodeId, uint32_t, Duration) override {
    std::unique_lock<std::mutex> lock(mu_);
    waiting_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return interrupted_; });
    interrupted_ = false;
    return Status(ErrorReason::kAborted, "PullTasks: call cancelled");
  }
  void InterruptPull(NodeId) override {
    std::lock_guard<std::mutex> lock(mu_);
    interrupted_ = true;
    cv_.notify_all();
  }
  void AwaitPull() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return waiting_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool waiting_ = false;
  bool interrupted_ = false;
};

// Routes spdlog's default logger into a ring buffer while it lives.
class CapturedLog {
 public:
  CapturedLog()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64)),
        previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink_));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::vector<std::string> Lines() { return sink_->last_formatted(); }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

class StorageNodeTest : public ::testing::Test {
 protected:
  StorageNodeTest() : master_(Config(), &clock_), link_(&master_) {}

  static MasterConfig Config() {
    MasterConfig c;
    c.shard_count = 16;
    c.offload_mode = OffloadMode::kOnEvict;
    return c;
  }

  // Registered through `link` (default: link_, straight to master_).
  std::unique_ptr<StorageNode> MakeNode(bool with_ssd = true,
                                        MasterLink* link = nullptr) {
    std::unique_ptr<SsdStore> store;
    if (with_ssd) {
      SsdStoreOptions o;
      o.capacity_bytes = 64 * kMiB;
      Result<std::unique_ptr<SsdStore>> opened =
          SsdStore::Open(device_.Reopen(), o);
      EXPECT_TRUE(opened.ok()) << opened.status().ToString();
      store = std::move(*opened);
    }
    StorageNodeOptions options;
    options.name = "n1";
    options.dram_bytes = kMiB;
    Result<std::unique_ptr<StorageNode>> node =
        StorageNode::Create(options, std::move(store),
                            link != nullptr ? link : &link_, &transport_);
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    EXPECT_TRUE((*node)->Register().ok());
    return std::move(*node);
  }

  // A put as a client does it: reserve, write the bytes, publish.
  void Put(StorageNode& node, const std::string& key, size_t size, char fill) {
    PutStartRequest req{key, size, {}, "c"};
    Result<ReplicaDescriptor> d = std::move(master_.PutStart({&req, 1})[0]);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    std::memset(node.segment().base() + d->offset, fill, size);
    ASSERT_TRUE(master_.PutEnd("c", {&key, 1})[0].ok());
  }

  ManualClock clock_;
  Master master_;
  LocalMasterLink link_;
  InProcessTransport transport_;
  MemorySsdDevice device_;
};

TEST_F(StorageNodeTest, OffloadWritesOwnDramToOwnSsdAndReports) {
  std::unique_ptr<StorageNode> node = MakeNode();
  Put(*node, "k", 5000, 'x');
  master_.EvictMemory(kMiB);
  ASSERT_TRUE(node->PullTasksOnce().ok());
  EXPECT_EQ(node->RunTasksOnce(), 1u);
  EXPECT_EQ(node->stats().offloads_done, 1u);
  std::string key = "k";
  Result<ObjectReplicas> got = std::move(master_.GetReplicaList({&key, 1})[0]);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->replicas.size(), 1u);
  EXPECT_EQ(got->replicas[0].tier, Tier::kLocalDisk);
  std::vector<std::byte> buf(5000);
  SsdReadTransfer op{"k", buf};
  Result<uint64_t> n = std::move(node->ServeSsdReads({&op, 1})[0]);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 5000u);
  EXPECT_EQ(buf[4999], std::byte{'x'});
  EXPECT_EQ(master_.Audit().total_refcnt, 0u);
}

TEST_F(StorageNodeTest, RestartReportsInventoryAndMasterRebuilds) {
  {
    std::unique_ptr<StorageNode> node = MakeNode();
    Put(*node, "a", 100, 'a');
    Put(*node, "b", 200, 'b');
    master_.EvictMemory(kMiB);
    ASSERT_TRUE(node->PullTasksOnce().ok());
    EXPECT_EQ(node->RunTasksOnce(), 2u);
  }
  std::unique_ptr<StorageNode> restarted = MakeNode();
  std::vector<std::string> keys = {"a", "b"};
  auto exists = master_.Exists(keys);
  EXPECT_TRUE(exists[0]->exists);
  EXPECT_TRUE(exists[1]->exists);
  EXPECT_EQ(master_.GetStats().inventory_restored, 2u);
  EXPECT_TRUE(master_.Audit().consistent());
}

TEST_F(StorageNodeTest, ForgottenNodeRegistersAgainOnHeartbeat) {
  std::unique_ptr<StorageNode> node = MakeNode();
  const NodeId first = node->id();
  clock_.Advance(master_.config().node_ttl);
  master_.ExpireNodes();
  EXPECT_TRUE(node->HeartbeatOnce().ok());
  EXPECT_NE(node->id(), first);
  EXPECT_EQ(node->stats().registrations, 2u);
}

TEST_F(StorageNodeTest, SsdDeletesFromTheMasterAreApplied) {
  std::unique_ptr<StorageNode> node = MakeNode();
  Put(*node, "k", 100, 'k');
  master_.EvictMemory(kMiB);
  ASSERT_TRUE(node->PullTasksOnce().ok());
  node->RunTasksOnce();
  ASSERT_TRUE(node->ssd()->ValueSize("k").has_value());
  std::string key = "k";
  ASSERT_TRUE(master_.Remove({&key, 1}, {})[0].ok());
  ASSERT_TRUE(node->PullTasksOnce().ok());
  node->RunTasksOnce();
  EXPECT_FALSE(node->ssd()->ValueSize("k").has_value());
  EXPECT_EQ(node->stats().ssd_deletes, 1u);
}

TEST_F(StorageNodeTest, NodeWithoutSsdFailsOffloadsCleanly) {
  std::unique_ptr<StorageNode> node = MakeNode(/*with_ssd=*/false);
  Put(*node, "k", 100, 'k');
  // Without SSD capacity the master never queues an offload: DRAM is dropped.
  master_.EvictMemory(kMiB);
  EXPECT_EQ(master_.GetStats().offload_queued, 0u);
  std::vector<std::byte> buf(10);
  SsdReadTransfer op{"k", buf};
  EXPECT_EQ(node->ServeSsdReads({&op, 1})[0].status().reason(),
            ErrorReason::kObjectNotFound);
}

TEST_F(StorageNodeTest, ThreadsRunHeartbeatsAndTasks) {
  std::unique_ptr<StorageNode> node = MakeNode();
  Put(*node, "k", 100, 'k');
  master_.EvictMemory(kMiB);
  node->Start();
  for (int i = 0; i < 200 && node->stats().offloads_done == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  node->Stop();
  EXPECT_EQ(node->stats().offloads_done, 1u);
}

TEST_F(StorageNodeTest, CleanStopDeregistersAtOnce) {
  std::unique_ptr<StorageNode> node = MakeNode();
  const NodeId id = node->id();
  Put(*node, "k", 100, 'k');
  node->Start();
  node->Stop();
  // Gone on the master's clock as it was: not by node_ttl.
  EXPECT_FALSE(master_.GetNode(id).has_value());
  EXPECT_FALSE(master_.Exists(std::vector<std::string>{"k"})[0]->exists);
  const MasterStats s = master_.GetStats();
  EXPECT_EQ(s.nodes_deregistered, 1u);
  EXPECT_EQ(s.nodes_expired, 0u);
  EXPECT_EQ(s.nodes_alive, 0u);  // the stopped threads did not register again
  EXPECT_EQ(node->id(), kNoNode);
  // Stop is idempotent (the destructor calls it again): nothing more is
  // sent.
  node->Stop();
  node.reset();
  EXPECT_EQ(master_.GetStats().nodes_deregistered, 1u);
}

TEST_F(StorageNodeTest, StopFinishesWhenTheMasterDoesNotAnswer) {
  UnansweredDeregisterLink link(&link_);
  std::unique_ptr<StorageNode> node = MakeNode(/*with_ssd=*/true, &link);
  const NodeId id = node->id();
  node->Start();
  node->Stop();
  EXPECT_EQ(link.deregister_calls.load(), 1);
  // The master still knows the node; node_ttl drops it as before.
  EXPECT_TRUE(master_.GetNode(id).has_value());
  clock_.Advance(master_.config().node_ttl);
  EXPECT_EQ(master_.ExpireNodes(), 1u);
  EXPECT_EQ(master_.GetStats().nodes_deregistered, 0u);
}

TEST_F(StorageNodeTest, StopCancellingItsOwnPullLogsNoWarning) {
  CancelledPullLink link(&link_);
  std::unique_ptr<StorageNode> node = MakeNode(/*with_ssd=*/true, &link);
  CapturedLog log;
  node->Start();
  link.AwaitPull();
  node->Stop();
  for (const std::string& line : log.Lines()) {
    EXPECT_EQ(line.find("[warning]"), std::string::npos) << line;
  }
  EXPECT_EQ(master_.GetStats().nodes_deregistered, 1u);
}

TEST_F(StorageNodeTest, NodeDrivenByHandIsLeftToNodeTtl) {
  std::unique_ptr<StorageNode> node = MakeNode();
  const NodeId id = node->id();
  node.reset();  // never started: like a killed process
  EXPECT_TRUE(master_.GetNode(id).has_value());
  EXPECT_EQ(master_.GetStats().nodes_deregistered, 0u);
}

TEST_F(StorageNodeTest, ExplicitDeregisterThenHeartbeatRegistersAfresh) {
  std::unique_ptr<StorageNode> node = MakeNode();
  const NodeId first = node->id();
  ASSERT_TRUE(node->Deregister().ok());
  EXPECT_FALSE(master_.GetNode(first).has_value());
  EXPECT_TRUE(node->Deregister().ok());  // not registered: nothing to send
  EXPECT_EQ(master_.GetStats().nodes_deregistered, 1u);
  ASSERT_TRUE(node->HeartbeatOnce().ok());
  EXPECT_NE(node->id(), first);
  EXPECT_EQ(master_.GetStats().nodes_dead, 0u);  // back under its name
}

TEST_F(StorageNodeTest, SsdReadStagingIsExportedButNeverTheMasters) {
  SsdStoreOptions store_options;
  store_options.capacity_bytes = 64 * kMiB;
  Result<std::unique_ptr<SsdStore>> store =
      SsdStore::Open(device_.Reopen(), store_options);
  ASSERT_TRUE(store.ok());
  StorageNodeOptions options;
  options.name = "n1";
  options.dram_bytes = kMiB + 100;  // the tail still starts page-aligned
  options.ssd_read_staging_bytes = 3 * kMiB + 1;
  Result<std::unique_ptr<StorageNode>> node =
      StorageNode::Create(options, std::move(*store), &link_, &transport_);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  ASSERT_TRUE((*node)->Register().ok());
  const DramSegment& segment = (*node)->segment();
  EXPECT_EQ(segment.size(), kMiB + 100);
  EXPECT_EQ(segment.staging_offset(), kMiB + 4096);
  EXPECT_EQ(segment.staging_bytes(), 3 * kMiB + 4096);
  EXPECT_EQ(segment.total_size(), 4 * kMiB + 8192);
  // The master allocates only the DRAM part; clients reach only it.
  std::optional<NodeView> view = master_.GetNode((*node)->id());
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->spec.dram_size, kMiB + 100);
  SegmentEndpoint endpoint;
  endpoint.transport_address = view->spec.transport_address;
  std::vector<std::byte> buf(16);
  SegmentTransfer last{&endpoint, kMiB + 100 - 16, buf};
  SegmentTransfer tail{&endpoint, kMiB + 100, buf};
  EXPECT_TRUE(transport_.Write({&last, 1})[0].ok());
  EXPECT_EQ(transport_.Write({&tail, 1})[0].reason(),
            ErrorReason::kInvalidArgument);
}

TEST_F(StorageNodeTest, NoStagingWithoutAnSsdStoreOrWhenTurnedOff) {
  std::unique_ptr<StorageNode> no_ssd = MakeNode(/*with_ssd=*/false);
  EXPECT_EQ(no_ssd->segment().staging_bytes(), 0u);
  EXPECT_EQ(no_ssd->segment().total_size(), kMiB);
  no_ssd.reset();
  std::unique_ptr<StorageNode> with_ssd = MakeNode();
  EXPECT_EQ(with_ssd->segment().staging_bytes(), 64 * kMiB);  // the default
  EXPECT_EQ(with_ssd->segment().size(), kMiB);
  with_ssd.reset();
  StorageNodeOptions options;
  options.name = "n2";
  options.dram_bytes = kMiB;
  options.ssd_read_staging_bytes = 0;
  SsdStoreOptions store_options;
  store_options.capacity_bytes = 64 * kMiB;
  Result<std::unique_ptr<SsdStore>> store =
      SsdStore::Open(device_.Reopen(), store_options);
  ASSERT_TRUE(store.ok());
  Result<std::unique_ptr<StorageNode>> off =
      StorageNode::Create(options, std::move(*store), &link_, &transport_);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ((*off)->segment().staging_bytes(), 0u);
  EXPECT_EQ((*off)->segment().total_size(), kMiB);
}

}  // namespace
}  // namespace storage_node_test
}  // namespace mooncake_tier
