#include "transport/ucx_segment_server.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "transport/ucx_status.h"

namespace mooncake_tier {
namespace {

constexpr size_t kNoSlot = std::numeric_limits<size_t>::max();
// Rejections decided on the progress thread and not yet sent; past this
// many, further ones are dropped and those clients time out.
constexpr size_t kMaxUnsentReplies = 256;
// Longest a client may ask the node to keep its request.
constexpr uint32_t kMaxBudgetMs = 10 * 60 * 1000;
// A staging buffer grown past this is released after its request.
constexpr size_t kKeptStagingBytes = size_t{8} << 20;

}  // namespace

Result<std::unique_ptr<UcxSegmentServer>> UcxSegmentServer::Create(
    ucp_context_h context, const UcxExporterOptions& options, std::string name,
    std::byte* base, uint64_t size, SsdReadHandler* ssd) {
  if (options.ssd_threads < 1 || options.ssd_queue_limit < 1 ||
      options.timeout.count() <= 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "UCX exporter options: need ssd_threads >= 1, "
                  "ssd_queue_limit >= 1 and a positive timeout");
  }
  std::unique_ptr<UcxSegmentServer> server(
      new UcxSegmentServer(options, std::move(name), ssd));
  MT_RETURN_IF_ERROR(server->Init(context, base, size));
  return server;
}

UcxSegmentServer::UcxSegmentServer(const UcxExporterOptions& options,
                                   std::string name, SsdReadHandler* ssd)
    : options_(options), name_(std::move(name)), ssd_(ssd) {}

Status UcxSegmentServer::Init(ucp_context_h context, std::byte* base,
                              uint64_t size) {
  MT_ASSIGN_OR_RETURN(segment_,
                      UcxRegisteredMemory::Create(context, base, size));
  MT_ASSIGN_OR_RETURN(worker_, UcxWorker::Create(context, &ucx_mu_, [this] {
                        ucx_mu_.AssertHeld();  // the worker calls it so
                        return AfterProgress();
                      }));
  {
    MutexLock lock(&ucx_mu_);
    peers_ = std::make_unique<UcxPeerCache>(worker_->handle(),
                                            std::chrono::milliseconds(1000));
    ucp_am_handler_param_t param{};
    param.field_mask =
        UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
        UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    param.id = kSsdReadRequestAmId;
    param.flags = UCP_AM_FLAG_WHOLE_MSG;
    param.cb = &UcxSegmentServer::OnSsdRequest;
    param.arg = this;
    const ucs_status_t status =
        ucp_worker_set_am_recv_handler(worker_->handle(), &param);
    if (status != UCS_OK) {
      return UcxError(status, "registering the SSD read request handler");
    }
  }
  endpoint_.transport_address = worker_->address();
  endpoint_.base = segment_->address();
  endpoint_.size = size;
  endpoint_.remote_key = segment_->packed_key();
  if (options_.shared_memory) {
    // Memory that is not a SharedMemoryFile (NOT_APPLICABLE) or that cannot
    // be offered is exported over UCX alone.
    Result<std::unique_ptr<ShmExport>> share = ShmExport::Create(base, size);
    if (share.ok()) {
      share_ = std::move(*share);
      endpoint_.remote_key =
          EncodeShmEnvelope(share_->locator(), segment_->packed_key());
    }
  }
  for (int i = 0; i < options_.ssd_threads; ++i) {
    threads_.emplace_back([this] { ServeLoop(); });
  }
  return Status();
}

UcxSegmentServer::~UcxSegmentServer() {
  // First, so same-host clients stop copying into the segment at once.
  share_.reset();
  {
    MutexLock lock(&queue_mu_);
    stopping_ = true;
    queue_.clear();
    queue_cv_.SignalAll();
  }
  for (std::thread& thread : threads_) thread.join();
  if (worker_ != nullptr) worker_->Stop();
  // Payloads of replies still in flight stay alive until the worker is gone.
  std::vector<OutgoingReply> outgoing;
  {
    MutexLock lock(&ucx_mu_);
    if (peers_ != nullptr) peers_->CloseAll();
    for (OutgoingReply& reply : outgoing_) ucp_request_free(reply.request);
    outgoing = std::move(outgoing_);
    outgoing_.clear();
    if (worker_ != nullptr) worker_->ProgressOnce();
    peers_.reset();
  }
  segment_.reset();
  worker_.reset();
}

UcxSegmentServerStats UcxSegmentServer::stats() const {
  UcxSegmentServerStats out;
  MutexLock ucx_lock(&ucx_mu_);
  out.malformed_requests = malformed_;
  out.shared_memory = share_ != nullptr;
  MutexLock queue_lock(&queue_mu_);
  out.ssd_requests_served = served_;
  out.ssd_requests_rejected = rejected_;
  return out;
}

ucs_status_t UcxSegmentServer::OnSsdRequest(void* arg, const void* header,
                                            size_t header_length, void* data,
                                            size_t length,
                                            const ucp_am_recv_param_t* param) {
  UcxSegmentServer* self = static_cast<UcxSegmentServer*>(arg);
  // Runs inside ucp_worker_progress, which runs under ucx_mu_.
  self->ucx_mu_.AssertHeld();
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
    // Clients send requests eagerly; refusing makes the sender's send fail.
    ++self->malformed_;
    return UCS_ERR_UNSUPPORTED;
  }
  self->Accept(std::string_view(static_cast<const char*>(data), length));
  return UCS_OK;
}

void UcxSegmentServer::Accept(std::string_view message) {
  Result<SsdReadRequestHeader> header = DecodeSsdReadRequestHeader(message);
  if (!header.ok()) {
    ++malformed_;  // no way to tell who sent it
    return;
  }
  Result<SsdReadRequest> request = DecodeSsdReadRequest(message);
  if (!request.ok()) {
    ++malformed_;
    Reject(*header, request.status());
    return;
  }
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(
                         std::min(request->header.budget_ms, kMaxBudgetMs));
  Status refused;
  {
    MutexLock lock(&queue_mu_);
    if (stopping_) {
      refused = Status(ErrorReason::kUnavailable,
                       "node is withdrawing segment '" + name_ + "'");
    } else if (queue_.size() >= options_.ssd_queue_limit) {
      refused = Status(ErrorReason::kQueueFull,
                       "node's SSD read queue is full (" +
                           std::to_string(options_.ssd_queue_limit) +
                           " requests waiting)");
    } else {
      queue_.push_back(QueuedRead{std::move(*request), deadline});
      queue_cv_.Signal();
      return;
    }
    ++rejected_;
  }
  Reject(*header, std::move(refused));
}

void UcxSegmentServer::Reject(const SsdReadRequestHeader& header, Status why) {
  if (unsent_.size() >= kMaxUnsentReplies) return;
  SsdReadReply reply;
  reply.request_id = header.request_id;
  reply.status = std::move(why);
  unsent_.emplace_back(header.reply_address, std::move(reply));
}

bool UcxSegmentServer::AfterProgress() {
  if (peers_ == nullptr) return false;
  const bool issued = !unsent_.empty();
  for (const auto& [address, reply] : unsent_) QueueReply(address, reply);
  unsent_.clear();
  const auto now = Clock::now();
  for (auto it = outgoing_.begin(); it != outgoing_.end();) {
    if (ucp_request_check_status(it->request) != UCS_INPROGRESS) {
      ucp_request_free(it->request);
      it = outgoing_.erase(it);
      continue;
    }
    if (now >= it->deadline) {
      // The client does not take its reply: closing cancels the send.
      peers_->Drop(it->address);
      it->deadline = Clock::time_point::max();
    }
    ++it;
  }
  return issued;
}

void UcxSegmentServer::QueueReply(const std::string& address,
                                  const SsdReadReply& reply) {
  Result<ucp_ep_h> ep = peers_->Endpoint(address);
  if (!ep.ok()) return;  // the client is gone; it times out if it is not
  auto payload = std::make_unique<std::string>(EncodeSsdReadReply(reply));
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t request =
      ucp_am_send_nbx(*ep, kSsdReadReplyAmId, nullptr, 0, payload->data(),
                      payload->size(), &param);
  if (!UCS_PTR_IS_PTR(request)) return;  // sent already, or failed
  outgoing_.push_back(OutgoingReply{address, std::move(payload), request,
                                    Clock::now() + options_.timeout});
}

void UcxSegmentServer::ServeLoop() {
  std::vector<std::byte> staging;
  for (;;) {
    QueuedRead read;
    {
      MutexLock lock(&queue_mu_);
      while (!stopping_ && queue_.empty()) queue_cv_.Wait();
      if (stopping_) return;
      read = std::move(queue_.front());
      queue_.pop_front();
    }
    Serve(read, staging);
    if (staging.capacity() > kKeptStagingBytes) {
      staging = std::vector<std::byte>();
    }
    MutexLock lock(&queue_mu_);
    ++served_;
  }
}

void UcxSegmentServer::Serve(QueuedRead& read,
                             std::vector<std::byte>& staging) {
  const SsdReadRequest& request = read.request;
  SsdReadReply reply;
  reply.request_id = request.header.request_id;
  uint64_t total = 0;
  bool too_big = false;
  for (const SsdReadRequestOp& op : request.ops) {
    if (op.length > options_.max_ssd_request_bytes - total) too_big = true;
    if (too_big) break;
    total += op.length;
  }
  if (too_big) {
    reply.status = Status(ErrorReason::kInvalidArgument,
                          "SSD read request names more buffer bytes than the "
                          "node's limit of " +
                              std::to_string(options_.max_ssd_request_bytes));
  } else if (ssd_ == nullptr) {
    reply.status = Status(ErrorReason::kUnavailable,
                          "segment '" + name_ + "' serves no SSD reads");
  } else {
    staging.resize(total);
    std::vector<SsdReadTransfer> transfers;
    transfers.reserve(request.ops.size());
    uint64_t offset = 0;
    for (const SsdReadRequestOp& op : request.ops) {
      transfers.push_back(SsdReadTransfer{
          op.key, std::span<std::byte>(staging.data() + offset, op.length)});
      offset += op.length;
    }
    std::vector<Result<uint64_t>> results = ssd_->ServeSsdReads(transfers);
    if (results.size() != transfers.size()) {
      reply.status = Status(ErrorReason::kInternal,
                            "SSD handler answered a different number of keys");
    } else if (Clock::now() >= read.deadline) {
      reply.status = Status(ErrorReason::kTimeout,
                            "SSD read finished after the client's deadline");
    } else {
      for (size_t i = 0; i < results.size(); ++i) {
        if (results[i].ok() && *results[i] > transfers[i].buffer.size()) {
          results[i] = Status(ErrorReason::kInternal,
                              "SSD handler reported more bytes than the "
                              "buffer holds");
        }
      }
      PutValues(request, staging, results, read.deadline);
      reply.results = std::move(results);
    }
  }
  MutexLock lock(&ucx_mu_);
  QueueReply(request.header.reply_address, reply);
  worker_->Signal();
}

void UcxSegmentServer::PutValues(const SsdReadRequest& request,
                                 std::span<const std::byte> staging,
                                 std::vector<Result<uint64_t>>& results,
                                 Clock::time_point deadline) {
  const size_t n = request.ops.size();
  const std::string& address = request.header.reply_address;
  UcxRequestBatch batch(n + 1);
  std::vector<size_t> slot_of(n, kNoSlot);
  std::vector<ucp_rkey_h> rkeys(n, nullptr);
  size_t flush_slot = kNoSlot;
  bool any_put = false;
  {
    MutexLock lock(&ucx_mu_);
    Result<ucp_ep_h> ep = peers_->Endpoint(address);
    uint64_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
      const SsdReadRequestOp& op = request.ops[i];
      const uint64_t at = offset;
      offset += op.length;
      if (!results[i].ok() || *results[i] == 0) continue;
      if (!ep.ok()) {
        results[i] = ep.status();
        continue;
      }
      const ucs_status_t status =
          ucp_ep_rkey_unpack(*ep, op.packed_key.data(), &rkeys[i]);
      if (status != UCS_OK) {
        rkeys[i] = nullptr;
        results[i] = UcxError(status, "unpacking the client's buffer key");
        continue;
      }
      slot_of[i] = batch.AddSlot();
      const ucp_request_param_t param = batch.Param(slot_of[i]);
      batch.Track(slot_of[i], ucp_put_nbx(*ep, staging.data() + at, *results[i],
                                          op.address, rkeys[i], &param));
      any_put = true;
    }
    if (any_put) {
      flush_slot = batch.AddSlot();
      const ucp_request_param_t param = batch.Param(flush_slot);
      batch.Track(flush_slot, ucp_ep_flush_nbx(*ep, &param));
      worker_->Signal();
    }
  }
  if (flush_slot == kNoSlot) return;
  const bool all_done =
      batch.WaitUntil(std::min(deadline, Clock::now() + options_.timeout));
  {
    MutexLock lock(&ucx_mu_);
    if (!all_done) peers_->Drop(address);  // cancels what is in flight
    batch.Finish();
    for (ucp_rkey_h rkey : rkeys) {
      if (rkey != nullptr) ucp_rkey_destroy(rkey);
    }
  }
  const ucs_status_t flushed = batch.status(flush_slot);
  for (size_t i = 0; i < n; ++i) {
    if (slot_of[i] == kNoSlot) continue;
    ucs_status_t status = batch.status(slot_of[i]);
    if (status == UCS_OK) status = flushed;
    if (status == UCS_OK) continue;
    results[i] =
        status == UCS_ERR_TIMED_OUT
            ? Status(ErrorReason::kTimeout,
                     "writing the value into the client's buffer timed out")
            : UcxError(status, "writing the value into the client's buffer");
  }
}

}  // namespace mooncake_tier
