#pragma once

// A non-blocking front of a Client for engines that run an event loop: a
// submit queues a batch and returns at once; worker threads run it through
// the Client; its completion (one result per item) waits until the engine
// collects it. An eventfd wakes the loop while completions wait.
//
//   auto queue = mooncake_tier::BatchQueue::Create(client);
//   Result<BatchTaskId> id = (*queue)->SubmitGetInto(std::move(items));
//   // epoll on (*queue)->event_fd(); when it is readable:
//   for (BatchCompletion& done : (*queue)->Collect()) { /* done.results */ }
//
// Backpressure, not buffering: at most max_pending batches are in the queue
// (waiting, running, or completed and not yet collected); a submit beyond
// that fails QUEUE_FULL and queues nothing, so memory stays bounded and the
// engine decides what to drop or retry.
//
// Thread safety: every method may be called from many threads at once,
// except the destructor, which must not overlap any other call.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mooncake_tier/client.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

struct BatchQueueOptions {
  // Threads that run submitted batches, each one batch at a time through
  // the Client. REQUIRES: 1..64. Default: 2.
  int workers = 2;
  // Batches submitted and not yet collected (waiting, running or
  // completed), at most. REQUIRES: 1..65536. Default: 64.
  size_t max_pending = 64;
};

// Issued by a submit; never 0, never reused by a queue.
using BatchTaskId = uint64_t;

struct BatchCompletion {
  BatchTaskId id = 0;
  // One entry per item, in the order submitted: a put's 0, a get_into's
  // bytes read, an exists probe's object size; or the item's error as the
  // Client gave it, with two more for exists probes: OBJECT_NOT_FOUND for
  // an absent key, GROUP_INCOMPLETE for a present member of a group that
  // is not complete (filling, broken or expired). Every item of a batch
  // that never started (see Stop) is ABORTED.
  std::vector<Result<uint64_t>> results;
};

class BatchQueue {
 public:
  // A queue whose workers call `client`, which the queue keeps alive.
  // INVALID_ARGUMENT for a null client or options out of range; INTERNAL
  // when the eventfd cannot be made.
  static Result<std::unique_ptr<BatchQueue>> Create(
      std::shared_ptr<Client> client, BatchQueueOptions options = {});

  // Stop()s, waits for the batches already running to finish, and drops
  // every completion not collected. Returns once no worker touches any
  // buffer of any task. Closes event_fd().
  ~BatchQueue();
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // Queue one batch and return its id. The items' buffers (put values and
  // parts, get buffers and parts) must stay valid, and a get's buffers
  // unread, until the task's completion is collected (by Collect or Wait)
  // or the queue is destroyed.
  // An empty batch is allowed and completes with no results.
  // QUEUE_FULL when max_pending batches are pending; ABORTED after Stop().
  // On an error nothing is queued and the buffers are never touched.
  Result<BatchTaskId> SubmitPut(std::vector<PutItem> items);
  Result<BatchTaskId> SubmitGetInto(std::vector<GetIntoItem> items);
  Result<BatchTaskId> SubmitExists(std::vector<std::string> keys);

  // An eventfd (EFD_NONBLOCK | EFD_CLOEXEC) that is readable exactly while
  // at least one completion waits to be collected, for the engine's
  // epoll/poll/select. Owned by the queue; closed by its destructor. Never
  // read or write it: the queue keeps its counter.
  int event_fd() const;

  // Non-blocking: takes up to `max` completions, in the order they
  // completed, oldest first. Empty when none waits.
  std::vector<BatchCompletion> Collect(size_t max = SIZE_MAX);

  // Waits up to `timeout` for task `id` to complete and takes its
  // completion. TIMEOUT when it is not done in time (it stays pending and
  // may be collected later); TASK_NOT_FOUND for an id never issued or
  // already collected, including one another caller collects while this
  // one waits. A timeout <= 0 only checks.
  Result<BatchCompletion> Wait(BatchTaskId id,
                               std::chrono::milliseconds timeout);

  // Stops starting batches: each batch still waiting for a worker
  // completes at once with every item ABORTED (its buffers are never
  // touched), and later submits fail ABORTED. Batches already running
  // finish and complete as usual; Stop does not wait for them. Collect and
  // Wait go on working. Idempotent. Lets an engine shut down from its event
  // loop: Stop, collect until pending() is 0, then destroy the queue.
  void Stop();

  // Batches submitted and not yet collected.
  size_t pending() const;

 private:
  class Impl;
  explicit BatchQueue(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mooncake_tier
