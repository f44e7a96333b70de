#pragma once

// MasterApi: the calls a client makes to the master, as an interface with
// one implementation per way of reaching it. LocalMasterApi
// (core/local_master.h) calls a Master in the same process;
// rpc/grpc_master_api.h reaches a remote one. It lives in protocol/, so
// that client/ (which calls it) and rpc/ (which implements it) need
// neither the engine nor each other. It names no transport.
//
// Thread safety: implementations are safe to call from many threads.

#include <span>
#include <string>
#include <vector>

#include "mooncake_tier/status.h"
#include "protocol/messages.h"
#include "protocol/node.h"

namespace mooncake_tier {

class MasterApi {
 public:
  virtual ~MasterApi() = default;
  virtual std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests) = 0;
  virtual std::vector<Status> PutEnd(const ClientId& client,
                                     std::span<const std::string> keys) = 0;
  virtual std::vector<Status> PutRevoke(const ClientId& client,
                                        std::span<const std::string> keys) = 0;
  virtual std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys) = 0;
  // Readers done copying (Master::ReleaseLeases). A failed call only means
  // the leases end at their expiry instead.
  virtual Status ReleaseLeases(std::span<const LeaseRelease> releases) = 0;
  virtual std::vector<Result<ExistsInfo>> Exists(
      std::span<const std::string> keys) = 0;
  virtual std::vector<Status> Remove(std::span<const std::string> keys,
                                     RemoveOptions options) = 0;
  virtual std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) = 0;
  virtual std::vector<Status> RemoveGroup(
      std::span<const std::string> group_ids, RemoveOptions options) = 0;
  // How to reach a node's segment and SSD reads. NODE_NOT_FOUND when gone.
  virtual Result<NodeView> GetNode(NodeId node) = 0;
};

}  // namespace mooncake_tier
