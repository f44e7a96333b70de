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
// host, user or container). SSD-tier reads always go over UCX.
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

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "core/mutex.h"
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
      std::string_view node_address,
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

  template <bool kWrite>
  std::vector<Status> Transfer(std::span<const SegmentTransfer> ops);
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
  Result<SsdReadReply> ExchangeSsdRead(
      const std::string& node_address, SsdReadRequest& request,
      UcxRequestBatch::Clock::time_point deadline);

  const UcxTransportOptions options_;
  // Null when options_.shared_memory is off.
  std::unique_ptr<ShmMappingCache> shm_;
  std::atomic<uint64_t> shm_writes_{0}, shm_reads_{0}, shm_bytes_{0},
      ucx_transfers_{0};
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
