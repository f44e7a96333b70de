#include "tests/support/master_harness.h"

namespace mooncake_tier::testing {

const ClientId MasterHarness::kClient = "test-client";

MasterHarness::MasterHarness(MasterConfig config) : master_(config, &clock_) {}

MasterConfig MasterHarness::DefaultConfig() {
  MasterConfig config;
  config.shard_count = 16;
  return config;
}

NodeId MasterHarness::AddNode(const std::string& name, uint64_t dram,
                              uint64_t ssd,
                              std::vector<SsdInventoryEntry> inventory) {
  NodeSpec spec;
  spec.name = name;
  spec.dram_size = dram;
  spec.ssd_capacity = ssd;
  Result<NodeId> id = master_.RegisterNode(spec, inventory);
  return id.ok() ? *id : kNoNode;
}

Result<ReplicaDescriptor> MasterHarness::PutStart(const std::string& key,
                                                  uint64_t size,
                                                  PutOptions options) {
  PutStartRequest request{key, size, std::move(options), kClient};
  return std::move(master_.PutStart({&request, 1})[0]);
}

Status MasterHarness::PutEnd(const std::string& key) {
  return master_.PutEnd(kClient, {&key, 1})[0];
}

Result<ReplicaDescriptor> MasterHarness::Put(const std::string& key,
                                             uint64_t size,
                                             PutOptions options) {
  Result<ReplicaDescriptor> started = PutStart(key, size, std::move(options));
  if (!started.ok()) return started;
  MT_RETURN_IF_ERROR(PutEnd(key));
  return started;
}

Result<ObjectReplicas> MasterHarness::Get(const std::string& key) {
  return std::move(master_.GetReplicaList({&key, 1})[0]);
}

Result<ExistsInfo> MasterHarness::Exists(const std::string& key) {
  return std::move(master_.Exists({&key, 1})[0]);
}

Status MasterHarness::Remove(const std::string& key, bool force) {
  return master_.Remove({&key, 1}, RemoveOptions{force})[0];
}

size_t MasterHarness::CompleteOffloads(NodeId node, bool succeed) {
  Result<NodeTasks> reply = master_.PullTasks(node);
  if (!reply.ok()) return 0;
  for (const Task& task : reply->offloads) {
    Status s =
        succeed ? master_.NotifyOffloadSuccess(node, task.id)
                : master_.NotifyOffloadFailure(
                      node, task.id, Status(ErrorReason::kIoError, "injected"));
    s.IgnoreError();
  }
  return reply->offloads.size();
}

std::vector<Tier> MasterHarness::Tiers(const std::string& key) {
  std::vector<Tier> tiers;
  Result<ObjectDescription> d = master_.DescribeObject(key);
  if (!d.ok()) return tiers;
  for (Tier t : {Tier::kMemory, Tier::kLocalDisk}) {
    for (const Replica& r : d->replicas) {
      if (r.desc.tier == t && r.desc.state == ReplicaState::kComplete) {
        tiers.push_back(t);
      }
    }
  }
  return tiers;
}

}  // namespace mooncake_tier::testing
