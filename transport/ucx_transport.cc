#include "transport/ucx_transport.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <utility>

#include "transport/shm_locator.h"
#include "transport/ucx_registered_memory.h"
#include "transport/ucx_status.h"

namespace mooncake_tier {
namespace {

using Clock = UcxRequestBatch::Clock;

Status ValidateTransfer(const SegmentTransfer& op) {
  if (op.segment == nullptr) {
    return Status(ErrorReason::kInvalidArgument, "transfer without a segment");
  }
  const SegmentEndpoint& segment = *op.segment;
  if (segment.transport_address.empty() || segment.remote_key.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "segment endpoint lacks a transport address or remote key");
  }
  if (segment.base > std::numeric_limits<uint64_t>::max() - segment.size) {
    return Status(ErrorReason::kInvalidArgument,
                  "segment endpoint wraps the address space");
  }
  const uint64_t length = op.local.size();
  if (op.offset > segment.size || length > segment.size - op.offset) {
    return Status(ErrorReason::kInvalidArgument,
                  "transfer of " + std::to_string(length) +
                      " bytes at offset " + std::to_string(op.offset) +
                      " is outside the node's segment of " +
                      std::to_string(segment.size) + " bytes");
  }
  if (length > 0 && op.local.data() == nullptr) {
    return Status(ErrorReason::kInvalidArgument, "null local buffer");
  }
  return Status();
}

// A put completes locally; a flush of its endpoint completes once the bytes
// are in the node's memory. Issues one flush per endpoint used and records
// which flush covers each transfer. REQUIRES: the worker mutex held.
void IssueFlushes(const std::vector<ucp_ep_h>& ep_of,
                  const std::vector<size_t>& slot_of, UcxRequestBatch& batch,
                  std::vector<size_t>& flush_of) {
  absl::flat_hash_map<ucp_ep_h, size_t> flush_slot;
  for (size_t i = 0; i < ep_of.size(); ++i) {
    if (slot_of[i] == UcxRequestBatch::kNoSlot) continue;
    auto [it, inserted] =
        flush_slot.try_emplace(ep_of[i], UcxRequestBatch::kNoSlot);
    if (inserted) {
      it->second = batch.AddSlot();
      const ucp_request_param_t param = batch.Param(it->second);
      batch.Track(it->second, ucp_ep_flush_nbx(ep_of[i], &param));
    }
    flush_of[i] = it->second;
  }
}

}  // namespace

Result<std::unique_ptr<UcxTransport>> UcxTransport::Create(
    UcxTransportOptions options) {
  if (options.timeout.count() <= 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "UCX transport timeout must be positive");
  }
  if (options.max_shared_mappings < 1) {
    return Status(ErrorReason::kInvalidArgument,
                  "max_shared_mappings must be at least 1");
  }
  std::unique_ptr<UcxTransport> transport(new UcxTransport(std::move(options)));
  MT_RETURN_IF_ERROR(transport->Init());
  return transport;
}

UcxTransport::UcxTransport(UcxTransportOptions options)
    : options_(std::move(options)) {
  if (options_.shared_memory) {
    shm_ = std::make_unique<ShmMappingCache>(options_.max_shared_mappings);
  }
}

Status UcxTransport::Init() {
  MT_ASSIGN_OR_RETURN(context_, UcxContext::Create(options_.transports));
  buffers_ = std::make_unique<UcxBufferRegistry>(context_->handle());
  MT_ASSIGN_OR_RETURN(worker_, UcxWorker::Create(context_->handle(), &ucx_mu_));
  MutexLock lock(&ucx_mu_);
  peers_ = std::make_unique<UcxPeerCache>(
      worker_->handle(), options_.failed_peer_retry,
      [this](const std::string& address, ucs_status_t status) {
        ucx_mu_.AssertHeld();  // UCX error callbacks run under it.
        FailSsdReads(address, status);
      });
  return SetAmHandler(worker_->handle(), kSsdReadReplyAmId,
                      &UcxTransport::OnSsdReply, this,
                      "SSD read reply handler");
}

UcxTransport::~UcxTransport() {
  if (worker_ != nullptr) worker_->Stop();
  {
    MutexLock lock(&ucx_mu_);
    if (peers_ != nullptr) {
      peers_->CloseAll();
      worker_->ProgressOnce();
    }
    peers_.reset();
  }
  worker_.reset();
  buffers_.reset();
  context_.reset();
  shm_.reset();  // unmaps every node segment
}

Status UcxTransport::RegisterBuffer(std::span<std::byte> buffer) {
  return buffers_->Register(buffer);
}

Status UcxTransport::UnregisterBuffer(std::span<std::byte> buffer) {
  return buffers_->Unregister(buffer);
}

uint64_t UcxTransport::dropped_replies() const {
  MutexLock lock(&ucx_mu_);
  return dropped_replies_;
}

UcxTransportStats UcxTransport::stats() const {
  UcxTransportStats out;
  out.shm_writes = shm_writes_.load(std::memory_order_relaxed);
  out.shm_reads = shm_reads_.load(std::memory_order_relaxed);
  out.shm_bytes = shm_bytes_.load(std::memory_order_relaxed);
  out.ucx_transfers = ucx_transfers_.load(std::memory_order_relaxed);
  out.ssd_staged_requests =
      ssd_staged_requests_.load(std::memory_order_relaxed);
  out.ssd_staged_bytes = ssd_staged_bytes_.load(std::memory_order_relaxed);
  out.ssd_staging_fallbacks =
      ssd_staging_fallbacks_.load(std::memory_order_relaxed);
  out.ssd_ucx_requests = ssd_ucx_requests_.load(std::memory_order_relaxed);
  if (shm_ != nullptr) out.shm = shm_->stats();
  return out;
}

std::vector<Status> UcxTransport::Write(std::span<const SegmentTransfer> ops) {
  return Transfer<true>(ops);
}

std::vector<Status> UcxTransport::Read(std::span<const SegmentTransfer> ops) {
  return Transfer<false>(ops);
}

template <bool kWrite>
std::vector<Status> UcxTransport::Transfer(
    std::span<const SegmentTransfer> ops) {
  const auto deadline = Clock::now() + options_.timeout;
  std::vector<Status> out(ops.size());
  TransferRoutes routes = RouteTransfers(ops, out);
  if (!routes.shared.empty()) {
    CopyShared<kWrite>(ops, routes.shared, routes.mapping_of, out);
  }
  if (routes.ucx_count == 0) return out;
  ucx_transfers_.fetch_add(routes.ucx_count, std::memory_order_relaxed);
  // A write needs at most one flush per operation on top of the puts.
  UcxRequestBatch batch(kWrite ? 2 * routes.ucx_count : routes.ucx_count);
  UcxTransfers posted(ops.size());
  // Registered buffers the operations come from, held until they finish.
  for (size_t i = 0; i < ops.size(); ++i) {
    if (routes.via_ucx[i]) {
      posted.registered[i] =
          buffers_->Find(ops[i].local.data(), ops[i].local.size());
    }
  }
  PostUcxTransfers<kWrite>(ops, routes, batch, posted, out);
  CollectUcxTransfers(ops, batch, posted, deadline,
                      kWrite ? "writing to node" : "reading from node", out);
  return out;
}

UcxTransport::TransferRoutes UcxTransport::RouteTransfers(
    std::span<const SegmentTransfer> ops, std::vector<Status>& out) {
  TransferRoutes routes;
  routes.ucx_key.resize(ops.size());
  routes.via_ucx.assign(ops.size(), 0);
  routes.mapping_of.resize(ops.size());
  if (shm_ != nullptr) shm_->SweepIfDue();
  for (size_t i = 0; i < ops.size(); ++i) {
    const SegmentTransfer& op = ops[i];
    out[i] = ValidateTransfer(op);
    if (!out[i].ok() || op.local.empty()) continue;
    Result<DecodedRemoteKey> key = DecodeRemoteKey(op.segment->remote_key);
    if (!key.ok()) {
      out[i] = key.status();
      continue;
    }
    routes.ucx_key[i] = key->ucx_key;
    if (shm_ != nullptr && key->locator.has_value()) {
      ShmMappingCache::Found found = shm_->Find(*op.segment, *key->locator);
      if (found.mapping != nullptr &&
          op.offset + op.local.size() <= found.mapping->segment_size()) {
        routes.mapping_of[i] = std::move(found.mapping);
        routes.shared.push_back(i);
        continue;
      }
      if (found.gone) {
        out[i] = SegmentGone();
        continue;
      }
    }
    routes.via_ucx[i] = 1;
    ++routes.ucx_count;
  }
  return routes;
}

template <bool kWrite>
void UcxTransport::PostUcxTransfers(std::span<const SegmentTransfer> ops,
                                    const TransferRoutes& routes,
                                    UcxRequestBatch& batch,
                                    UcxTransfers& posted,
                                    std::vector<Status>& out) {
  MutexLock lock(&ucx_mu_);
  std::vector<ucp_ep_h> ep_of(ops.size(), nullptr);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!routes.via_ucx[i]) continue;
    const SegmentTransfer& op = ops[i];
    const SegmentEndpoint& segment = *op.segment;
    Result<ucp_ep_h> ep = peers_->Endpoint(segment.transport_address);
    if (!ep.ok()) {
      out[i] = ep.status();
      continue;
    }
    Result<ucp_rkey_h> rkey = peers_->RemoteKey(segment.transport_address,
                                                std::string(routes.ucx_key[i]));
    if (!rkey.ok()) {
      out[i] = rkey.status();
      continue;
    }
    const size_t slot = batch.AddSlot();
    ucp_request_param_t param = batch.Param(slot);
    if (posted.registered[i] != nullptr) {
      param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
      param.memh = posted.registered[i]->handle();
    }
    const uint64_t remote = segment.base + op.offset;
    ucs_status_ptr_t request;
    if constexpr (kWrite) {
      request = ucp_put_nbx(*ep, op.local.data(), op.local.size(), remote,
                            *rkey, &param);
    } else {
      request = ucp_get_nbx(*ep, op.local.data(), op.local.size(), remote,
                            *rkey, &param);
    }
    batch.Track(slot, request);
    posted.slot_of[i] = slot;
    ep_of[i] = *ep;
  }
  if constexpr (kWrite)
    IssueFlushes(ep_of, posted.slot_of, batch, posted.flush_of);
  worker_->Signal();
}

void UcxTransport::CollectUcxTransfers(std::span<const SegmentTransfer> ops,
                                       UcxRequestBatch& batch,
                                       const UcxTransfers& posted,
                                       Clock::time_point deadline,
                                       const char* what,
                                       std::vector<Status>& out) {
  const bool all_done = batch.WaitUntil(deadline);
  {
    MutexLock lock(&ucx_mu_);
    if (!all_done) {
      // Force-closing cancels what is still in flight, so nothing touches
      // the caller's buffers after we return.
      for (size_t i = 0; i < ops.size(); ++i) {
        if (posted.slot_of[i] == UcxRequestBatch::kNoSlot) continue;
        if (!batch.done(posted.slot_of[i]) ||
            (posted.flush_of[i] != UcxRequestBatch::kNoSlot &&
             !batch.done(posted.flush_of[i]))) {
          peers_->Drop(ops[i].segment->transport_address);
        }
      }
    }
    batch.Finish();
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (posted.slot_of[i] == UcxRequestBatch::kNoSlot) continue;
    ucs_status_t status = batch.status(posted.slot_of[i]);
    if (status == UCS_OK && posted.flush_of[i] != UcxRequestBatch::kNoSlot) {
      status = batch.status(posted.flush_of[i]);
    }
    if (status == UCS_OK) continue;
    out[i] = status == UCS_ERR_TIMED_OUT ? NodeTimedOut(options_.timeout, what)
                                         : UcxError(status, what);
  }
}

template <bool kWrite>
void UcxTransport::CopyShared(
    std::span<const SegmentTransfer> ops, const std::vector<size_t>& indices,
    const std::vector<std::shared_ptr<const ShmMapping>>& mappings,
    std::vector<Status>& out) {
  // The distinct segments of this call, each checked once before and once
  // after the copies: a segment the node stopped exporting (withdrawn, or
  // the node died) fails its operations, even if its bytes were copied.
  std::vector<const ShmMapping*> distinct;
  std::vector<const SegmentEndpoint*> endpoint_of;
  std::vector<char> alive;
  auto index_of = [&](const ShmMapping* m) {
    return static_cast<size_t>(std::find(distinct.begin(), distinct.end(), m) -
                               distinct.begin());
  };
  for (size_t i : indices) {
    if (index_of(mappings[i].get()) == distinct.size()) {
      distinct.push_back(mappings[i].get());
      endpoint_of.push_back(ops[i].segment);
    }
  }
  auto check = [&](size_t d) {
    Result<bool> exported = distinct[d]->IsExported();
    if (exported.ok() && *exported) return true;
    shm_->MarkGone(*endpoint_of[d]);
    return false;
  };
  alive.resize(distinct.size());
  for (size_t d = 0; d < distinct.size(); ++d) alive[d] = check(d);
  uint64_t bytes = 0;
  for (size_t i : indices) {
    const SegmentTransfer& op = ops[i];
    if (!alive[index_of(mappings[i].get())]) continue;
    std::byte* remote = mappings[i]->segment() + op.offset;
    if constexpr (kWrite) {
      std::memcpy(remote, op.local.data(), op.local.size());
    } else {
      std::memcpy(op.local.data(), remote, op.local.size());
    }
    bytes += op.local.size();
  }
  for (size_t d = 0; d < distinct.size(); ++d) {
    if (alive[d]) alive[d] = check(d);
  }
  uint64_t done = 0;
  for (size_t i : indices) {
    if (alive[index_of(mappings[i].get())]) {
      ++done;
    } else {
      out[i] = SegmentGone();
    }
  }
  (kWrite ? shm_writes_ : shm_reads_)
      .fetch_add(done, std::memory_order_relaxed);
  shm_bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace mooncake_tier
