#include "rpc/control_lane_client.h"

#include <poll.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "rpc/control_lane_messages.h"
#include "transport/ucx_status.h"

namespace mooncake_tier::rpc {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Rounds given to UCX to finish a forced close or cancelled sends.
constexpr int kMaxDrainRounds = 10'000;
// The longest one sleep on the event descriptor: another caller may have
// taken the event that was this caller's answer.
constexpr auto kMaxSleep = std::chrono::milliseconds(1);

Status NotConnected() {
  return Status(ErrorReason::kUnavailable, "control lane is not connected");
}

}  // namespace

Result<std::unique_ptr<ControlLaneClient>> ControlLaneClient::Create(
    const std::string& transports, Duration spin) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<UcxContext> context,
                      UcxContext::Create(transports));
  std::unique_ptr<ControlLaneClient> client(
      new ControlLaneClient(std::move(context), spin));
  MT_ASSIGN_OR_RETURN(
      client->worker_,
      UcxWorker::CreateDriven(client->context_->handle(), &client->mu_));
  MutexLock lock(&client->mu_);
  MT_RETURN_IF_ERROR(SetAmHandler(client->worker_->handle(),
                                  kControlLaneReplyAmId,
                                  &ControlLaneClient::OnReply, client.get(),
                                  "control lane's reply handler"));
  return client;
}

ControlLaneClient::ControlLaneClient(std::unique_ptr<UcxContext> context,
                                     Duration spin)
    : context_(std::move(context)), spin_(spin) {}

ControlLaneClient::~ControlLaneClient() {
  if (worker_ == nullptr) return;  // Create failed before the worker
  {
    MutexLock lock(&mu_);
    FailAll(Status(ErrorReason::kUnavailable, "control lane closed"));
    CloseEndpoint();  // ends the sends still in flight
    for (int i = 0; i < kMaxDrainRounds && !abandoned_.empty(); ++i) {
      ucp_worker_progress(worker());
      ReapAbandoned();
    }
    // Any UCX did not finish is released with the worker; its buffer
    // outlives the worker.
    for (Abandoned& a : abandoned_) ucp_request_free(a.request);
  }
  worker_.reset();
}

Status ControlLaneClient::Connect(const std::string& address) {
  MutexLock lock(&mu_);
  FailAll(Status(ErrorReason::kUnavailable, "control lane reconnecting"));
  CloseEndpoint();
  Result<ucp_ep_h> ep = ConnectPeer(
      worker(), address, &ControlLaneClient::OnError, this, "the control lane");
  if (!ep.ok()) {
    return Status(ErrorReason::kUnavailable, ep.status().message());
  }
  ep_ = *ep;
  failed_ = false;
  return Status::Ok();
}

void ControlLaneClient::Disconnect() {
  MutexLock lock(&mu_);
  FailAll(Status(ErrorReason::kUnavailable, "control lane closed"));
  CloseEndpoint();
}

bool ControlLaneClient::connected() const {
  MutexLock lock(&mu_);
  return ep_ != nullptr && !failed_;
}

ControlLaneClientStats ControlLaneClient::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

void ControlLaneClient::FailAll(const Status& why) {
  for (auto& [id, pending] : pending_) {
    pending->done = true;
    pending->status = why;
  }
  pending_.clear();
}

void ControlLaneClient::CloseEndpoint() {
  if (ep_ == nullptr) return;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t request = ucp_ep_close_nbx(ep_, &param);
  ep_ = nullptr;
  failed_ = false;
  if (!UCS_PTR_IS_PTR(request)) return;
  for (int i = 0; i < kMaxDrainRounds &&
                  ucp_request_check_status(request) == UCS_INPROGRESS;
       ++i) {
    ucp_worker_progress(worker());
  }
  if (ucp_request_check_status(request) != UCS_INPROGRESS) {
    ucp_request_free(request);
  }
}

void ControlLaneClient::ReapAbandoned() {
  std::erase_if(abandoned_, [](const Abandoned& a) {
    if (ucp_request_check_status(a.request) == UCS_INPROGRESS) return false;
    ucp_request_free(a.request);
    return true;
  });
}

ucs_status_t ControlLaneClient::OnReply(void* arg, const void* header,
                                        size_t header_length, void* data,
                                        size_t length,
                                        const ucp_am_recv_param_t* param) {
  ControlLaneClient* self = static_cast<ControlLaneClient*>(arg);
  // Runs inside ucp_worker_progress, which callers run under mu_.
  self->mu_.AssertHeld();
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
    ++self->stats_.malformed_replies;
    return UCS_ERR_UNSUPPORTED;
  }
  Result<ControlLaneReply> reply = DecodeControlLaneReply(
      std::string_view(static_cast<const char*>(data), length));
  if (!reply.ok()) {
    ++self->stats_.malformed_replies;
    return UCS_OK;
  }
  auto it = self->pending_.find(reply->request_id);
  if (it == self->pending_.end()) {
    ++self->stats_.late_replies;
    return UCS_OK;
  }
  Pending* pending = it->second;
  self->pending_.erase(it);
  pending->done = true;
  pending->status = std::move(reply->status);
  pending->payload.assign(reply->payload);
  return UCS_OK;
}

void ControlLaneClient::OnError(void* arg, ucp_ep_h ep, ucs_status_t status) {
  ControlLaneClient* self = static_cast<ControlLaneClient*>(arg);
  self->mu_.AssertHeld();       // errors are reported from progress, under mu_
  if (ep != self->ep_) return;  // an endpoint closed already
  self->failed_ = true;
  ++self->stats_.failures;
  // Closed by the next Connect (not from inside UCX's callback).
  self->FailAll(
      Status(ErrorReason::kUnavailable,
             UcxError(status, "control lane endpoint failed").message()));
}

Result<std::string> ControlLaneClient::Call(uint32_t method,
                                            std::string_view request,
                                            Duration timeout) {
  Pending pending;
  mu_.Lock();
  ReapAbandoned();
  if (ep_ == nullptr || failed_) {
    mu_.Unlock();
    return NotConnected();
  }
  const uint64_t id = next_id_++;
  auto message = std::make_unique<std::string>(
      EncodeControlLaneRequest(method, id, request));
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY;
  ucs_status_ptr_t send =
      ucp_am_send_nbx(ep_, kControlLaneRequestAmId, nullptr, 0, message->data(),
                      message->size(), &param);
  if (UCS_PTR_IS_ERR(send)) {
    failed_ = true;
    ++stats_.failures;
    mu_.Unlock();
    return Status(ErrorReason::kUnavailable,
                  UcxError(UCS_PTR_STATUS(send), "sending on the control lane")
                      .message());
  }
  ++stats_.calls;
  pending_[id] = &pending;
  const auto start = SteadyClock::now();
  const auto deadline =
      start + std::chrono::duration_cast<SteadyClock::duration>(timeout);
  const auto spin_until =
      start + std::chrono::duration_cast<SteadyClock::duration>(spin_);
  while (true) {
    if (send != nullptr && ucp_request_check_status(send) != UCS_INPROGRESS) {
      const ucs_status_t sent = ucp_request_check_status(send);
      ucp_request_free(send);
      send = nullptr;
      if (sent != UCS_OK && !pending.done) {
        pending_.erase(id);
        pending.done = true;
        pending.status =
            Status(ErrorReason::kUnavailable,
                   UcxError(sent, "sending on the control lane").message());
      }
    }
    if (pending.done) break;
    const unsigned events = ucp_worker_progress(worker());
    const auto now = SteadyClock::now();
    if (now >= deadline) {
      pending_.erase(id);
      ++stats_.timeouts;
      pending.done = true;
      const std::string waited =
          std::to_string(
              std::chrono::duration_cast<std::chrono::milliseconds>(timeout)
                  .count()) +
          " ms";
      // A request that never left (the lane is unreachable) is not a slow
      // master: the caller may send it another way.
      pending.status =
          send != nullptr
              ? Status(
                    ErrorReason::kUnavailable,
                    "the control lane did not take a request within " + waited)
              : Status(ErrorReason::kTimeout,
                       "no answer on the control lane within " + waited);
      break;
    }
    if (events != 0) continue;
    if (now < spin_until) {
      // Let other callers (and their answers) in between rounds.
      mu_.Unlock();
      std::this_thread::yield();
      mu_.Lock();
      continue;
    }
    // Arming fails with BUSY while events are pending: go round again.
    if (ucp_worker_arm(worker()) == UCS_ERR_BUSY) continue;
    const auto left =
        std::min<SteadyClock::duration>(deadline - now, kMaxSleep);
    mu_.Unlock();
    pollfd fd{worker_->event_fd(), POLLIN, 0};
    poll(&fd, 1,
         std::max<int>(
             1, static_cast<int>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(left)
                        .count())));
    mu_.Lock();
  }
  if (send != nullptr) {
    // Given up on while in flight: UCX keeps the buffer until it is done,
    // and only closing the endpoint ends a send (UCX cannot cancel one).
    // The other calls on it fail UNAVAILABLE; the lane reconnects later.
    abandoned_.push_back(Abandoned{std::move(message), send});
    FailAll(Status(ErrorReason::kUnavailable,
                   "control lane closed after a send that did not complete"));
    CloseEndpoint();
    ReapAbandoned();
  } else if (pending.status.reason() == ErrorReason::kTimeout) {
    // The master does not answer on this endpoint: a fresh one next time.
    FailAll(Status(ErrorReason::kUnavailable,
                   "control lane closed after an unanswered call"));
    CloseEndpoint();
  }
  mu_.Unlock();
  if (!pending.status.ok()) return pending.status;
  return std::move(pending.payload);
}

}  // namespace mooncake_tier::rpc
