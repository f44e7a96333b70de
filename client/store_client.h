#pragma once

// The Client implementation: metadata through a MasterApi, bytes through a
// Transport. Puts reserve space with PutStart, write straight into the
// node's segment and publish with PutEnd (or revoke on a failed write).
// Gets ask for replicas (DRAM first), read the first that works, and fall
// back to the next replica when a node is unreachable; once the copies are
// done their leases are released (asynchronously, in batches), so the
// master may evict or move the object right away. A DRAM copy's location
// is kept while the master's location grant lasts, and read again from
// there with no call (LocationCache).
//
// Thread safety: thread-safe; node endpoints are cached under a mutex.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "base/mutex.h"
#include "client/lease_releaser.h"
#include "client/location_cache.h"
#include "mooncake_tier/client.h"
#include "protocol/master_api.h"
#include "transport/transport.h"

namespace mooncake_tier {

struct StoreClientOptions {
  // Serve repeated reads of DRAM copies from the location cache, with no
  // call to the master, while the master's location grant lasts
  // (client/location_cache.h). Default: true.
  bool location_cache = true;
  // Entries the location cache holds, at most. REQUIRES: > 0.
  // Default: 65536.
  size_t location_cache_entries = 65536;
  // The time grants are counted on: the master's when both share a process
  // (a test's manual clock). Null: the system clock. Outlives the client.
  const Clock* clock = nullptr;
};

class StoreClient final : public Client {
 public:
  // `master` and `transport` must outlive the client.
  StoreClient(MasterApi* master, Transport* transport,
              const StoreClientOptions& options = {});
  // The client owns its master stub and transport.
  StoreClient(std::unique_ptr<MasterApi> master,
              std::unique_ptr<Transport> transport,
              const StoreClientOptions& options = {});

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
  // Null when the location cache is off.
  const LocationCache* location_cache() const { return cache_.get(); }

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

  // Where item `i` of a get goes once its size is known: fills the read's
  // buffer or parts, or answers why the item cannot take `size` bytes.
  using Destination =
      absl::FunctionRef<Status(size_t i, uint64_t size, PlannedRead& read)>;
  // The gets of GetIntoBatch and GetBatch: each key from the location cache
  // when it holds a grant that outlasts the read, else through one
  // GetReplicaList for the rest. Per key: its size, or why not.
  std::vector<Result<uint64_t>> Get(std::span<const std::string_view> keys,
                                    Destination destination);
  // An item read from the cache that is a group member, and its group.
  struct CachedMember {
    size_t item;
    uint64_t group;  // LocationCache::GroupHash
  };
  // Reads `keys[i]` for each i in `items` from the location cache; the
  // items it could not serve come back in `*misses`, the group members it
  // served in `*group_members`.
  void GetCached(std::span<const std::string_view> keys,
                 std::span<const size_t> items, Destination destination,
                 std::vector<Result<uint64_t>>& out,
                 std::vector<size_t>* misses,
                 std::vector<CachedMember>* group_members);
  // Reads `keys[i]` for each i in `items` through one GetReplicaList,
  // caching the DRAM locations it is granted; adds to `*groups` (when
  // given) the groups of the members the master answered.
  void GetViaMaster(std::span<const std::string_view> keys,
                    std::span<const size_t> items, Destination destination,
                    std::vector<Result<uint64_t>>& out,
                    absl::flat_hash_set<uint64_t>* groups);
  Result<std::shared_ptr<const Endpoint>> EndpointOf(NodeId node);
  static Endpoint EndpointFrom(const NodeView& view);
  void Forget(NodeId node);
  // The nodes whose endpoints this client has, for a lookup to leave out
  // of its answer (into *ids); null when there are more than
  // kMaxKnownNodes (the lookup then answers none, and a read of a new
  // node asks GetNode).
  const std::vector<NodeId>* KnownNodes(std::vector<NodeId>* ids);
  // Keeps the endpoints of nodes a lookup answered.
  void LearnNodes(const std::vector<NodeView>& nodes);
  // Caches the DRAM location `list` grants for `key`, unless this client
  // removed or rewrote keys since `invalidations` was read. `sent`: when
  // the lookup was sent.
  void CacheLocation(const std::string& key, const ObjectReplicas& list,
                     TimePoint sent, uint64_t invalidations);
  // Reads every planned item, trying each replica in order: round n reads
  // replica n of every item not read yet.
  void ReadAll(std::span<PlannedRead> reads);
  // One round of ReadAll: what it reads from DRAM, one transport batch, and
  // from SSD, by node.
  struct ReadRound {
    // Held until the round is done: the segments its reads name.
    std::vector<std::shared_ptr<const Endpoint>> held;
    std::vector<SegmentTransfer> dram_ops;
    std::vector<PlannedRead*> dram_reads;  // per op: its read
    // By node address: its segment endpoint and its reads.
    absl::flat_hash_map<std::string, std::pair<const SegmentEndpoint*,
                                               std::vector<PlannedRead*>>>
        ssd_reads;
  };
  // The outcome `s` of reading `r`'s replica `round`: a success, or the
  // last replica's error, sticks; an unreachable node is forgotten.
  void SettleRead(PlannedRead& r, size_t round, Status s);
  // Fills `plan` with the unfinished reads' replica `round` (settling those
  // whose node cannot be reached). False when no read was left to try.
  bool PlanReadRound(std::span<PlannedRead> reads, size_t round,
                     ReadRound& plan);
  void ReadDram(ReadRound& plan, size_t round);
  // The SSD reads of one node, in one request to it.
  void ReadSsd(const SegmentEndpoint& segment,
               std::span<PlannedRead* const> group, size_t round);
  // The reads of `lists` are done: their leases may end.
  void ReleaseLeases(std::span<const std::string> keys,
                     std::span<const Result<ObjectReplicas>> lists);
  // Forgets cached locations of keys this client rewrote or removed.
  void Invalidate(std::span<const std::string> keys);
  // Puts `items` in one batch, in three steps: StartPuts asks the master
  // for room, PlanPutWrites turns the grants into transfers, and after the
  // transport wrote them EndPuts completes what was written and gives back
  // what was not. Per item: OK or why not.
  std::vector<Status> PutItems(std::span<const PutItem> items);
  struct PendingPuts {
    std::vector<PutStartRequest> requests;          // the well-formed items'
    std::vector<size_t> request_item;               // per request: its item
    std::chrono::steady_clock::time_point sent;     // before PutStart
    std::vector<Result<ReplicaDescriptor>> placed;  // per request
    // Held until the writes are done: the segments they name.
    std::vector<std::shared_ptr<const Endpoint>> pinned_endpoints;
    std::vector<SegmentTransfer> writes;
    std::vector<size_t> write_request;     // per write: its request
    std::vector<std::string> late_grants;  // keys whose grant ran out
  };
  // Checks each item (out[i] says why one is malformed) and sends one
  // PutStart for the rest.
  PendingPuts StartPuts(std::span<const PutItem> items,
                        std::vector<Status>& out);
  // The transfers of every request that was placed, on a node this client
  // can reach, within its grant; out[i] says why an item has none.
  void PlanPutWrites(std::span<const PutItem> items, PendingPuts& batch,
                     std::vector<Status>& out);
  // PutEnd for the requests whose every write succeeded, PutRevoke for the
  // rest that were placed; out[i] takes the outcome.
  void EndPuts(std::span<const PutItem> items, PendingPuts& batch,
               std::span<const Status> written, std::vector<Status>& out);

  // Set when the client owns them; declared first so they outlive use.
  const std::unique_ptr<MasterApi> owned_master_;
  const std::unique_ptr<Transport> owned_transport_;
  MasterApi* const master_;
  Transport* const transport_;
  const ClientId id_;
  // Declared after master_: stopped (and flushed) before it goes.
  LeaseReleaser leases_;
  const Clock* const clock_;
  const std::unique_ptr<LocationCache> cache_;  // null: off
  // Counts this client's removals and puts (Invalidate): a get caches what
  // the master answered only if none happened meanwhile.
  std::atomic<uint64_t> invalidations_{0};

  Mutex mu_;
  absl::flat_hash_map<NodeId, std::shared_ptr<const Endpoint>> endpoints_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier
