#include "transport/ucx_request_batch.h"

namespace mooncake_tier {

UcxRequestBatch::UcxRequestBatch(size_t capacity) {
  refs_.reserve(capacity);
  for (size_t i = 0; i < capacity; ++i) refs_.push_back({this, i});
  MutexLock lock(&mu_);
  slots_.reserve(capacity);
}

size_t UcxRequestBatch::AddSlot() {
  MutexLock lock(&mu_);
  slots_.emplace_back();
  ++pending_;
  return slots_.size() - 1;
}

ucp_request_param_t UcxRequestBatch::Param(size_t slot) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &UcxRequestBatch::OnComplete;
  param.user_data = &refs_[slot];
  return param;
}

void UcxRequestBatch::Track(size_t slot, ucs_status_ptr_t result) {
  MutexLock lock(&mu_);
  if (result == nullptr) {
    MarkDone(slot, UCS_OK);
  } else if (UCS_PTR_IS_ERR(result)) {
    MarkDone(slot, UCS_PTR_STATUS(result));
  } else {
    slots_[slot].request = result;
  }
}

void UcxRequestBatch::Complete(size_t slot, ucs_status_t status) {
  MutexLock lock(&mu_);
  MarkDone(slot, status);
}

void UcxRequestBatch::OnComplete(void* request, ucs_status_t status,
                                 void* user_data) {
  const SlotRef* ref = static_cast<const SlotRef*>(user_data);
  MutexLock lock(&ref->batch->mu_);
  ref->batch->MarkDone(ref->index, status);
}

void UcxRequestBatch::MarkDone(size_t slot, ucs_status_t status) {
  Slot& s = slots_[slot];
  if (s.done) return;
  s.done = true;
  s.status = status;
  --pending_;
  if (status != UCS_OK) ++failed_;
  if (pending_ == 0 || status != UCS_OK) cv_.SignalAll();
}

bool UcxRequestBatch::WaitUntil(Clock::time_point deadline,
                                bool stop_on_error) {
  MutexLock lock(&mu_);
  while (pending_ > 0) {
    if (stop_on_error && failed_ > 0) return false;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    cv_.WaitFor(deadline - now);
  }
  return true;
}

void UcxRequestBatch::Finish() {
  MutexLock lock(&mu_);
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.request != nullptr) {
      ucp_request_free(s.request);
      s.request = nullptr;
    }
    if (!s.done) MarkDone(i, UCS_ERR_TIMED_OUT);
  }
}

bool UcxRequestBatch::done(size_t slot) {
  MutexLock lock(&mu_);
  return slots_[slot].done;
}

ucs_status_t UcxRequestBatch::status(size_t slot) {
  MutexLock lock(&mu_);
  return slots_[slot].status;
}

}  // namespace mooncake_tier
