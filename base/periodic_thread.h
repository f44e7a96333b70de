#pragma once

// A thread that runs a callback every interval until stopped: the
// background steps of a master (Tick) and the like.
//
// The thread first waits one interval, then runs the callback, then waits
// again, and so on: the interval is the pause between the end of one call
// and the start of the next, so a slow callback delays the next rather than
// piling calls up. Stop() wakes the thread at once instead of letting it
// sleep out the interval, waits for a call in progress to return, and joins
// the thread; the callback is never called after Stop() returns.
//
// Thread safety: Start, Stop and running may be called from any thread,
// concurrently with one another, but never from the callback itself (Stop
// would wait for the thread it runs on). The destructor stops the thread;
// as with any object, nothing may call in while it runs. The callback runs
// on the thread alone, with no lock of this class held.

#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "base/clock.h"
#include "base/mutex.h"

namespace mooncake_tier {

class PeriodicThread {
 public:
  PeriodicThread() = default;
  // Stop().
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Starts the thread: `tick` runs every `interval` until Stop().
  // REQUIRES: not running (a stopped thread may be started again);
  // interval > 0 (0 makes the thread call `tick` back to back).
  void Start(Duration interval, std::function<void()> tick)
      ABSL_LOCKS_EXCLUDED(control_mu_, mu_);
  // Wakes the thread, waits for a call of `tick` in progress to return and
  // joins the thread. Idempotent; does nothing if never started.
  void Stop() ABSL_LOCKS_EXCLUDED(control_mu_, mu_);
  // Between Start() and Stop().
  bool running() const ABSL_LOCKS_EXCLUDED(control_mu_);

 private:
  void Run(Duration interval, const std::function<void()>& tick)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Serialises Start and Stop, held across the join: a second Stop
  // returns only once the thread has ended.
  mutable Mutex control_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::thread thread_ ABSL_GUARDED_BY(control_mu_);
  // What the thread waits on between calls.
  Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  CondVar stop_cv_{&mu_};
};

}  // namespace mooncake_tier
