#pragma once

// The Client implementation: metadata through a MasterApi, bytes through a
// Transport. Puts reserve space with PutStart, write straight into the
// node's segment and publish with PutEnd (or revoke on a failed write).
// Gets ask for replicas (DRAM first), read the first that works, and fall
// back to the next replica when a node is unreachable; once the copies are
// done their leases are released (asynchronously, in batches), so the
// master may evict or move the object right away.
//
// Thread safety: thread-safe; node endpoints are cached under a mutex.

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "client/lease_releaser.h"
#include "protocol/master_api.h"
#include "base/mutex.h"
#include "mooncake_tier/client.h"
#include "transport/transport.h"

namespace mooncake_tier {

class StoreClient final : public Client {
 public:
  // `master` and `transport` must outlive the client.
  StoreClient(MasterApi* master, Transport* transport);
  // The client owns its master stub and transport.
  StoreClient(std::unique_ptr<MasterApi> master,
              std::unique_ptr<Transport> transport);

  std::vector<Status> PutBatch(std::span<const PutItem> items) override;
  std::vector<Result<uint64_t>> GetIntoBatch(
      std::span<const GetIntoItem> items) override;
  std::vector<Result<std::vector<std::byte>>> GetBatch(
      std::span<const std::string> keys) override;
  Result<PrefixInfo> ProbePrefix(std::span<const std::string> keys) override;
  Status CheckHealth() override;
  std::vector<Result<ExistsInfo>> ExistsBatch(
      std::span<const std::string> keys) override;
  std::vector<Status> RemoveBatch(std::span<const std::string> keys,
                                  RemoveOptions options) override;
  std::vector<Result<GroupInfo>> GetGroupBatch(
      std::span<const std::string> group_ids) override;
  std::vector<Status> RemoveGroupBatch(std::span<const std::string> group_ids,
                                       RemoveOptions options) override;
  Status RegisterBuffer(std::span<std::byte> buffer) override;
  Status UnregisterBuffer(std::span<std::byte> buffer) override;

  const ClientId& id() const { return id_; }

 private:
  struct Endpoint {
    SegmentEndpoint segment;
  };
  // One read to do: the replicas to try and where the bytes go.
  struct PlannedRead {
    std::string_view key;
    const ObjectReplicas* replicas;
    std::span<std::byte> buffer;  // exactly the object's size
    Status status;                // out
    // Scatter instead of `buffer`: non-empty parts of exactly the object's
    // size in all.
    std::vector<std::span<std::byte>> parts;
  };

  Result<std::shared_ptr<const Endpoint>> EndpointOf(NodeId node);
  void Forget(NodeId node);
  // Reads every planned item, trying each replica in order.
  void ReadAll(std::span<PlannedRead> reads);
  // The reads of `lists` are done: their leases may end.
  void ReleaseLeases(std::span<const std::string> keys,
                     std::span<const Result<ObjectReplicas>> lists);

  // Set when the client owns them; declared first so they outlive use.
  const std::unique_ptr<MasterApi> owned_master_;
  const std::unique_ptr<Transport> owned_transport_;
  MasterApi* const master_;
  Transport* const transport_;
  const ClientId id_;
  // Declared after master_: stopped (and flushed) before it goes.
  LeaseReleaser leases_;

  Mutex mu_;
  absl::flat_hash_map<NodeId, std::shared_ptr<const Endpoint>> endpoints_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier
