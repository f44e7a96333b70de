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
// Longest a staged read waits for its release to leave; past it the
// endpoint is dropped (the node's lease frees the ranges instead).
constexpr std::chrono::milliseconds kReleaseWait{100};
// Nodes remembered as having no staging area, at most.
constexpr size_t kMaxNoStagingNodes = 1024;

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

Status SegmentGone() {
  return Status(ErrorReason::kUnavailable,
                "the node no longer exports this segment (it exited or "
                "withdrew it)");
}

Status TimedOut(std::chrono::milliseconds timeout, std::string_view what) {
  return Status(ErrorReason::kTimeout,
                std::string(what) + ": no answer from node within " +
                    std::to_string(timeout.count()) + " ms");
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
  // Per operation: the UCX key inside its remote key, and whether UCX
  // carries it (the rest are done, failed or copied through shared memory).
  std::vector<std::string_view> ucx_key(ops.size());
  std::vector<char> via_ucx(ops.size(), 0);
  std::vector<size_t> shared;
  std::vector<std::shared_ptr<const ShmMapping>> mapping_of(ops.size());
  size_t ucx_count = 0;
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
    ucx_key[i] = key->ucx_key;
    if (shm_ != nullptr && key->locator.has_value()) {
      ShmMappingCache::Found found = shm_->Find(*op.segment, *key->locator);
      if (found.mapping != nullptr &&
          op.offset + op.local.size() <= found.mapping->segment_size()) {
        mapping_of[i] = std::move(found.mapping);
        shared.push_back(i);
        continue;
      }
      if (found.gone) {
        out[i] = SegmentGone();
        continue;
      }
    }
    via_ucx[i] = 1;
    ++ucx_count;
  }
  if (!shared.empty()) CopyShared<kWrite>(ops, shared, mapping_of, out);
  if (ucx_count == 0) return out;
  ucx_transfers_.fetch_add(ucx_count, std::memory_order_relaxed);
  std::vector<size_t> slot_of(ops.size(), UcxRequestBatch::kNoSlot);
  std::vector<size_t> flush_of(ops.size(), UcxRequestBatch::kNoSlot);
  // A write needs at most one flush per operation on top of the puts.
  UcxRequestBatch batch(kWrite ? 2 * ucx_count : ucx_count);
  // Registered buffers the operations come from, held until they finish.
  std::vector<std::shared_ptr<const UcxRegisteredMemory>> registered(
      ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    if (via_ucx[i]) {
      registered[i] = buffers_->Find(ops[i].local.data(), ops[i].local.size());
    }
  }
  {
    MutexLock lock(&ucx_mu_);
    std::vector<ucp_ep_h> ep_of(ops.size(), nullptr);
    for (size_t i = 0; i < ops.size(); ++i) {
      if (!via_ucx[i]) continue;
      const SegmentTransfer& op = ops[i];
      const SegmentEndpoint& segment = *op.segment;
      Result<ucp_ep_h> ep = peers_->Endpoint(segment.transport_address);
      if (!ep.ok()) {
        out[i] = ep.status();
        continue;
      }
      Result<ucp_rkey_h> rkey =
          peers_->RemoteKey(segment.transport_address, std::string(ucx_key[i]));
      if (!rkey.ok()) {
        out[i] = rkey.status();
        continue;
      }
      const size_t slot = batch.AddSlot();
      ucp_request_param_t param = batch.Param(slot);
      if (registered[i] != nullptr) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
        param.memh = registered[i]->handle();
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
      slot_of[i] = slot;
      ep_of[i] = *ep;
    }
    if constexpr (kWrite) IssueFlushes(ep_of, slot_of, batch, flush_of);
    worker_->Signal();
  }
  const bool all_done = batch.WaitUntil(deadline);
  {
    MutexLock lock(&ucx_mu_);
    if (!all_done) {
      // Force-closing cancels what is still in flight, so nothing touches
      // the caller's buffers after we return.
      for (size_t i = 0; i < ops.size(); ++i) {
        if (slot_of[i] == UcxRequestBatch::kNoSlot) continue;
        if (!batch.done(slot_of[i]) ||
            (flush_of[i] != UcxRequestBatch::kNoSlot &&
             !batch.done(flush_of[i]))) {
          peers_->Drop(ops[i].segment->transport_address);
        }
      }
    }
    batch.Finish();
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (slot_of[i] == UcxRequestBatch::kNoSlot) continue;
    ucs_status_t status = batch.status(slot_of[i]);
    if (status == UCS_OK && flush_of[i] != UcxRequestBatch::kNoSlot) {
      status = batch.status(flush_of[i]);
    }
    if (status == UCS_OK) continue;
    const char* what = kWrite ? "writing to node" : "reading from node";
    out[i] = status == UCS_ERR_TIMED_OUT ? TimedOut(options_.timeout, what)
                                         : UcxError(status, what);
  }
  return out;
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

std::vector<Result<uint64_t>> UcxTransport::ReadSsd(
    const SegmentEndpoint& node, std::span<const SsdReadTransfer> ops) {
  const auto deadline = Clock::now() + options_.timeout;
  std::vector<Result<uint64_t>> out(
      ops.size(), Status(ErrorReason::kInternal, "SSD read not attempted"));
  if (node.transport_address.empty() || ops.size() > kMaxSsdReadOps) {
    const Status invalid(ErrorReason::kInvalidArgument,
                         node.transport_address.empty()
                             ? "empty node address"
                             : "too many keys in one SSD read batch");
    std::fill(out.begin(), out.end(), Result<uint64_t>(invalid));
    return out;
  }
  if (shm_ != nullptr) {
    std::shared_ptr<const ShmMapping> mapping = StagingMapping(node);
    if (mapping != nullptr &&
        ReadSsdStaged(node, *mapping, ops, deadline, out)) {
      return out;
    }
  }
  ReadSsdUnstaged(node.transport_address, ops, deadline, out);
  return out;
}

std::shared_ptr<const ShmMapping> UcxTransport::StagingMapping(
    const SegmentEndpoint& node) {
  Result<DecodedRemoteKey> key = DecodeRemoteKey(node.remote_key);
  if (!key.ok() || !key->locator.has_value()) return nullptr;
  {
    MutexLock lock(&no_staging_mu_);
    if (no_staging_.contains(node.remote_key)) return nullptr;
  }
  shm_->SweepIfDue();
  ShmMappingCache::Found found = shm_->Find(node, *key->locator);
  if (found.mapping == nullptr ||
      found.mapping->reachable_size() <= node.size) {
    return nullptr;  // another host, not mappable, gone, or no staging area
  }
  return std::move(found.mapping);
}

bool UcxTransport::ReadSsdStaged(const SegmentEndpoint& node,
                                 const ShmMapping& mapping,
                                 std::span<const SsdReadTransfer> ops,
                                 Clock::time_point deadline,
                                 std::vector<Result<uint64_t>>& out) {
  const uint64_t reachable = mapping.reachable_size();
  SsdReadRequest request;
  request.header.flags = kSsdReadFlagStaged;
  std::vector<size_t> sent;
  uint64_t needed = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const SsdReadTransfer& op = ops[i];
    if (op.key.empty() || op.key.size() > kMaxSsdReadKeyBytes) {
      out[i] = Status(ErrorReason::kInvalidKey, "key must be 1..1024 bytes");
      continue;
    }
    request.ops.push_back({std::string(op.key), op.buffer.size(), 0, {}});
    sent.push_back(i);
    needed += (op.buffer.size() + kSsdReadStagingAlignment - 1) /
              kSsdReadStagingAlignment * kSsdReadStagingAlignment;
  }
  if (sent.empty()) return true;
  if (needed > reachable - node.size) {
    // Larger than the whole area: the node would refuse it.
    ssd_staging_fallbacks_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  Clock::time_point sent_at;
  Result<SsdReadReply> reply =
      ExchangeSsdRead(node.transport_address, request, deadline, &sent_at);
  if (reply.ok() && reply->staging_refused) {
    ssd_staging_fallbacks_.fetch_add(1, std::memory_order_relaxed);
    if (reply->status.reason() == ErrorReason::kNotApplicable) {
      MutexLock lock(&no_staging_mu_);
      if (no_staging_.size() >= kMaxNoStagingNodes) no_staging_.clear();
      no_staging_.insert(node.remote_key);
    }
    return false;
  }
  const uint64_t lease_id = reply.ok() ? reply->lease_id : 0;
  if (!reply.ok() || !reply->status.ok() || !reply->staged ||
      reply->results.size() != sent.size() ||
      reply->offsets.size() != sent.size()) {
    Status failed = !reply.ok()           ? reply.status()
                    : !reply->status.ok() ? reply->status
                                          : Status(ErrorReason::kInternal,
                                                   "node answered a staged SSD "
                                                   "read with another shape");
    for (size_t i : sent) out[i] = failed;
    if (lease_id != 0) ReleaseStaging(node.transport_address, lease_id);
    return true;
  }
  ssd_staged_requests_.fetch_add(1, std::memory_order_relaxed);
  CopyStaged(node, mapping, ops, sent, *reply, sent_at, deadline, out);
  if (lease_id != 0) ReleaseStaging(node.transport_address, lease_id);
  return true;
}

void UcxTransport::CopyStaged(const SegmentEndpoint& node,
                              const ShmMapping& mapping,
                              std::span<const SsdReadTransfer> ops,
                              const std::vector<size_t>& sent,
                              SsdReadReply& reply, Clock::time_point sent_at,
                              Clock::time_point deadline,
                              std::vector<Result<uint64_t>>& out) {
  const uint64_t reachable = mapping.reachable_size();
  // The node keeps the ranges for lease_ms after it received the request,
  // which is after sent_at: copies that end before lease_end read ranges
  // nobody else was given meanwhile.
  const Clock::time_point lease_end =
      sent_at + std::chrono::milliseconds(reply.lease_ms);
  const Clock::time_point copy_until = std::min(deadline, lease_end);
  Result<bool> exported = mapping.IsExported();
  const bool alive = exported.ok() && *exported;
  std::vector<size_t> copied;
  uint64_t bytes = 0;
  for (size_t k = 0; k < sent.size(); ++k) {
    const size_t i = sent[k];
    Result<uint64_t>& result = reply.results[k];
    if (!result.ok()) {
      out[i] = std::move(result);
      continue;
    }
    const uint64_t size = *result;
    const uint64_t offset = reply.offsets[k];
    if (size > ops[i].buffer.size()) {
      out[i] = Status(ErrorReason::kInternal,
                      "node reported more bytes than the buffer holds");
    } else if (size == 0) {
      out[i] = size;
    } else if (offset < node.size || offset > reachable ||
               size > reachable - offset) {
      out[i] = Status(ErrorReason::kInternal,
                      "node named a staging range outside its staging area");
    } else if (!alive) {
      out[i] = SegmentGone();
    } else if (Clock::now() >= copy_until) {
      out[i] = TimedOut(options_.timeout, "SSD read (copying staged values)");
    } else {
      std::memcpy(ops[i].buffer.data(), mapping.segment() + offset, size);
      out[i] = size;
      copied.push_back(i);
      bytes += size;
    }
  }
  if (!alive) shm_->MarkGone(node);
  if (!copied.empty()) {
    exported = mapping.IsExported();
    Status failed;
    if (!exported.ok() || !*exported) {
      shm_->MarkGone(node);
      failed = SegmentGone();
    } else if (Clock::now() >= lease_end) {
      // The node may have handed the ranges to another request meanwhile.
      failed = Status(ErrorReason::kTimeout,
                      "copying staged SSD values outlasted the node's lease");
    }
    if (!failed.ok()) {
      for (size_t i : copied) out[i] = failed;
      bytes = 0;
    }
  }
  ssd_staged_bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

void UcxTransport::ReleaseStaging(const std::string& node_address,
                                  uint64_t lease_id) {
  const std::string payload = EncodeSsdReadRelease(lease_id);
  UcxRequestBatch batch(1);
  const size_t slot = batch.AddSlot();
  {
    MutexLock lock(&ucx_mu_);
    Result<ucp_ep_h> ep = peers_->Endpoint(node_address);
    if (!ep.ok()) return;  // the node is gone or failing: its lease expires
    ucp_request_param_t param = batch.Param(slot);
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_AM_SEND_FLAG_EAGER;
    batch.Track(slot, ucp_am_send_nbx(*ep, kSsdReadReleaseAmId, nullptr, 0,
                                      payload.data(), payload.size(), &param));
    if (batch.done(slot)) {  // sent in place, the usual case
      batch.Finish();
      return;
    }
    worker_->Signal();
  }
  batch.WaitUntil(Clock::now() + kReleaseWait);
  MutexLock lock(&ucx_mu_);
  // Still queued: closing cancels it, so `payload` may go; the node frees
  // the ranges when the lease ends.
  if (!batch.done(slot)) peers_->Drop(node_address);
  batch.Finish();
}

void UcxTransport::ReadSsdUnstaged(const std::string& node_address,
                                   std::span<const SsdReadTransfer> ops,
                                   Clock::time_point deadline,
                                   std::vector<Result<uint64_t>>& out) {
  // The node writes into the caller's buffers: registered buffers are named
  // with their standing key, other memory is registered for this call only
  // (see docs/design/ucx-transport.md).
  SsdReadRequest request;
  std::vector<size_t> sent;
  std::vector<std::shared_ptr<const UcxRegisteredMemory>> registrations;
  for (size_t i = 0; i < ops.size(); ++i) {
    const SsdReadTransfer& op = ops[i];
    if (op.key.empty() || op.key.size() > kMaxSsdReadKeyBytes) {
      out[i] = Status(ErrorReason::kInvalidKey, "key must be 1..1024 bytes");
      continue;
    }
    SsdReadRequestOp request_op;
    request_op.key = std::string(op.key);
    request_op.length = op.buffer.size();
    if (!op.buffer.empty()) {
      std::shared_ptr<const UcxRegisteredMemory> memory =
          buffers_->Find(op.buffer.data(), op.buffer.size());
      if (memory == nullptr) {
        Result<std::unique_ptr<UcxRegisteredMemory>> registered =
            UcxRegisteredMemory::Create(context_->handle(), op.buffer.data(),
                                        op.buffer.size());
        if (!registered.ok()) {
          out[i] = registered.status();
          continue;
        }
        memory = std::move(*registered);
      }
      request_op.address = reinterpret_cast<uint64_t>(op.buffer.data());
      request_op.packed_key = memory->packed_key();
      registrations.push_back(std::move(memory));
    }
    request.ops.push_back(std::move(request_op));
    sent.push_back(i);
  }
  if (sent.empty()) return;
  ssd_ucx_requests_.fetch_add(1, std::memory_order_relaxed);
  Result<SsdReadReply> reply = ExchangeSsdRead(node_address, request, deadline);
  registrations.clear();
  if (!reply.ok() || !reply->status.ok() || reply->staged ||
      reply->results.size() != sent.size()) {
    Status failed = !reply.ok()           ? reply.status()
                    : !reply->status.ok() ? reply->status
                                          : Status(ErrorReason::kInternal,
                                                   "node answered a different "
                                                   "number of SSD reads");
    for (size_t i : sent) out[i] = failed;
    return;
  }
  for (size_t k = 0; k < sent.size(); ++k) {
    Result<uint64_t>& result = reply->results[k];
    if (result.ok() && *result > ops[sent[k]].buffer.size()) {
      out[sent[k]] = Status(ErrorReason::kInternal,
                            "node reported more bytes than the buffer holds");
    } else {
      out[sent[k]] = std::move(result);
    }
  }
}

Result<SsdReadReply> UcxTransport::ExchangeSsdRead(
    const std::string& node_address, SsdReadRequest& request,
    Clock::time_point deadline, Clock::time_point* sent_at) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  // Before the send: the node receives the request later than this.
  const Clock::time_point now = Clock::now();
  if (sent_at != nullptr) *sent_at = now;
  // The node gives up writing a little before we give up waiting.
  const auto remaining = duration_cast<milliseconds>(deadline - now);
  request.header.budget_ms =
      static_cast<uint32_t>(std::max<int64_t>(1, remaining.count() * 3 / 4));
  request.header.reply_address = worker_->address();
  UcxRequestBatch batch(2);
  const size_t send_slot = batch.AddSlot();
  const size_t reply_slot = batch.AddSlot();
  std::string payload;
  uint64_t id = 0;
  {
    MutexLock lock(&ucx_mu_);
    MT_ASSIGN_OR_RETURN(ucp_ep_h ep, peers_->Endpoint(node_address));
    id = next_request_id_++;
    request.header.request_id = id;
    payload = EncodeSsdReadRequest(request);
    pending_ssd_.emplace(
        id, PendingSsdRead{node_address, &batch, reply_slot, std::nullopt});
    ucp_request_param_t param = batch.Param(send_slot);
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_AM_SEND_FLAG_EAGER;
    batch.Track(send_slot,
                ucp_am_send_nbx(ep, kSsdReadRequestAmId, nullptr, 0,
                                payload.data(), payload.size(), &param));
    worker_->Signal();
  }
  batch.WaitUntil(deadline, /*stop_on_error=*/true);
  std::optional<Result<SsdReadReply>> reply;
  {
    MutexLock lock(&ucx_mu_);
    auto it = pending_ssd_.find(id);
    reply = std::move(it->second.reply);
    pending_ssd_.erase(it);
    if (!batch.done(send_slot)) peers_->Drop(node_address);
    batch.Finish();
  }
  const ucs_status_t send_status = batch.status(send_slot);
  if (send_status != UCS_OK && send_status != UCS_ERR_TIMED_OUT) {
    return UcxError(send_status, "sending the SSD read request");
  }
  if (!reply.has_value()) return TimedOut(options_.timeout, "SSD read");
  return std::move(*reply);
}

ucs_status_t UcxTransport::OnSsdReply(void* arg, const void* header,
                                      size_t header_length, void* data,
                                      size_t length,
                                      const ucp_am_recv_param_t* param) {
  UcxTransport* self = static_cast<UcxTransport*>(arg);
  // Runs inside ucp_worker_progress, which runs under ucx_mu_.
  self->ucx_mu_.AssertHeld();
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
    // Replies are sent eagerly; anything else is not ours.
    ++self->dropped_replies_;
    return UCS_ERR_UNSUPPORTED;
  }
  self->DeliverSsdReply(
      std::string_view(static_cast<const char*>(data), length));
  return UCS_OK;
}

void UcxTransport::FailSsdReads(const std::string& node_address,
                                ucs_status_t status) {
  for (auto& [id, pending] : pending_ssd_) {
    if (pending.node_address != node_address || pending.reply.has_value()) {
      continue;
    }
    pending.reply = UcxError(status, "node endpoint failed during SSD read");
    pending.batch->Complete(pending.reply_slot, UCS_OK);
  }
}

void UcxTransport::DeliverSsdReply(std::string_view message) {
  Result<uint64_t> id = DecodeSsdReadReplyId(message);
  auto it = id.ok() ? pending_ssd_.find(*id) : pending_ssd_.end();
  if (it == pending_ssd_.end() || it->second.reply.has_value()) {
    ++dropped_replies_;
    return;
  }
  Result<SsdReadReply> reply = DecodeSsdReadReply(message);
  if (!reply.ok()) {
    reply =
        Status(ErrorReason::kInternal, "node sent a damaged SSD read reply (" +
                                           reply.status().message() + ")");
  }
  it->second.reply = std::move(reply);
  it->second.batch->Complete(it->second.reply_slot, UCS_OK);
}

}  // namespace mooncake_tier
