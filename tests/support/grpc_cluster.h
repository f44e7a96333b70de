#pragma once

// A distributed store in one test process: a Master behind MasterService on
// 127.0.0.1:0 (a real gRPC server), storage nodes that reach it through
// GrpcMasterLink, and a thread ticking the master's background steps every
// 50 ms. The data plane is either
// - kInProcess: clients move bytes over an in-process transport (only the
//   metadata path is remote), or
// - kUcx: the store as deployed; nodes export their segments over UCX, and
//   clients are made by ConnectRemote (gRPC + UCX), so clients in other
//   processes (mooncake-tierctl) reach it at master_address().
//
// Thread safety: NewClient may be called from many threads; destruction
// stops the ticker, the nodes and the server, in that order.

#include <memory>
#include <string>
#include <vector>

#include "base/periodic_thread.h"
#include "core/local_master.h"
#include "core/master.h"
#include "mooncake_tier/client.h"
#include "mooncake_tier/status.h"
#include "rpc/master_methods.h"

namespace mooncake_tier {
class InProcessTransport;
class StorageNode;
class UcxSegmentExporter;
class UcxTransport;
namespace rpc {
class ControlLaneServer;
class GrpcMasterApi;
class GrpcMasterLink;
class MasterService;
class RpcServer;
}  // namespace rpc
}  // namespace mooncake_tier

namespace mooncake_tier::testing {

struct GrpcClusterOptions {
  enum class DataPlane { kInProcess, kUcx };
  // Default: kUcx.
  DataPlane plane = DataPlane::kUcx;
  // kUcx: nodes offer their segments to same-host clients as shared memory
  // and clients use it (what a deployment does on one host); false keeps
  // every transfer on UCX. Default: true.
  bool shared_memory = true;
  // One storage node per name. Default: "n1", "n2".
  std::vector<std::string> node_names = {"n1", "n2"};
  // DRAM and SSD (in memory) of each node. Defaults: 4 MiB and 64 MiB.
  uint64_t node_dram_bytes = 4 << 20;
  uint64_t node_ssd_bytes = 64 << 20;
  // Default: offload on eviction.
  MasterConfig master_config = DefaultMasterConfig();
  // kUcx: the master also serves a control lane (rpc/control_lane_server.h),
  // which clients use for their hot calls. Default: true.
  bool control_lane = true;

  static MasterConfig DefaultMasterConfig();
};

class GrpcCluster {
 public:
  // Starts the master, its gRPC server, the nodes (registered and running)
  // and the ticker. The first error, if any part fails to start.
  static Result<std::unique_ptr<GrpcCluster>> Start(
      const GrpcClusterOptions& options = {});
  GrpcCluster(const GrpcCluster&) = delete;
  GrpcCluster& operator=(const GrpcCluster&) = delete;
  ~GrpcCluster();

  // "127.0.0.1:PORT": what clients dial.
  const std::string& master_address() const;

  // A new client of the store (see the data planes above).
  Result<std::unique_ptr<Client>> NewClient();

  // Calls of `method` the master has served (over gRPC and the lane).
  uint64_t master_calls(rpc::MasterMethod method) const;

 private:
  explicit GrpcCluster(const GrpcClusterOptions& options);
  Status StartServer();
  Status StartUcx();
  Status StartNode(const std::string& name);

  const GrpcClusterOptions options_;
  std::unique_ptr<Master> master_;
  // The in-process interfaces the gRPC service serves.
  std::unique_ptr<LocalMasterApi> local_api_;
  std::unique_ptr<LocalMasterLink> local_link_;
  std::unique_ptr<rpc::MasterService> service_;
  std::unique_ptr<rpc::ControlLaneServer> lane_;  // kUcx with control_lane
  std::unique_ptr<rpc::RpcServer> server_;
  std::unique_ptr<InProcessTransport> transport_;
  std::unique_ptr<UcxSegmentExporter> exporter_;  // kUcx
  std::unique_ptr<UcxTransport> peer_transport_;  // kUcx
  std::unique_ptr<rpc::GrpcMasterApi> api_;
  std::unique_ptr<rpc::GrpcMasterLink> link_;
  std::vector<std::unique_ptr<StorageNode>> nodes_;
  PeriodicThread ticker_;  // the master's Tick every 50 ms
};

}  // namespace mooncake_tier::testing
