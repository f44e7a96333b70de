#pragma once

// The client side of the UCX data plane.
//
// Write and Read move bytes between the caller's memory and a node's
// exported segment with one-sided puts and gets at segment.base + offset;
// all operations of a call are issued together and waited for once (a
// Write also flushes each endpoint it used, so OK means the bytes are in
// the node's memory). ReadSsd asks the node for SSD-tier values: it
// registers the caller's buffers for the call, sends one active message
// naming them, and the node puts the values straight into them before it
// replies (docs/design/ucx-transport.md). Local memory inside a buffer
// given to RegisterBuffer is used with its standing registration; other
// memory is registered for the call.
//
// Same host: when a segment's remote key carries a shared-memory locator
// (transport/shm_locator.h) and `options.shared_memory` is set, Write and
// Read map the node's segment once (ShmMappingCache) and copy with memcpy,
// checking before and after the copies that the node still exports it;
// UCX carries the transfer whenever the segment cannot be mapped (another
// host, user or container). ReadSsd to such a node, when the mapping
// reaches past the published segment (the node's staging area), sends a
// staged request instead: the node reads the values into its staging area
// and names where; the call copies them out (before its deadline and
// within the node's lease, checking the segment is still exported before
// and after) and releases the ranges with a fire-and-forget message. A
// node that cannot stage the request is asked once more the UCX way.
//
// Errors are per operation: INVALID_ARGUMENT for a transfer outside the
// segment or a malformed endpoint (nothing is sent), UNAVAILABLE when the
// node cannot be reached, its endpoint failed or it no longer exports a
// mapped segment, TIMEOUT when nothing came back within `options.timeout`.
// No call waits longer than that.
//
// Thread safety: thread-safe. One UCP worker serves every caller: callers
// issue their operations under one mutex, a progress thread completes them,
// and each caller then waits on its own batch without the mutex.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/mutex.h"
#include "transport/shm_mapping_cache.h"
#include "transport/transport.h"
#include "transport/ucx_buffer_registry.h"
#include "transport/ucx_context.h"
#include "transport/ucx_options.h"
#include "transport/ucx_peer_cache.h"
#include "transport/ucx_request_batch.h"
#include "transport/ucx_ssd_read_messages.h"
#include "transport/ucx_worker.h"

namespace mooncake_tier {

struct UcxTransportStats {
  // Transfers (Write/Read operations) carried by memcpy through a mapped
  // same-host segment, and their bytes.
  uint64_t shm_writes = 0;
  uint64_t shm_reads = 0;
  uint64_t shm_bytes = 0;
  // Transfers handed to UCX (put/get), any host.
  uint64_t ucx_transfers = 0;
  // SSD-read requests answered through the node's staging area (same
  // host), and the value bytes copied out of it.
  uint64_t ssd_staged_requests = 0;
  uint64_t ssd_staged_bytes = 0;
  // Staged requests the node could not stage (or that could not fit its
  // area at all), asked again over UCX.
  uint64_t ssd_staging_fallbacks = 0;
  // SSD-read requests sent the UCX way (the node puts into our buffers).
  uint64_t ssd_ucx_requests = 0;
  ShmMappingCacheStats shm;
};

class UcxTransport final : public Transport {
 public:
  static Result<std::unique_ptr<UcxTransport>> Create(
      UcxTransportOptions options = {});
  // REQUIRES: no call in progress.
  ~UcxTransport() override;

  std::vector<Status> Write(std::span<const SegmentTransfer> ops) override;
  std::vector<Status> Read(std::span<const SegmentTransfer> ops) override;
  std::vector<Result<uint64_t>> ReadSsd(
      const SegmentEndpoint& node,
      std::span<const SsdReadTransfer> ops) override;
  Status RegisterBuffer(std::span<std::byte> buffer) override;
  Status UnregisterBuffer(std::span<std::byte> buffer) override;

  // Replies that could not be matched to a waiting call (late or damaged).
  uint64_t dropped_replies() const;
  UcxTransportStats stats() const;

 private:
  // A ReadSsd call waiting for its reply.
  struct PendingSsdRead {
    std::string node_address;
    UcxRequestBatch* batch;
    size_t reply_slot;
    std::optional<Result<SsdReadReply>> reply;
  };

  explicit UcxTransport(UcxTransportOptions options);
  Status Init();

  // Write (kWrite) or Read: each operation through shared memory when its
  // segment is mapped here, else through UCX; one status per operation.
  template <bool kWrite>
  std::vector<Status> Transfer(std::span<const SegmentTransfer> ops);
  // How Transfer carries each operation.
  struct TransferRoutes {
    std::vector<std::string_view> ucx_key;  // inside the op's remote key
    std::vector<char> via_ucx;              // 1: UCX carries it
    size_t ucx_count = 0;                   // how many are 1
    std::vector<size_t> shared;             // copied through shared memory
    std::vector<std::shared_ptr<const ShmMapping>> mapping_of;  // for those
  };
  // The UCX operations of a Transfer once posted: per operation, its
  // request's slot, its flush's slot (writes), its registered buffer.
  struct UcxTransfers {
    explicit UcxTransfers(size_t n)
        : slot_of(n, UcxRequestBatch::kNoSlot),
          flush_of(n, UcxRequestBatch::kNoSlot),
          registered(n) {}
    std::vector<size_t> slot_of;
    std::vector<size_t> flush_of;
    std::vector<std::shared_ptr<const UcxRegisteredMemory>> registered;
  };
  // Validates each operation (out[i] says why one cannot go) and routes
  // the rest: shared memory for a segment this host maps, else UCX.
  TransferRoutes RouteTransfers(std::span<const SegmentTransfer> ops,
                                std::vector<Status>& out);
  // Posts the UCX operations (and, for writes, one flush per endpoint).
  template <bool kWrite>
  void PostUcxTransfers(std::span<const SegmentTransfer> ops,
                        const TransferRoutes& routes, UcxRequestBatch& batch,
                        UcxTransfers& posted, std::vector<Status>& out);
  // Waits for the posted operations until `deadline`, drops the endpoints
  // of those still in flight then (cancelling them), and sets out[i] for
  // each that failed (`what`: "writing to node", say).
  void CollectUcxTransfers(std::span<const SegmentTransfer> ops,
                           UcxRequestBatch& batch, const UcxTransfers& posted,
                           UcxRequestBatch::Clock::time_point deadline,
                           const char* what, std::vector<Status>& out);
  // Copies the operations `ops[i]` for i in `indices` through their mapped
  // segments (`mappings[i]`), setting out[i].
  template <bool kWrite>
  void CopyShared(
      std::span<const SegmentTransfer> ops, const std::vector<size_t>& indices,
      const std::vector<std::shared_ptr<const ShmMapping>>& mappings,
      std::vector<Status>& out);
  static ucs_status_t OnSsdReply(void* arg, const void* header,
                                 size_t header_length, void* data,
                                 size_t length,
                                 const ucp_am_recv_param_t* param);
  void DeliverSsdReply(std::string_view message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(ucx_mu_);
  // Fails the SSD reads waiting on a node whose endpoint failed.
  void FailSsdReads(const std::string& node_address, ucs_status_t status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(ucx_mu_);
  // Sends the request and waits; returns the reply or why there is none.
  // `sent_at` (if set) gets a time no later than the node's receipt.
  Result<SsdReadReply> ExchangeSsdRead(
      const std::string& node_address, SsdReadRequest& request,
      UcxRequestBatch::Clock::time_point deadline,
      UcxRequestBatch::Clock::time_point* sent_at = nullptr);
  // The node's mapped segment when staged SSD reads may be asked of it
  // (same host, mapped, a staging area behind the segment); else null.
  std::shared_ptr<const ShmMapping> StagingMapping(const SegmentEndpoint& node);
  // Staged SSD reads of `ops` into `out`; false when the node could not
  // stage them (nothing set: ask the UCX way).
  bool ReadSsdStaged(const SegmentEndpoint& node, const ShmMapping& mapping,
                     std::span<const SsdReadTransfer> ops,
                     UcxRequestBatch::Clock::time_point deadline,
                     std::vector<Result<uint64_t>>& out);
  // Copies the values of a staged reply (`sent[k]` is the op of its k-th
  // result) out of the node's staging area into `out`, within the call's
  // deadline and the reply's lease; checks the segment is exported before
  // and after.
  void CopyStaged(const SegmentEndpoint& node, const ShmMapping& mapping,
                  std::span<const SsdReadTransfer> ops,
                  const std::vector<size_t>& sent, SsdReadReply& reply,
                  UcxRequestBatch::Clock::time_point sent_at,
                  UcxRequestBatch::Clock::time_point deadline,
                  std::vector<Result<uint64_t>>& out);
  // SSD reads the node puts into our (registered) buffers.
  void ReadSsdUnstaged(const std::string& node_address,
                       std::span<const SsdReadTransfer> ops,
                       UcxRequestBatch::Clock::time_point deadline,
                       std::vector<Result<uint64_t>>& out);
  // Tells the node the lease's ranges are free; waits briefly for the send.
  void ReleaseStaging(const std::string& node_address, uint64_t lease_id);

  const UcxTransportOptions options_;
  // Null when options_.shared_memory is off.
  std::unique_ptr<ShmMappingCache> shm_;
  std::atomic<uint64_t> shm_writes_{0}, shm_reads_{0}, shm_bytes_{0},
      ucx_transfers_{0}, ssd_staged_requests_{0}, ssd_staged_bytes_{0},
      ssd_staging_fallbacks_{0}, ssd_ucx_requests_{0};
  // Remote keys of nodes that said they have no staging area (bounded).
  mutable Mutex no_staging_mu_;
  absl::flat_hash_set<std::string> no_staging_ ABSL_GUARDED_BY(no_staging_mu_);
  std::unique_ptr<UcxContext> context_;
  std::unique_ptr<UcxBufferRegistry> buffers_;
  mutable Mutex ucx_mu_;
  std::unique_ptr<UcxPeerCache> peers_ ABSL_GUARDED_BY(ucx_mu_);
  absl::flat_hash_map<uint64_t, PendingSsdRead> pending_ssd_
      ABSL_GUARDED_BY(ucx_mu_);
  uint64_t next_request_id_ ABSL_GUARDED_BY(ucx_mu_) = 1;
  uint64_t dropped_replies_ ABSL_GUARDED_BY(ucx_mu_) = 0;
  // Declared last: its progress thread runs callbacks that use the fields
  // above, so it is destroyed (and the thread joined) first.
  std::unique_ptr<UcxWorker> worker_;
};

}  // namespace mooncake_tier
