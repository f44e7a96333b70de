#include "transport/ucx_segment_server.h"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "base/page_populate.h"
#include "transport/ucx_status.h"

namespace mooncake_tier {
namespace {

// Rejections decided on the progress thread and not yet sent; past this
// many, further ones are dropped and those clients time out.
constexpr size_t kMaxUnsentReplies = 256;
// Longest a client may ask the node to keep its request.
constexpr uint32_t kMaxBudgetMs = 10 * 60 * 1000;
// A staging buffer grown past this is released after its request.
constexpr size_t kKeptStagingBytes = size_t{8} << 20;
// What one SSD thread takes from the queue for one pass (one call of the
// handler, one submission to the device): requests, and the bytes they
// name (a single larger request still goes alone).
constexpr size_t kMaxRequestsPerPass = 16;
constexpr uint64_t kMaxBytesPerPass = uint64_t{64} << 20;

uint64_t ToMs(std::chrono::milliseconds d) {
  return static_cast<uint64_t>(std::max<int64_t>(0, d.count()));
}

}  // namespace

Result<std::unique_ptr<UcxSegmentServer>> UcxSegmentServer::Create(
    ucp_context_h context, const UcxExporterOptions& options, std::string name,
    std::byte* base, uint64_t size, SsdReadHandler* ssd,
    uint64_t staging_bytes) {
  if (options.ssd_threads < 1 || options.ssd_queue_limit < 1 ||
      options.timeout.count() <= 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "UCX exporter options: need ssd_threads >= 1, "
                  "ssd_queue_limit >= 1 and a positive timeout");
  }
  if (staging_bytes >= size) {
    return Status(ErrorReason::kInvalidArgument,
                  "the staging area leaves no segment to export");
  }
  std::unique_ptr<UcxSegmentServer> server(
      new UcxSegmentServer(options, std::move(name), ssd));
  MT_RETURN_IF_ERROR(server->Init(context, base, size, staging_bytes));
  return server;
}

UcxSegmentServer::UcxSegmentServer(const UcxExporterOptions& options,
                                   std::string name, SsdReadHandler* ssd)
    : options_(options), name_(std::move(name)), ssd_(ssd) {}

Status UcxSegmentServer::SetHandler(unsigned id,
                                    ucp_am_recv_callback_t callback) {
  return SetAmHandler(worker_->handle(), id, callback, this,
                      "SSD read message handler");
}

Status UcxSegmentServer::Init(ucp_context_h context, std::byte* base,
                              uint64_t size, uint64_t staging_bytes) {
  const uint64_t published = size - staging_bytes;
  base_ = base;
  // Clients on other hosts reach only the published part.
  MT_ASSIGN_OR_RETURN(segment_,
                      UcxRegisteredMemory::Create(context, base, published));
  MT_ASSIGN_OR_RETURN(worker_, UcxWorker::Create(context, &ucx_mu_, [this] {
                        ucx_mu_.AssertHeld();  // the worker calls it so
                        return AfterProgress();
                      }));
  {
    MutexLock lock(&ucx_mu_);
    peers_ = std::make_unique<UcxPeerCache>(worker_->handle(),
                                            std::chrono::milliseconds(1000));
    // Both before the address is published (see ucx-transport.md).
    MT_RETURN_IF_ERROR(
        SetHandler(kSsdReadRequestAmId, &UcxSegmentServer::OnSsdRequest));
    MT_RETURN_IF_ERROR(
        SetHandler(kSsdReadReleaseAmId, &UcxSegmentServer::OnSsdRelease));
  }
  endpoint_.transport_address = worker_->address();
  endpoint_.base = segment_->address();
  endpoint_.size = published;
  endpoint_.remote_key = segment_->packed_key();
  if (options_.shared_memory) {
    // Memory that is not a SharedMemoryFile (NOT_APPLICABLE) or that cannot
    // be offered is exported over UCX alone. The locator names the whole
    // file, staging tail included.
    Result<std::unique_ptr<ShmExport>> share = ShmExport::Create(base, size);
    if (share.ok()) {
      share_ = std::move(*share);
      endpoint_.remote_key =
          EncodeShmEnvelope(share_->locator(), segment_->packed_key());
    }
  }
  if (share_ != nullptr && staging_bytes > 0) {
    // Only same-host clients can copy out of the staging area.
    const uintptr_t tail = reinterpret_cast<uintptr_t>(base) + published;
    const uintptr_t aligned = (tail + kSsdReadStagingAlignment - 1) &
                              ~uintptr_t{kSsdReadStagingAlignment - 1};
    staging_begin_ = aligned - reinterpret_cast<uintptr_t>(base);
    if (staging_begin_ < size &&
        size - staging_begin_ >= kSsdReadStagingAlignment) {
      // Faulted in before any request uses it: otherwise the first reads
      // into each page pay for allocating and zeroing it on the client's
      // clock.
      PopulatePages(base + staging_begin_, size - staging_begin_);
      MutexLock lock(&staging_mu_);
      staging_ = std::make_unique<SpaceAllocator>(size - staging_begin_,
                                                  kSsdReadStagingAlignment);
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
  {
    MutexLock queue_lock(&queue_mu_);
    out.ssd_requests_served = served_;
    out.ssd_requests_rejected = rejected_;
    out.ssd_passes = passes_;
    out.ssd_requests_queued = queue_.size();
  }
  MutexLock staging_lock(&staging_mu_);
  out.ssd_staged_requests = staged_;
  out.ssd_staging_fallbacks = staging_fallbacks_;
  out.staging_leases_released = leases_released_;
  out.staging_leases_expired = leases_expired_;
  out.staging_releases_ignored = releases_ignored_;
  if (staging_ != nullptr) {
    out.staging_bytes = staging_->capacity();
    out.staging_bytes_in_use = staging_->allocated_bytes();
  }
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

ucs_status_t UcxSegmentServer::OnSsdRelease(void* arg, const void* header,
                                            size_t header_length, void* data,
                                            size_t length,
                                            const ucp_am_recv_param_t* param) {
  UcxSegmentServer* self = static_cast<UcxSegmentServer*>(arg);
  // Runs inside ucp_worker_progress, which runs under ucx_mu_.
  self->ucx_mu_.AssertHeld();
  Result<uint64_t> lease_id =
      (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0
          ? Status(ErrorReason::kInvalidArgument, "release sent rendezvous")
          : DecodeSsdReadRelease(
                std::string_view(static_cast<const char*>(data), length));
  MutexLock lock(&self->staging_mu_);
  auto it = lease_id.ok() ? self->leases_.find(*lease_id) : self->leases_.end();
  if (it == self->leases_.end()) {
    ++self->releases_ignored_;  // malformed, late (expired) or repeated
  } else {
    self->FreeStaging(it->second.ranges);
    self->leases_.erase(it);
    ++self->leases_released_;
  }
  // A refused rendezvous makes the sender's send fail; nothing else to do.
  return (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0
             ? UCS_ERR_UNSUPPORTED
             : UCS_OK;
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
  const uint32_t budget_ms = std::min(request->header.budget_ms, kMaxBudgetMs);
  const auto deadline = Clock::now() + std::chrono::milliseconds(budget_ms);
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
      queue_.push_back(QueuedRead{std::move(*request), deadline, budget_ms});
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
  {
    // A client that never releases (it died, or its release was lost) pins
    // its ranges only until its lease ends.
    MutexLock lock(&staging_mu_);
    SweepLeases(Clock::now());
  }
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

uint64_t UcxSegmentServer::RequestBytes(const SsdReadRequest& request) {
  uint64_t total = 0;
  for (const SsdReadRequestOp& op : request.ops) {
    total = op.length > UINT64_MAX - total ? UINT64_MAX : total + op.length;
  }
  return total;
}

void UcxSegmentServer::ServeLoop() {
  std::vector<std::byte> staging;
  std::vector<QueuedRead> reads;
  for (;;) {
    reads.clear();
    {
      MutexLock lock(&queue_mu_);
      while (!stopping_ && queue_.empty()) queue_cv_.Wait();
      if (stopping_) return;
      // The staged requests waiting at the front, up to a pass's limits:
      // one submission to the device for all of them, so the device sees
      // more than one read per thread (see the class comment). An unstaged
      // request goes alone: its reply waits on the client's network.
      uint64_t bytes = 0;
      while (!queue_.empty() && reads.size() < kMaxRequestsPerPass) {
        const SsdReadRequest& next_request = queue_.front().request;
        const uint64_t next = RequestBytes(next_request);
        if (!reads.empty() &&
            (!next_request.header.staged() || bytes >= kMaxBytesPerPass ||
             next > kMaxBytesPerPass - bytes)) {
          break;
        }
        bytes = next > UINT64_MAX - bytes ? UINT64_MAX : bytes + next;
        reads.push_back(std::move(queue_.front()));
        queue_.pop_front();
        if (!reads.back().request.header.staged()) break;
      }
      ++passes_;
    }
    ServePass(reads, staging);
    if (staging.capacity() > kKeptStagingBytes) {
      staging = std::vector<std::byte>();
    }
    MutexLock lock(&queue_mu_);
    served_ += reads.size();
  }
}

void UcxSegmentServer::ServePass(std::span<QueuedRead> reads,
                                 std::vector<std::byte>& staging) {
  std::vector<PassPart> parts(reads.size());
  uint64_t unstaged_bytes = 0;
  for (size_t r = 0; r < reads.size(); ++r) {
    AdmitRead(reads[r], parts[r], unstaged_bytes);
  }
  // Sized once, before any span into it is taken.
  staging.resize(unstaged_bytes);
  std::vector<SsdReadTransfer> transfers = PassTransfers(reads, parts, staging);
  std::vector<Result<uint64_t>> results;
  if (!transfers.empty()) results = ssd_->ServeSsdReads(transfers);
  const bool shaped = results.size() == transfers.size();
  // A pass is staged requests only, or one unstaged request (ServeLoop).
  for (size_t r = 0; r < reads.size(); ++r) {
    const QueuedRead& read = reads[r];
    PassPart& part = parts[r];
    if (part.active) {
      std::span<Result<uint64_t>> mine;
      if (shaped) mine = std::span(results).subspan(part.first, part.count);
      const std::span<const SsdReadTransfer> theirs =
          std::span<const SsdReadTransfer>(transfers).subspan(part.first,
                                                              part.count);
      if (read.request.header.staged()) {
        FinishStaged(read, part.ranges, theirs, mine, shaped, part.reply);
      } else {
        FinishUnstaged(read, theirs, mine, shaped,
                       std::span<const std::byte>(staging).subspan(
                           part.at, RequestBytes(read.request)),
                       part.reply);
      }
    }
    MutexLock lock(&ucx_mu_);
    QueueReply(read.request.header.reply_address, part.reply);
    worker_->Signal();
  }
}

void UcxSegmentServer::AdmitRead(const QueuedRead& read, PassPart& part,
                                 uint64_t& unstaged_bytes) {
  const SsdReadRequest& request = read.request;
  part.reply.request_id = request.header.request_id;
  const uint64_t total = RequestBytes(request);
  if (!request.header.staged() && total > options_.max_ssd_request_bytes) {
    part.reply.status = Status(
        ErrorReason::kInvalidArgument,
        "SSD read request names more buffer bytes than the node's limit of " +
            std::to_string(options_.max_ssd_request_bytes));
    return;
  }
  if (ssd_ == nullptr) {
    part.reply.status = Status(ErrorReason::kUnavailable,
                               "segment '" + name_ + "' serves no SSD reads");
    return;
  }
  if (Clock::now() >= read.deadline) {
    // It waited in the queue past the client's budget: not worth a read.
    part.reply.status = Status(ErrorReason::kTimeout,
                               "SSD read waited past the client's deadline");
    return;
  }
  if (request.header.staged()) {
    Result<std::vector<std::pair<uint64_t, uint64_t>>> ranges =
        AllocateStaging(request);
    if (!ranges.ok()) {
      part.reply.status = ranges.status();
      part.reply.staging_refused = true;
      return;
    }
    part.ranges = std::move(*ranges);
    part.active = true;
    return;
  }
  part.at = unstaged_bytes;
  unstaged_bytes += total;  // one unstaged request per pass: <= the limit
  part.active = true;
}

std::vector<SsdReadTransfer> UcxSegmentServer::PassTransfers(
    std::span<const QueuedRead> reads, std::span<PassPart> parts,
    std::vector<std::byte>& staging) {
  std::vector<SsdReadTransfer> transfers;
  for (size_t r = 0; r < reads.size(); ++r) {
    PassPart& part = parts[r];
    if (!part.active) continue;
    const SsdReadRequest& request = reads[r].request;
    part.first = transfers.size();
    part.count = request.ops.size();
    uint64_t offset = part.at;
    for (size_t i = 0; i < request.ops.size(); ++i) {
      const SsdReadRequestOp& op = request.ops[i];
      std::span<std::byte> buffer;
      if (request.header.staged()) {
        // Ranges are allocated while this thread reads into them: nobody
        // else touches them until the reply names them.
        const auto& [range_at, length] = part.ranges[i];
        buffer =
            std::span<std::byte>(base_ + staging_begin_ + range_at, length);
      } else {
        buffer = std::span<std::byte>(staging.data() + offset, op.length);
        offset += op.length;
      }
      transfers.push_back(SsdReadTransfer{op.key, buffer});
    }
  }
  return transfers;
}

void UcxSegmentServer::FinishUnstaged(
    const QueuedRead& read, std::span<const SsdReadTransfer> transfers,
    std::span<Result<uint64_t>> results, bool shaped,
    std::span<const std::byte> values, SsdReadReply& reply) {
  if (!shaped) {
    reply.status = Status(ErrorReason::kInternal,
                          "SSD handler answered a different number of keys");
    return;
  }
  if (Clock::now() >= read.deadline) {
    reply.status = Status(ErrorReason::kTimeout,
                          "SSD read finished after the client's deadline");
    return;
  }
  std::vector<Result<uint64_t>> mine(results.begin(), results.end());
  for (size_t i = 0; i < mine.size(); ++i) {
    if (mine[i].ok() && *mine[i] > transfers[i].buffer.size()) {
      mine[i] = Status(ErrorReason::kInternal,
                       "SSD handler reported more bytes than the buffer holds");
    }
  }
  PutValues(read.request, values, mine, read.deadline);
  reply.results = std::move(mine);
}

Result<std::vector<std::pair<uint64_t, uint64_t>>>
UcxSegmentServer::AllocateStaging(const SsdReadRequest& request) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges(request.ops.size(), {0, 0});
  MutexLock lock(&staging_mu_);
  if (staging_ == nullptr) {
    ++staging_fallbacks_;
    return Status(ErrorReason::kNotApplicable,
                  "segment '" + name_ + "' has no SSD-read staging area");
  }
  uint64_t needed = 0;
  for (const SsdReadRequestOp& op : request.ops) {
    const uint64_t rounded = staging_->RoundUp(op.length);
    if (rounded < op.length || needed > UINT64_MAX - rounded) {
      needed = UINT64_MAX;
      break;
    }
    needed += rounded;
  }
  if (needed > staging_->capacity()) {
    ++staging_fallbacks_;
    return Status(ErrorReason::kQueueFull,
                  "SSD read request needs " + std::to_string(needed) +
                      " bytes of staging, more than the node's staging area "
                      "of " +
                      std::to_string(staging_->capacity()));
  }
  // Twice at most: a failed pass sweeps expired leases first.
  for (int pass = 0; pass < 2; ++pass) {
    size_t taken = 0;
    for (; taken < request.ops.size(); ++taken) {
      const uint64_t length = request.ops[taken].length;
      if (length == 0) continue;
      std::optional<uint64_t> offset = staging_->Allocate(length);
      if (!offset.has_value()) break;
      ranges[taken] = {*offset, length};
    }
    if (taken == request.ops.size()) {
      ++staged_;
      return ranges;
    }
    ranges.resize(taken);
    FreeStaging(ranges);
    ranges.assign(request.ops.size(), {0, 0});
    if (pass == 0) SweepLeases(Clock::now());
  }
  ++staging_fallbacks_;
  return Status(ErrorReason::kQueueFull,
                "node's SSD-read staging area is full (" +
                    std::to_string(staging_->allocated_bytes()) + " of " +
                    std::to_string(staging_->capacity()) +
                    " bytes leased; the request needs " +
                    std::to_string(needed) + ")");
}

void UcxSegmentServer::FreeStaging(
    const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  for (const auto& [offset, size] : ranges) {
    if (size > 0) staging_->Free(offset, size);
  }
}

void UcxSegmentServer::SweepLeases(Clock::time_point now) {
  if (now < next_expiry_) return;
  next_expiry_ = Clock::time_point::max();
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (it->second.expires <= now) {
      FreeStaging(it->second.ranges);
      leases_.erase(it++);
      ++leases_expired_;
      continue;
    }
    next_expiry_ = std::min(next_expiry_, it->second.expires);
    ++it;
  }
}

void UcxSegmentServer::FinishStaged(
    const QueuedRead& read, std::vector<std::pair<uint64_t, uint64_t>>& ranges,
    std::span<const SsdReadTransfer> transfers,
    std::span<Result<uint64_t>> results, bool shaped, SsdReadReply& reply) {
  bool keep = false;
  if (!shaped) {
    reply.status = Status(ErrorReason::kInternal,
                          "SSD handler answered a different number of keys");
  } else if (Clock::now() >= read.deadline) {
    reply.status = Status(ErrorReason::kTimeout,
                          "SSD read finished after the client's deadline");
  } else {
    reply.staged = true;
    reply.offsets.assign(results.size(), 0);
    reply.results.assign(results.begin(), results.end());
    for (size_t i = 0; i < results.size(); ++i) {
      Result<uint64_t>& result = reply.results[i];
      if (!result.ok()) continue;
      if (*result > transfers[i].buffer.size()) {
        result =
            Status(ErrorReason::kInternal,
                   "SSD handler reported more bytes than the buffer holds");
        continue;
      }
      reply.offsets[i] = staging_begin_ + ranges[i].first;
      keep = keep || *result > 0;
    }
  }
  MutexLock lock(&staging_mu_);
  if (!keep) {
    FreeStaging(ranges);  // nothing for the client to copy
    return;
  }
  // The client copies only before its own deadline, which falls within
  // this lease (see the design note), and checks it did.
  const auto expires = read.deadline + options_.timeout;
  reply.lease_id = next_lease_id_++;
  reply.lease_ms = static_cast<uint32_t>(
      std::min<uint64_t>(read.budget_ms + ToMs(options_.timeout), UINT32_MAX));
  leases_.emplace(reply.lease_id, StagingLease{std::move(ranges), expires});
  next_expiry_ = std::min(next_expiry_, expires);
}

void UcxSegmentServer::PutValues(const SsdReadRequest& request,
                                 std::span<const std::byte> staging,
                                 std::vector<Result<uint64_t>>& results,
                                 Clock::time_point deadline) {
  const size_t n = request.ops.size();
  const std::string& address = request.header.reply_address;
  UcxRequestBatch batch(n + 1);
  std::vector<size_t> slot_of(n, UcxRequestBatch::kNoSlot);
  std::vector<ucp_rkey_h> rkeys(n, nullptr);
  size_t flush_slot = UcxRequestBatch::kNoSlot;
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
  if (flush_slot == UcxRequestBatch::kNoSlot) return;
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
    if (slot_of[i] == UcxRequestBatch::kNoSlot) continue;
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
