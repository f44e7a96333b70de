// UcxTransport's reads of SSD copies (transport/ucx_transport.h ReadSsd):
// a request to the holding node over UCX active messages, the value staged
// in the node's shared memory when this host maps it (copied out, then the
// staging released), else put by the node straight into the caller's
// buffer; replies are matched to their waiting call by request id.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "transport/shm_locator.h"
#include "transport/ucx_registered_memory.h"
#include "transport/ucx_status.h"
#include "transport/ucx_transport.h"

namespace mooncake_tier {
namespace {

using SsdClock = UcxRequestBatch::Clock;
// Longest a staged read waits for its release to leave; past it the
// endpoint is dropped (the node's lease frees the ranges instead).
constexpr std::chrono::milliseconds kReleaseWait{100};
// Nodes remembered as having no staging area, at most.
constexpr size_t kMaxNoStagingNodes = 1024;

}  // namespace

std::vector<Result<uint64_t>> UcxTransport::ReadSsd(
    const SegmentEndpoint& node, std::span<const SsdReadTransfer> ops) {
  const auto deadline = SsdClock::now() + options_.timeout;
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
                                 SsdClock::time_point deadline,
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
  SsdClock::time_point sent_at;
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
                              SsdReadReply& reply, SsdClock::time_point sent_at,
                              SsdClock::time_point deadline,
                              std::vector<Result<uint64_t>>& out) {
  const uint64_t reachable = mapping.reachable_size();
  // The node keeps the ranges for lease_ms after it received the request,
  // which is after sent_at: copies that end before lease_end read ranges
  // nobody else was given meanwhile.
  const SsdClock::time_point lease_end =
      sent_at + std::chrono::milliseconds(reply.lease_ms);
  const SsdClock::time_point copy_until = std::min(deadline, lease_end);
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
    } else if (SsdClock::now() >= copy_until) {
      out[i] =
          NodeTimedOut(options_.timeout, "SSD read (copying staged values)");
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
    } else if (SsdClock::now() >= lease_end) {
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
  batch.WaitUntil(SsdClock::now() + kReleaseWait);
  MutexLock lock(&ucx_mu_);
  // Still queued: closing cancels it, so `payload` may go; the node frees
  // the ranges when the lease ends.
  if (!batch.done(slot)) peers_->Drop(node_address);
  batch.Finish();
}

void UcxTransport::ReadSsdUnstaged(const std::string& node_address,
                                   std::span<const SsdReadTransfer> ops,
                                   SsdClock::time_point deadline,
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
    SsdClock::time_point deadline, SsdClock::time_point* sent_at) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  // Before the send: the node receives the request later than this.
  const SsdClock::time_point now = SsdClock::now();
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
  if (!reply.has_value()) return NodeTimedOut(options_.timeout, "SSD read");
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
