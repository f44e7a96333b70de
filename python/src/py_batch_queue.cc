#include "python/src/py_batch_queue.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "python/src/py_items.h"
#include "python/src/status_error.h"

namespace py = pybind11;

namespace mooncake_tier::python {

PyBatchQueue::PyBatchQueue(std::shared_ptr<Client> client, int workers,
                           size_t max_pending) {
  Result<std::unique_ptr<BatchQueue>> queue = BatchQueue::Create(
      std::move(client),
      BatchQueueOptions{.workers = workers, .max_pending = max_pending});
  ThrowIfError(queue.status());
  queue_ = std::move(*queue);
}

PyBatchQueue::~PyBatchQueue() {
  if (_Py_IsFinalizing()) {
    // The GIL must not be released any more: running batches end within
    // their transfer deadline and the destructor waits for them.
    queue_.reset();
    held_.clear();
    return;
  }
  Close();
}

void PyBatchQueue::Close() {
  if (queue_ == nullptr) return;
  std::shared_ptr<BatchQueue> queue = std::move(queue_);
  queue_ = nullptr;
  {
    py::gil_scoped_release unlocked;
    // Queued batches complete ABORTED at once; running ones finish. Once
    // every completion is taken no worker touches any task's memory.
    queue->Stop();
    while (queue->pending() > 0) {
      if (queue->Collect().empty()) {
        pollfd fd{queue->event_fd(), POLLIN, 0};
        ::poll(&fd, 1, 100);
      }
    }
  }
  held_.clear();
}

std::shared_ptr<BatchQueue> PyBatchQueue::Live() const {
  if (queue_ == nullptr) ThrowInvalidArgument("the batch queue is closed");
  return queue_;
}

uint64_t PyBatchQueue::Submitted(Result<BatchTaskId> id,
                                 std::deque<PyBufferView> views) {
  ThrowIfError(id.status());
  if (!views.empty()) held_.emplace(*id, std::move(views));
  return *id;
}

uint64_t PyBatchQueue::SubmitPut(py::handle keys, py::handle values,
                                 py::handle groups) {
  std::shared_ptr<BatchQueue> queue = Live();
  PreparedPuts puts = PreparePuts(keys, values, groups);
  // The items point into the views, which move (not copy) into held_.
  return Submitted(queue->SubmitPut(std::move(puts.items)),
                   std::move(puts.views));
}

uint64_t PyBatchQueue::SubmitGetInto(py::handle keys, py::handle buffers) {
  std::shared_ptr<BatchQueue> queue = Live();
  PreparedGets gets = PrepareGets(keys, buffers);
  return Submitted(queue->SubmitGetInto(std::move(gets.items)),
                   std::move(gets.views));
}

uint64_t PyBatchQueue::SubmitPutFromAddresses(py::handle keys,
                                              py::handle addresses,
                                              py::handle sizes,
                                              py::handle groups) {
  std::shared_ptr<BatchQueue> queue = Live();
  PreparedPuts puts = PreparePutsFromAddresses(keys, addresses, sizes, groups);
  return Submitted(queue->SubmitPut(std::move(puts.items)), {});
}

uint64_t PyBatchQueue::SubmitGetIntoAddresses(py::handle keys,
                                              py::handle addresses,
                                              py::handle sizes) {
  std::shared_ptr<BatchQueue> queue = Live();
  PreparedGets gets = PrepareGetsFromAddresses(keys, addresses, sizes);
  return Submitted(queue->SubmitGetInto(std::move(gets.items)), {});
}

uint64_t PyBatchQueue::SubmitExists(py::handle keys) {
  std::shared_ptr<BatchQueue> queue = Live();
  return Submitted(queue->SubmitExists(ToKeys(keys, "keys")), {});
}

int PyBatchQueue::Fileno() const { return Live()->event_fd(); }

size_t PyBatchQueue::Pending() const {
  return queue_ == nullptr ? 0 : queue_->pending();
}

py::list PyBatchQueue::Results(BatchCompletion& done) {
  py::list out(done.results.size());
  for (size_t i = 0; i < done.results.size(); ++i) {
    const Result<uint64_t>& r = done.results[i];
    out[i] = r.ok() ? py::object(py::int_(*r)) : MakePyError(r.status());
  }
  held_.erase(done.id);  // the task's buffers are free again
  return out;
}

py::list PyBatchQueue::Collect(py::handle max) {
  std::shared_ptr<BatchQueue> queue = Live();
  size_t limit = SIZE_MAX;
  if (!max.is_none()) {
    const long long m = py::cast<long long>(max);
    if (m < 0) ThrowInvalidArgument("max must be >= 0");
    limit = static_cast<size_t>(m);
  }
  std::vector<BatchCompletion> done = queue->Collect(limit);
  py::list out;
  for (BatchCompletion& d : done) {
    out.append(py::make_tuple(d.id, Results(d)));
  }
  return out;
}

py::list PyBatchQueue::Wait(uint64_t id, py::handle timeout) {
  std::shared_ptr<BatchQueue> queue = Live();
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline;
  if (!timeout.is_none()) {
    const double seconds = py::cast<double>(timeout);
    if (!(seconds >= 0) || !std::isfinite(seconds)) {
      ThrowInvalidArgument("timeout must be None or seconds >= 0");
    }
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(seconds));
  }
  // Waits in slices so that Ctrl-C reaches a thread waiting without limit.
  constexpr auto kSlice = std::chrono::milliseconds(200);
  while (true) {
    auto slice = kSlice;
    if (deadline) {
      slice = std::min(slice, std::chrono::ceil<std::chrono::milliseconds>(
                                  *deadline - Clock::now()));
      slice = std::max(slice, std::chrono::milliseconds(0));
    }
    std::optional<Result<BatchCompletion>> done;
    {
      py::gil_scoped_release unlocked;
      done.emplace(queue->Wait(id, slice));
    }
    if (done->ok()) return Results(**done);
    const bool expired = deadline && Clock::now() >= *deadline;
    if (done->status().reason() != ErrorReason::kTimeout || expired) {
      ThrowIfError(done->status());
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

}  // namespace mooncake_tier::python
