#include "admin_server/worker_pool.h"

#include <utility>

namespace mooncake_tier::admin {

WorkerPool::WorkerPool(size_t threads, size_t queue_limit)
    : queue_limit_(queue_limit) {
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() { Shutdown(); }

bool WorkerPool::TryPost(std::function<void()> job) {
  {
    MutexLock lock(&mu_);
    if (stopping_ || jobs_.size() >= queue_limit_) return false;
    jobs_.push_back(std::move(job));
  }
  cv_.Signal();
  return true;
}

void WorkerPool::Shutdown() {
  std::deque<std::function<void()>> dropped;  // destroyed without the lock
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    dropped.swap(jobs_);
  }
  cv_.SignalAll();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> job;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && jobs_.empty()) cv_.Wait();
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace mooncake_tier::admin
