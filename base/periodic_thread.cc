#include "base/periodic_thread.h"

#include <utility>

namespace mooncake_tier {

PeriodicThread::~PeriodicThread() { Stop(); }

void PeriodicThread::Start(Duration interval, std::function<void()> tick) {
  MutexLock control(&control_mu_);
  {
    MutexLock lock(&mu_);
    stopping_ = false;
  }
  thread_ = std::thread(
      [this, interval, tick = std::move(tick)] { Run(interval, tick); });
}

void PeriodicThread::Stop() {
  MutexLock control(&control_mu_);
  if (!thread_.joinable()) return;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    stop_cv_.SignalAll();
  }
  thread_.join();
}

bool PeriodicThread::running() const {
  MutexLock control(&control_mu_);
  return thread_.joinable();
}

void PeriodicThread::Run(Duration interval, const std::function<void()>& tick) {
  while (true) {
    {
      MutexLock lock(&mu_);
      if (stop_cv_.WaitFor(interval, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return stopping_;
          })) {
        return;
      }
    }
    tick();
  }
}

}  // namespace mooncake_tier
