#pragma once

// A fixed set of threads running posted jobs in order, with a bounded
// queue: TryPost refuses a job when `queue_limit` jobs already wait, so a
// burst of requests costs a quick refusal instead of memory and latency
// for everyone (the admin edge's lanes, admin_server/http_edge.h).
//
// Thread safety: TryPost and Shutdown from any thread. Jobs run on the
// pool's threads; a job must not call Shutdown.

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace mooncake_tier::admin {

class WorkerPool {
 public:
  // REQUIRES: threads >= 1, queue_limit >= 1.
  WorkerPool(size_t threads, size_t queue_limit);
  ~WorkerPool();  // Shutdown()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `job`; false (and `job` dropped) when the queue is full or the
  // pool is shut down.
  bool TryPost(std::function<void()> job);
  // Drops the jobs still waiting, lets the running ones finish and joins
  // the threads. Idempotent.
  void Shutdown();

 private:
  void Run();

  const size_t queue_limit_;
  Mutex mu_;
  CondVar cv_{&mu_};
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace mooncake_tier::admin
