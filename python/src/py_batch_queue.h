#pragma once

// PyBatchQueue: the object behind mooncake_tier.BatchQueue, a BatchQueue
// (include/mooncake_tier/batch_queue.h) over a Store's client, for engines
// that overlap transfers with compute or run an event loop.
//
// A submit converts its arguments exactly as the matching Store call does
// (py_items.h), queues the batch and returns its task id at once. The
// Python buffers of a task stay held (PEP 3118) until its completion is
// collected (collect, wait) or the queue is closed, so the exporter cannot
// free or resize them while a worker may still copy.
//
// Thread safety: the queue is thread-safe; the held buffers are touched
// only with the GIL held. close() stops the queue (batches still queued
// never start), waits with the GIL released for the batches already running
// and drops every completion; a thread waiting on a task meanwhile gets
// TaskNotFoundError. Calls share the queue, so none outlives it.

#include <pybind11/pybind11.h>

#include <cstdint>
#include <deque>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "mooncake_tier/batch_queue.h"
#include "python/src/py_buffer.h"

namespace mooncake_tier::python {

class PyBatchQueue {
 public:
  // Throws StatusError (INVALID_ARGUMENT for bad options).
  PyBatchQueue(std::shared_ptr<Client> client, int workers, size_t max_pending);
  ~PyBatchQueue();  // closes; REQUIRES: GIL held

  PyBatchQueue(const PyBatchQueue&) = delete;
  PyBatchQueue& operator=(const PyBatchQueue&) = delete;

  uint64_t SubmitPut(pybind11::handle keys, pybind11::handle values,
                     pybind11::handle groups);
  uint64_t SubmitGetInto(pybind11::handle keys, pybind11::handle buffers);
  uint64_t SubmitPutFromAddresses(pybind11::handle keys,
                                  pybind11::handle addresses,
                                  pybind11::handle sizes,
                                  pybind11::handle groups);
  uint64_t SubmitGetIntoAddresses(pybind11::handle keys,
                                  pybind11::handle addresses,
                                  pybind11::handle sizes);
  uint64_t SubmitExists(pybind11::handle keys);

  int Fileno() const;
  // [(task id, [int | StoreError, ...]), ...], oldest first; never waits.
  pybind11::list Collect(pybind11::handle max);
  // The results of task `id` once done; StoreTimeoutError when `timeout`
  // (seconds, None for no limit) passes first, TaskNotFoundError for an id
  // not pending.
  pybind11::list Wait(uint64_t id, pybind11::handle timeout);
  size_t Pending() const;
  bool closed() const { return queue_ == nullptr; }
  void Close();

 private:
  std::shared_ptr<BatchQueue> Live() const;
  // Records the memory a submitted task holds, or throws the submit error.
  uint64_t Submitted(Result<BatchTaskId> id, std::deque<PyBufferView> views);
  pybind11::list Results(BatchCompletion& done);

  std::shared_ptr<BatchQueue> queue_;  // null once closed
  // The memory of each task not yet collected. Guarded by the GIL.
  absl::flat_hash_map<BatchTaskId, std::deque<PyBufferView>> held_;
};

}  // namespace mooncake_tier::python
