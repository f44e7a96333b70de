#include "rpc/control_lane_server.h"

#include <utility>

#include "rpc/control_lane_messages.h"

namespace mooncake_tier::rpc {
namespace {

// An answer's header and status beside its payload, at most.
constexpr size_t kReplyOverhead = 2048;

}  // namespace

Result<std::unique_ptr<ControlLaneServer>> ControlLaneServer::Create(
    MasterService* service, ControlLaneServerOptions options) {
  if (options.max_unsent_replies == 0 || options.max_unsent_bytes == 0 ||
      options.max_unsent_replies_per_client == 0 ||
      options.max_unsent_bytes_per_client < kMaxControlLaneBytes) {
    return Status(ErrorReason::kInvalidArgument,
                  "control lane: the unsent-answer limits must be positive "
                  "and a client's bytes at least one message's");
  }
  std::unique_ptr<ControlLaneServer> server(
      new ControlLaneServer(service, std::move(options)));
  MT_RETURN_IF_ERROR(server->Init());
  service->SetControlLane(server->address());
  return server;
}

ControlLaneServer::ControlLaneServer(MasterService* service,
                                     ControlLaneServerOptions options)
    : service_(service), options_(std::move(options)) {}

Status ControlLaneServer::Init() {
  MT_ASSIGN_OR_RETURN(context_, UcxContext::Create(options_.transports));
  MT_ASSIGN_OR_RETURN(worker_,
                      UcxWorker::Create(context_->handle(), &mu_, [this] {
                        mu_.AssertHeld();  // the worker calls it so
                        return AfterProgress();
                      }));
  MutexLock lock(&mu_);
  return SetAmHandler(worker_->handle(), kControlLaneRequestAmId,
                      &ControlLaneServer::OnRequest, this,
                      "control lane's handler");
}

ControlLaneServer::~ControlLaneServer() {
  if (worker_ == nullptr) return;  // Init failed before the worker
  service_->SetControlLane(std::string());
  worker_->Stop();
  {
    MutexLock lock(&mu_);
    // UCX cannot cancel a send: the answers still in flight are released
    // with the worker, and their buffers (in outgoing_) outlive it.
    for (Outgoing& out : outgoing_) ucp_request_free(out.request);
  }
  worker_.reset();
}

ControlLaneServerStats ControlLaneServer::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

ucs_status_t ControlLaneServer::OnRequest(void* arg, const void* header,
                                          size_t header_length, void* data,
                                          size_t length,
                                          const ucp_am_recv_param_t* param) {
  ControlLaneServer* self = static_cast<ControlLaneServer*>(arg);
  // Runs inside ucp_worker_progress, which runs under mu_.
  self->mu_.AssertHeld();
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0 ||
      (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) == 0) {
    // Clients send eagerly and ask for the reply endpoint.
    ++self->stats_.malformed;
    return (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0
               ? UCS_ERR_UNSUPPORTED
               : UCS_OK;
  }
  self->Serve(std::string_view(static_cast<const char*>(data), length),
              param->reply_ep);
  return UCS_OK;
}

void ControlLaneServer::Serve(std::string_view message, ucp_ep_h reply_ep) {
  Result<ControlLaneRequest> request = DecodeControlLaneRequest(message);
  if (!request.ok()) {
    ++stats_.malformed;  // no request id to answer
    return;
  }
  std::string response;
  Status status =
      request->method >= kMasterMethodCount
          ? Status(ErrorReason::kInvalidArgument,
                   "control lane: unknown method " +
                       std::to_string(request->method))
          : service_->ServeLaneCall(static_cast<MasterMethod>(request->method),
                                    request->payload, &response);
  if (status.ok() && response.size() + kReplyOverhead > kMaxControlLaneBytes) {
    // The client asks again over gRPC, which carries more.
    status = Status(ErrorReason::kNotApplicable,
                    "the answer is too large for the control lane");
    response.clear();
  }
  ++stats_.calls;
  Reply(reply_ep,
        EncodeControlLaneReply(request->request_id, status, response));
}

void ControlLaneServer::Reply(ucp_ep_h ep, std::string payload) {
  // UCX cannot cancel a send, so what a client does not take stays here
  // until its endpoint fails: bounded per client and in all.
  Backlog& backlog = backlog_[ep];
  if (backlog.replies >= options_.max_unsent_replies_per_client ||
      backlog.bytes + payload.size() > options_.max_unsent_bytes_per_client ||
      outgoing_.size() >= options_.max_unsent_replies ||
      unsent_bytes_ + payload.size() > options_.max_unsent_bytes) {
    if (backlog.replies == 0) backlog_.erase(ep);
    ++stats_.replies_dropped;
    return;
  }
  auto owned = std::make_unique<std::string>(std::move(payload));
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t request =
      ucp_am_send_nbx(ep, kControlLaneReplyAmId, nullptr, 0, owned->data(),
                      owned->size(), &param);
  if (UCS_PTR_IS_ERR(request) || request == nullptr) {
    // Failed, or sent already.
    if (UCS_PTR_IS_ERR(request)) ++stats_.replies_dropped;
    if (backlog.replies == 0) backlog_.erase(ep);
    return;
  }
  ++backlog.replies;
  backlog.bytes += owned->size();
  unsent_bytes_ += owned->size();
  outgoing_.push_back(Outgoing{std::move(owned), request, ep});
}

bool ControlLaneServer::AfterProgress() {
  for (auto it = outgoing_.begin(); it != outgoing_.end();) {
    if (ucp_request_check_status(it->request) == UCS_INPROGRESS) {
      ++it;
      continue;
    }
    ucp_request_free(it->request);
    const size_t bytes = it->payload->size();
    unsent_bytes_ -= bytes;
    auto backlog = backlog_.find(it->ep);
    if (backlog != backlog_.end()) {
      backlog->second.bytes -= bytes;
      if (--backlog->second.replies == 0) backlog_.erase(backlog);
    }
    it = outgoing_.erase(it);
  }
  return false;
}

}  // namespace mooncake_tier::rpc
