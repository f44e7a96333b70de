#pragma once

// Serves one exported segment over UCX: its own worker (whose address is the
// segment's transport address), the segment's memory registration, and the
// SSD-tier reads clients send to that worker.
//
// SSD reads: the active-message callback (progress thread) only decodes a
// request and queues it; `options.ssd_threads` threads take requests from
// the bounded queue in passes: one SsdReadHandler::ServeSsdReads call per
// pass. A pass takes every staged request (below) waiting at the front of
// the queue, up to 16 requests or 64 MiB, so that the device sees all of
// their reads at once rather than one per thread; their replies only name
// ranges, so nothing in the pass waits on a client. An unstaged request is
// a pass of its own: its values go into a private staging buffer, are put
// into the client's registered buffer and flushed before the reply, and a
// slow client must not hold other requests' replies. A request that waited
// past its deadline is answered TIMEOUT without being read. A request that
// finds the queue full is answered QUEUE_FULL; a malformed one INVALID_ARGUMENT
// when its header names where to answer, else it is dropped and counted.
// Replies are sent without waiting; the progress thread reaps them and
// force-closes the endpoint of a client that does not take one within
// `options.timeout`.
//
// When `options.shared_memory` is set and the segment lives in a
// SharedMemoryFile, the published remote key also carries its shared-memory
// locator (ShmExport); otherwise it is the plain packed UCX key.
//
// Staged SSD reads (same-host clients; docs/design/ucx-transport.md): the
// last `staging_bytes` of the exported range are not published; when the
// segment is shared, a staged request gets 4096-aligned ranges there (one
// per key), the values are read straight into them and the reply names
// their offsets in the segment and a lease. The ranges stay allocated until
// the client's release arrives or the lease expires: the request's
// deadline (its receipt plus the client's budget) plus `options.timeout`.
// Expired leases are swept by the progress thread (and before refusing a
// request for lack of room). A staged request the area cannot hold now or
// at all is answered QUEUE_FULL (NOT_APPLICABLE without an area) with
// `staging_refused` set, and the client asks again unstaged. Releases of
// unknown leases, and malformed ones, are ignored (counted).
//
// Destruction stops serving: it first withdraws the shared-memory offer,
// then waits for the SSD threads (so the handler
// is not called afterwards), stops the worker and unmaps the segment.
// Clients then see their endpoint fail (UNAVAILABLE) or time out.
//
// Thread safety: all public methods are const and safe from any thread;
// destruction from one thread while no method runs.

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"
#include "base/space_allocator.h"
#include "transport/shm_export.h"
#include "transport/transport.h"
#include "transport/ucx_options.h"
#include "transport/ucx_peer_cache.h"
#include "transport/ucx_registered_memory.h"
#include "transport/ucx_request_batch.h"
#include "transport/ucx_ssd_read_messages.h"
#include "transport/ucx_worker.h"

namespace mooncake_tier {

struct UcxSegmentServerStats {
  uint64_t ssd_requests_served = 0;
  uint64_t ssd_requests_rejected = 0;  // queue full or shutting down
  // Passes that served them (a pass serves the staged requests waiting,
  // within limits, or one unstaged request), and requests waiting now.
  uint64_t ssd_passes = 0;
  uint64_t ssd_requests_queued = 0;
  uint64_t malformed_requests = 0;
  // Staged requests whose values went through the staging area.
  uint64_t ssd_staged_requests = 0;
  // Staged requests refused for lack of staging room (or of an area): the
  // client asks again unstaged.
  uint64_t ssd_staging_fallbacks = 0;
  uint64_t staging_leases_released = 0;  // by the client's release
  uint64_t staging_leases_expired = 0;   // no release came in time
  // Releases ignored: no such lease (late, repeated) or malformed.
  uint64_t staging_releases_ignored = 0;
  // The staging area (0: none) and what leases hold of it now.
  uint64_t staging_bytes = 0;
  uint64_t staging_bytes_in_use = 0;
  // Whether the segment is offered to same-host clients as shared memory.
  bool shared_memory = false;
};

class UcxSegmentServer {
 public:
  // Publishes [base, base + size - staging_bytes); the rest is the staging
  // area (used only when the segment is shared with same-host clients).
  // REQUIRES: `context` outlives the server; `base`/`size` and `ssd` (may be
  // null: SSD reads are then answered UNAVAILABLE) stay valid until the
  // server is destroyed; staging_bytes < size.
  static Result<std::unique_ptr<UcxSegmentServer>> Create(
      ucp_context_h context, const UcxExporterOptions& options,
      std::string name, std::byte* base, uint64_t size, SsdReadHandler* ssd,
      uint64_t staging_bytes = 0);
  ~UcxSegmentServer();

  UcxSegmentServer(const UcxSegmentServer&) = delete;
  UcxSegmentServer& operator=(const UcxSegmentServer&) = delete;

  const std::string& name() const { return name_; }
  const SegmentEndpoint& endpoint() const { return endpoint_; }
  UcxSegmentServerStats stats() const;

 private:
  using Clock = UcxRequestBatch::Clock;

  struct QueuedRead {
    SsdReadRequest request;
    // Receipt plus the client's budget (capped); a staged request's lease
    // ends `options.timeout` later.
    Clock::time_point deadline;
    uint32_t budget_ms = 0;
  };
  // Staging ranges (offset in the area, size) held for one staged reply.
  struct StagingLease {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    Clock::time_point expires;
  };
  // A reply on its way; the payload must outlive the send.
  struct OutgoingReply {
    std::string address;
    std::unique_ptr<std::string> payload;
    void* request = nullptr;
    Clock::time_point deadline;
  };

  UcxSegmentServer(const UcxExporterOptions& options, std::string name,
                   SsdReadHandler* ssd);
  Status Init(ucp_context_h context, std::byte* base, uint64_t size,
              uint64_t staging_bytes);
  Status SetHandler(unsigned id, ucp_am_recv_callback_t callback)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(ucx_mu_);

  static ucs_status_t OnSsdRequest(void* arg, const void* header,
                                   size_t header_length, void* data,
                                   size_t length,
                                   const ucp_am_recv_param_t* param);
  static ucs_status_t OnSsdRelease(void* arg, const void* header,
                                   size_t header_length, void* data,
                                   size_t length,
                                   const ucp_am_recv_param_t* param);
  void Accept(std::string_view message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(ucx_mu_);
  void Reject(const SsdReadRequestHeader& header, Status why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(ucx_mu_);
  // Progress-thread hook: sends queued replies, reaps finished ones.
  bool AfterProgress() ABSL_EXCLUSIVE_LOCKS_REQUIRED(ucx_mu_);
  void QueueReply(const std::string& address, const SsdReadReply& reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(ucx_mu_);

  void ServeLoop();
  // Bytes a request's keys name (saturating).
  static uint64_t RequestBytes(const SsdReadRequest& request);
  // Serves `reads` with one handler call and sends their replies.
  void ServePass(std::span<QueuedRead> reads, std::vector<std::byte>& staging)
      ABSL_LOCKS_EXCLUDED(ucx_mu_, queue_mu_, staging_mu_);
  // One request's part of a pass: its transfers are
  // transfers[first, first + count); its staging ranges (staged) or its
  // offset in the pass's own buffer (unstaged).
  struct PassPart {
    SsdReadReply reply;
    bool active = false;  // to be read; else `reply` says why not
    size_t first = 0;
    size_t count = 0;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    uint64_t at = 0;
  };
  // Checks `read` (size limit, SSD present, deadline) and gives it room:
  // staging ranges, or the next `unstaged_bytes` of the pass's buffer.
  void AdmitRead(const QueuedRead& read, PassPart& part,
                 uint64_t& unstaged_bytes) ABSL_LOCKS_EXCLUDED(staging_mu_);
  // The handler's transfers for the admitted reads, into their room.
  std::vector<SsdReadTransfer> PassTransfers(std::span<const QueuedRead> reads,
                                             std::span<PassPart> parts,
                                             std::vector<std::byte>& staging);
  // A staged request's reply: the ranges its values were read into (kept
  // under a lease, or freed when there is nothing to copy).
  void FinishStaged(const QueuedRead& read,
                    std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                    std::span<const SsdReadTransfer> transfers,
                    std::span<Result<uint64_t>> results, bool shaped,
                    SsdReadReply& reply) ABSL_LOCKS_EXCLUDED(staging_mu_);
  // An unstaged request's reply, after its `values` reached the client.
  void FinishUnstaged(const QueuedRead& read,
                      std::span<const SsdReadTransfer> transfers,
                      std::span<Result<uint64_t>> results, bool shaped,
                      std::span<const std::byte> values, SsdReadReply& reply)
      ABSL_LOCKS_EXCLUDED(ucx_mu_);
  // One staging range per key of `request` (offsets in the area; keys
  // whose client takes 0 bytes get none), or why there is no room.
  Result<std::vector<std::pair<uint64_t, uint64_t>>> AllocateStaging(
      const SsdReadRequest& request);
  void FreeStaging(const std::vector<std::pair<uint64_t, uint64_t>>& ranges)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(staging_mu_);
  // Frees the ranges of every lease expired at `now`.
  void SweepLeases(Clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(staging_mu_);
  // Puts the values found into the client's buffers and flushes; turns the
  // results of values that could not be written into errors.
  void PutValues(const SsdReadRequest& request,
                 std::span<const std::byte> staging,
                 std::vector<Result<uint64_t>>& results,
                 Clock::time_point deadline);

  const UcxExporterOptions options_;
  const std::string name_;
  SsdReadHandler* const ssd_;
  SegmentEndpoint endpoint_;
  // Fixed by Init: the segment, and where its staging area starts in it.
  std::byte* base_ = nullptr;
  uint64_t staging_begin_ = 0;

  mutable Mutex ucx_mu_ ABSL_ACQUIRED_BEFORE(queue_mu_, staging_mu_);
  std::unique_ptr<UcxPeerCache> peers_ ABSL_GUARDED_BY(ucx_mu_);
  // Replies decided on the progress thread, sent from AfterProgress.
  std::vector<std::pair<std::string, SsdReadReply>> unsent_
      ABSL_GUARDED_BY(ucx_mu_);
  std::vector<OutgoingReply> outgoing_ ABSL_GUARDED_BY(ucx_mu_);
  uint64_t malformed_ ABSL_GUARDED_BY(ucx_mu_) = 0;

  mutable Mutex queue_mu_;
  CondVar queue_cv_{&queue_mu_};
  std::deque<QueuedRead> queue_ ABSL_GUARDED_BY(queue_mu_);
  bool stopping_ ABSL_GUARDED_BY(queue_mu_) = false;
  uint64_t served_ ABSL_GUARDED_BY(queue_mu_) = 0;
  uint64_t passes_ ABSL_GUARDED_BY(queue_mu_) = 0;
  uint64_t rejected_ ABSL_GUARDED_BY(queue_mu_) = 0;

  // The staging area; taken by SSD threads, the release handler and the
  // progress thread's sweep.
  mutable Mutex staging_mu_;
  // Null when the segment has no staging area or is not shared.
  std::unique_ptr<SpaceAllocator> staging_ ABSL_GUARDED_BY(staging_mu_);
  absl::flat_hash_map<uint64_t, StagingLease> leases_
      ABSL_GUARDED_BY(staging_mu_);
  uint64_t next_lease_id_ ABSL_GUARDED_BY(staging_mu_) = 1;
  // The earliest expiry among leases_ (max when none): sweeps before it
  // cost a comparison.
  Clock::time_point next_expiry_ ABSL_GUARDED_BY(staging_mu_) =
      Clock::time_point::max();
  uint64_t staged_ ABSL_GUARDED_BY(staging_mu_) = 0;
  uint64_t staging_fallbacks_ ABSL_GUARDED_BY(staging_mu_) = 0;
  uint64_t leases_released_ ABSL_GUARDED_BY(staging_mu_) = 0;
  uint64_t leases_expired_ ABSL_GUARDED_BY(staging_mu_) = 0;
  uint64_t releases_ignored_ ABSL_GUARDED_BY(staging_mu_) = 0;

  std::unique_ptr<UcxRegisteredMemory> segment_;
  // Set while the segment is offered to same-host clients.
  std::unique_ptr<ShmExport> share_;
  std::unique_ptr<UcxWorker> worker_;
  std::vector<std::thread> threads_;
};

}  // namespace mooncake_tier
