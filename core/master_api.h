#pragma once

// MasterApi: the calls a client makes to the master, as an interface with
// one implementation per way of reaching it. LocalMasterApi (below) calls a
// Master in the same process; rpc/grpc_master_api.h reaches a remote one.
// It lives in core, next to the Master it mirrors, so that client/ (which
// calls it) and rpc/ (which implements it) both depend on core alone. It
// names no transport and stays header-only.
//
// Thread safety: implementations are safe to call from many threads.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/master.h"

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

class LocalMasterApi final : public MasterApi {
 public:
  explicit LocalMasterApi(Master* master) : master_(master) {}
  // Waits for room as the master's put_wait_timeout says.
  std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests) override {
    return master_->PutStart(
        requests, master_->clock()->Now() + master_->put_wait_timeout());
  }
  std::vector<Status> PutEnd(const ClientId& client,
                             std::span<const std::string> keys) override {
    return master_->PutEnd(client, keys);
  }
  std::vector<Status> PutRevoke(const ClientId& client,
                                std::span<const std::string> keys) override {
    return master_->PutRevoke(client, keys);
  }
  std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys) override {
    return master_->GetReplicaList(keys);
  }
  Status ReleaseLeases(std::span<const LeaseRelease> releases) override {
    master_->ReleaseLeases(releases);
    return Status::Ok();
  }
  std::vector<Result<ExistsInfo>> Exists(
      std::span<const std::string> keys) override {
    return master_->Exists(keys);
  }
  std::vector<Status> Remove(std::span<const std::string> keys,
                             RemoveOptions options) override {
    return master_->Remove(keys, options);
  }
  std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) override {
    return master_->GetGroup(group_ids);
  }
  std::vector<Status> RemoveGroup(std::span<const std::string> group_ids,
                                  RemoveOptions options) override {
    return master_->RemoveGroup(group_ids, options);
  }
  Result<NodeView> GetNode(NodeId node) override {
    return master_->FindNode(node);
  }

 private:
  Master* const master_;
};

}  // namespace mooncake_tier
