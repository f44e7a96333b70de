#include "transport/ucx_worker.h"

#include <poll.h>

#include "transport/ucx_status.h"

namespace mooncake_tier {
namespace {

// Progress calls per round before the lock is released, so that callers
// waiting to issue operations are not starved under load.
constexpr int kMaxProgressCallsPerRound = 64;
// Upper bound on a sleep between rounds; events normally wake it sooner.
constexpr int kIdlePollMs = 10;

Result<std::string> WorkerAddress(ucp_worker_h worker) {
  ucp_address_t* address = nullptr;
  size_t length = 0;
  const ucs_status_t status = ucp_worker_get_address(worker, &address, &length);
  if (status != UCS_OK) return UcxError(status, "getting the worker address");
  std::string out(reinterpret_cast<const char*>(address), length);
  ucp_worker_release_address(worker, address);
  return out;
}

}  // namespace

Status SetAmHandler(ucp_worker_h worker, unsigned id,
                    ucp_am_recv_callback_t callback, void* arg,
                    std::string_view what) {
  ucp_am_handler_param_t param{};
  param.field_mask =
      UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
      UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  param.id = id;
  param.flags = UCP_AM_FLAG_WHOLE_MSG;
  param.cb = callback;
  param.arg = arg;
  const ucs_status_t status = ucp_worker_set_am_recv_handler(worker, &param);
  if (status != UCS_OK) {
    return UcxError(status, "registering the " + std::string(what));
  }
  return Status();
}

Result<ucp_ep_h> ConnectPeer(ucp_worker_h worker, const std::string& address,
                             ucp_err_handler_cb_t on_error, void* arg,
                             std::string_view what) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = on_error;
  params.err_handler.arg = arg;
  ucp_ep_h ep = nullptr;
  const ucs_status_t status = ucp_ep_create(worker, &params, &ep);
  if (status != UCS_OK) {
    return UcxError(status, "connecting to " + std::string(what));
  }
  return ep;
}

Result<std::unique_ptr<UcxWorker>> UcxWorker::Create(
    ucp_context_h context, Mutex* mu, AfterProgress after_progress) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<UcxWorker> out,
                      CreateDriven(context, mu));
  // The hook is fixed before the thread starts.
  out->after_progress_ = std::move(after_progress);
  out->thread_ = std::thread([w = out.get()] { w->Run(); });
  return out;
}

Result<std::unique_ptr<UcxWorker>> UcxWorker::CreateDriven(
    ucp_context_h context, Mutex* mu) {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucp_worker_h worker = nullptr;
  ucs_status_t status = ucp_worker_create(context, &params, &worker);
  if (status != UCS_OK) return UcxError(status, "creating a UCX worker");
  int event_fd = -1;
  status = ucp_worker_get_efd(worker, &event_fd);
  if (status != UCS_OK) {
    ucp_worker_destroy(worker);
    return UcxError(status, "getting the worker's event descriptor");
  }
  Result<std::string> address = WorkerAddress(worker);
  if (!address.ok()) {
    ucp_worker_destroy(worker);
    return address.status();
  }
  return std::unique_ptr<UcxWorker>(
      new UcxWorker(worker, event_fd, std::move(*address), mu));
}

UcxWorker::UcxWorker(ucp_worker_h worker, int event_fd, std::string address,
                     Mutex* mu)
    : worker_(worker),
      event_fd_(event_fd),
      address_(std::move(address)),
      mu_(mu) {}

UcxWorker::~UcxWorker() {
  Stop();
  ucp_worker_destroy(worker_);
}

void UcxWorker::Signal() { ucp_worker_signal(worker_); }

void UcxWorker::Stop() {
  stop_.store(true, std::memory_order_release);
  Signal();
  if (thread_.joinable()) thread_.join();
}

void UcxWorker::ProgressOnce() {
  for (int i = 0; i < kMaxProgressCallsPerRound; ++i) {
    if (ucp_worker_progress(worker_) == 0) break;
  }
}

void UcxWorker::Run() {
  while (!stop_.load(std::memory_order_acquire)) {
    bool busy = false;
    {
      MutexLock lock(mu_);
      ProgressOnce();
      if (after_progress_ && after_progress_()) busy = true;
      // Arming fails with BUSY while events are pending: go round again.
      if (!busy && ucp_worker_arm(worker_) == UCS_ERR_BUSY) busy = true;
    }
    if (busy) {
      std::this_thread::yield();
      continue;
    }
    pollfd fd{event_fd_, POLLIN, 0};
    poll(&fd, 1, kIdlePollMs);
  }
}

}  // namespace mooncake_tier
