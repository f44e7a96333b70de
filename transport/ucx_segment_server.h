#pragma once

// Serves one exported segment over UCX: its own worker (whose address is the
// segment's transport address), the segment's memory registration, and the
// SSD-tier reads clients send to that worker.
//
// SSD reads: the active-message callback (progress thread) only decodes a
// request and queues it; `options.ssd_threads` threads take requests from
// the bounded queue, call SsdReadHandler::ServeSsdReads into a staging
// buffer, put each value into the client's registered buffer, flush, and
// send the reply. A request that finds the queue full is answered
// QUEUE_FULL; a malformed one INVALID_ARGUMENT when its header names where
// to answer, else it is dropped and counted. Replies are sent without
// waiting; the progress thread reaps them and force-closes the endpoint of
// a client that does not take one within `options.timeout`.
//
// When `options.shared_memory` is set and the segment lives in a
// SharedMemoryFile, the published remote key also carries its shared-memory
// locator (ShmExport); otherwise it is the plain packed UCX key.
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
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
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
  uint64_t malformed_requests = 0;
  // Whether the segment is offered to same-host clients as shared memory.
  bool shared_memory = false;
};

class UcxSegmentServer {
 public:
  // REQUIRES: `context` outlives the server; `base`/`size` and `ssd` (may be
  // null: SSD reads are then answered UNAVAILABLE) stay valid until the
  // server is destroyed.
  static Result<std::unique_ptr<UcxSegmentServer>> Create(
      ucp_context_h context, const UcxExporterOptions& options,
      std::string name, std::byte* base, uint64_t size, SsdReadHandler* ssd);
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
    Clock::time_point deadline;
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
  Status Init(ucp_context_h context, std::byte* base, uint64_t size);

  static ucs_status_t OnSsdRequest(void* arg, const void* header,
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
  void Serve(QueuedRead& read, std::vector<std::byte>& staging);
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

  mutable Mutex ucx_mu_ ABSL_ACQUIRED_BEFORE(queue_mu_);
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
  uint64_t rejected_ ABSL_GUARDED_BY(queue_mu_) = 0;

  std::unique_ptr<UcxRegisteredMemory> segment_;
  // Set while the segment is offered to same-host clients.
  std::unique_ptr<ShmExport> share_;
  std::unique_ptr<UcxWorker> worker_;
  std::vector<std::thread> threads_;
};

}  // namespace mooncake_tier
