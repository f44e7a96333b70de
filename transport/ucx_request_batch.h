#pragma once

// The UCX operations of one call, waited for together.
//
// A caller adds one slot per operation, passes Param(slot) to the
// ucp_*_nbx call and hands its return to Track(slot, ...). UCX reports
// completion through a callback on the progress thread; WaitUntil blocks the
// caller until every slot completed or the deadline passed. Finish releases
// the UCX requests; a slot still pending then reads UCS_ERR_TIMED_OUT and no
// callback for it will ever run, so the batch may be destroyed.
//
// A slot may also stand for something that is not a UCX request (a reply
// message, say) and be completed by hand with Complete.
//
// Thread safety: AddSlot/Param/Track/Finish run with the worker's mutex
// held (the one that serialises UCX calls); WaitUntil runs without it;
// callbacks and Complete may come from any thread. Lock order: worker
// mutex before the batch's own mutex.

#include <ucp/api/ucp.h>

#include <chrono>
#include <cstddef>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace mooncake_tier {

class UcxRequestBatch {
 public:
  using Clock = std::chrono::steady_clock;

  // A slot index no AddSlot returns: for callers' "no slot yet" entries.
  static constexpr size_t kNoSlot = static_cast<size_t>(-1);

  // At most `capacity` slots.
  explicit UcxRequestBatch(size_t capacity);
  // REQUIRES: Finish() was called, or no tracked request is still held.
  ~UcxRequestBatch() = default;

  UcxRequestBatch(const UcxRequestBatch&) = delete;
  UcxRequestBatch& operator=(const UcxRequestBatch&) = delete;

  // A new pending slot. REQUIRES: fewer than `capacity` slots so far.
  size_t AddSlot();
  // Callback and user data for the nbx call of `slot`; the caller may add
  // flags and other fields.
  ucp_request_param_t Param(size_t slot);
  // Records what the nbx call for `slot` returned.
  void Track(size_t slot, ucs_status_ptr_t result);
  // Completes a hand-driven slot.
  void Complete(size_t slot, ucs_status_t status);

  // True when every slot completed; false when `deadline` passed first, or,
  // with `stop_on_error`, as soon as a slot completed with an error.
  bool WaitUntil(Clock::time_point deadline, bool stop_on_error = false);
  // REQUIRES: the worker mutex held. Releases the requests; pending slots
  // become UCS_ERR_TIMED_OUT.
  void Finish();

  bool done(size_t slot);
  // UCS_INPROGRESS while pending.
  ucs_status_t status(size_t slot);

 private:
  struct SlotRef {
    UcxRequestBatch* batch;
    size_t index;
  };
  struct Slot {
    void* request = nullptr;
    bool done = false;
    ucs_status_t status = UCS_INPROGRESS;
  };

  static void OnComplete(void* request, ucs_status_t status, void* user_data);
  void MarkDone(size_t slot, ucs_status_t status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Immutable after construction: the user data of each slot's callback.
  std::vector<SlotRef> refs_;
  Mutex mu_;
  CondVar cv_{&mu_};
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
  size_t pending_ ABSL_GUARDED_BY(mu_) = 0;
  size_t failed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace mooncake_tier
