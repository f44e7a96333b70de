#pragma once

// A Master on a ManualClock with helpers to add nodes and complete puts, so
// engine tests read as scenarios. Test-only; production never links it.

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"
#include "core/local_master.h"
#include "core/master.h"

namespace mooncake_tier::testing {

class MasterHarness {
 public:
  explicit MasterHarness(MasterConfig config = DefaultConfig());

  static MasterConfig DefaultConfig();

  Master& master() { return master_; }
  // The master's in-process interfaces (what the gRPC service serves).
  MasterApi& api() { return api_; }
  MasterLink& link() { return link_; }
  ManualClock& clock() { return clock_; }

  // Registers a node with `dram` bytes of DRAM and `ssd` bytes of SSD.
  NodeId AddNode(const std::string& name, uint64_t dram, uint64_t ssd = 0,
                 std::vector<SsdInventoryEntry> inventory = {});

  // PutStart + PutEnd of one object; returns the DRAM replica or the error.
  Result<ReplicaDescriptor> Put(const std::string& key, uint64_t size,
                                PutOptions options = {});
  Result<ReplicaDescriptor> PutStart(const std::string& key, uint64_t size,
                                     PutOptions options = {});
  Status PutEnd(const std::string& key);
  Result<ObjectReplicas> Get(const std::string& key);
  Result<ExistsInfo> Exists(const std::string& key);
  Status Remove(const std::string& key, bool force = false);

  // Heartbeats `node` and reports every offload as done (or failed).
  size_t CompleteOffloads(NodeId node, bool succeed = true);

  // Tiers of the complete replicas of `key`, DRAM first; empty if absent.
  std::vector<Tier> Tiers(const std::string& key);

  static const ClientId kClient;

  // What a node registering over the wire sends in the service tests:
  // 4 MiB of DRAM and 64 MiB of SSD, no address.
  static NodeSpec SmallNodeSpec(const std::string& name) {
    NodeSpec spec;
    spec.name = name;
    spec.dram_size = uint64_t{4} << 20;
    spec.ssd_capacity = uint64_t{64} << 20;
    return spec;
  }

 private:
  ManualClock clock_;
  Master master_;
  LocalMasterApi api_{&master_};
  LocalMasterLink link_{&master_};
};

}  // namespace mooncake_tier::testing
