#include "mooncake_tier/batch_queue.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace mooncake_tier {
namespace {

constexpr int kMaxWorkers = 64;
constexpr size_t kMaxPending = size_t{1} << 16;
// Longer waits are cut to this, so that the condition variable's deadline
// (now + timeout) cannot overflow.
constexpr std::chrono::milliseconds kMaxWait = std::chrono::hours(24 * 365);

// A batch of one of the three kinds; the vector types tell them apart.
using Items = std::variant<std::vector<PutItem>, std::vector<GetIntoItem>,
                           std::vector<std::string>>;

size_t ItemCount(const Items& items) {
  return std::visit([](const auto& v) { return v.size(); }, items);
}

// One result per item, also from a client that answers a different number
// of items than it was given (the missing ones are INTERNAL).
template <typename Answer, typename Convert>
std::vector<Result<uint64_t>> PerItem(std::vector<Answer> answers, size_t n,
                                      Convert convert) {
  std::vector<Result<uint64_t>> results;
  results.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (i < answers.size()) {
      results.push_back(convert(i, std::move(answers[i])));
    } else {
      results.push_back(Status(ErrorReason::kInternal,
                               "the client answered " +
                                   std::to_string(answers.size()) + " of " +
                                   std::to_string(n) + " items"));
    }
  }
  return results;
}

Result<uint64_t> FromExists(const std::string& key, Result<ExistsInfo> probe) {
  if (!probe.ok()) return probe.status();
  if (!probe->exists) {
    return Status(ErrorReason::kObjectNotFound, "no object '" + key + "'");
  }
  const SharedGroupStatus& group = probe->group;
  if (group.has_value() && group->state != GroupState::kComplete) {
    return Status(ErrorReason::kGroupIncomplete,
                  "group '" + group->group_id + "' of '" + key + "' is " +
                      std::string(GroupStateName(group->state)) + " (" +
                      std::to_string(group->present) + " of " +
                      std::to_string(group->expected) + " members)");
  }
  return probe->size;
}

std::vector<Result<uint64_t>> Run(Client& client, const Items& items) {
  if (const auto* puts = std::get_if<std::vector<PutItem>>(&items)) {
    return PerItem(client.PutBatch(*puts), puts->size(),
                   [](size_t, Status s) -> Result<uint64_t> {
                     if (!s.ok()) return s;
                     return uint64_t{0};
                   });
  }
  if (const auto* gets = std::get_if<std::vector<GetIntoItem>>(&items)) {
    return PerItem(client.GetIntoBatch(*gets), gets->size(),
                   [](size_t, Result<uint64_t> r) { return r; });
  }
  const auto& keys = std::get<std::vector<std::string>>(items);
  return PerItem(client.ExistsBatch(keys), keys.size(),
                 [&keys](size_t i, Result<ExistsInfo> r) {
                   return FromExists(keys[i], std::move(r));
                 });
}

Status TaskNotFound(BatchTaskId id) {
  return Status(ErrorReason::kTaskNotFound,
                "no pending batch task " + std::to_string(id) +
                    " (never issued, or already collected)");
}

}  // namespace

// The queue's state. One mutex, a leaf: nothing else is locked under it,
// and the Client is called with it released.
class BatchQueue::Impl {
 public:
  // A submitted batch waiting for a worker.
  struct QueuedBatch {
    BatchTaskId id = 0;
    Items items;
  };

  Impl(std::shared_ptr<Client> client, BatchQueueOptions options, int event_fd)
      : client_(std::move(client)), options_(options), event_fd_(event_fd) {}

  // Stops, joins the workers, closes the eventfd.
  ~Impl() {
    Stop();
    for (std::thread& worker : workers_) worker.join();
    close(event_fd_);
  }

  void StartWorkers() {
    workers_.reserve(options_.workers);
    for (int i = 0; i < options_.workers; ++i) {
      workers_.emplace_back([this] { WorkerLoop(); });
    }
  }

  int event_fd() const { return event_fd_; }

  Result<BatchTaskId> Submit(Items items) {
    MutexLock lock(&mu_);
    if (stopping_) {
      return Status(ErrorReason::kAborted, "the batch queue is stopped");
    }
    if (pending_ids_.size() >= options_.max_pending) {
      return Status(ErrorReason::kQueueFull,
                    std::to_string(pending_ids_.size()) +
                        " batches pending (max_pending); collect some first");
    }
    const BatchTaskId id = next_id_++;
    pending_ids_.insert(id);
    queued_.push_back(QueuedBatch{id, std::move(items)});
    work_cv_.Signal();
    return id;
  }

  std::vector<BatchCompletion> Collect(size_t max) {
    MutexLock lock(&mu_);
    const size_t n = std::min(max, completed_.size());
    std::vector<BatchCompletion> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      out.push_back(std::move(completed_.front()));
      completed_.pop_front();
      pending_ids_.erase(out.back().id);
    }
    if (n > 0) Collected();
    return out;
  }

  Result<BatchCompletion> Wait(BatchTaskId id,
                               std::chrono::milliseconds timeout) {
    MutexLock lock(&mu_);
    if (!pending_ids_.contains(id)) return TaskNotFound(id);
    auto find = [this, id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return std::find_if(
          completed_.begin(), completed_.end(),
          [id](const BatchCompletion& c) { return c.id == id; });
    };
    done_cv_.WaitFor(
        std::clamp(timeout, std::chrono::milliseconds(0), kMaxWait),
        [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return !pending_ids_.contains(id) || find() != completed_.end();
        });
    if (!pending_ids_.contains(id)) return TaskNotFound(id);
    const auto it = find();
    if (it == completed_.end()) {
      return Status(ErrorReason::kTimeout,
                    "batch task " + std::to_string(id) + " not done within " +
                        std::to_string(timeout.count()) + " ms");
    }
    BatchCompletion done = std::move(*it);
    completed_.erase(it);
    pending_ids_.erase(id);
    Collected();
    return done;
  }

  void Stop() {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    for (QueuedBatch& task : queued_) {
      BatchCompletion aborted{task.id, {}};
      aborted.results.assign(
          ItemCount(task.items),
          Status(ErrorReason::kAborted,
                 "the batch queue stopped before the batch started"));
      AddCompletion(std::move(aborted));
    }
    queued_.clear();
    work_cv_.SignalAll();
  }

  size_t pending() const {
    MutexLock lock(&mu_);
    return pending_ids_.size();
  }

 private:
  void WorkerLoop() {
    while (true) {
      QueuedBatch task;
      {
        MutexLock lock(&mu_);
        while (!stopping_ && queued_.empty()) work_cv_.Wait();
        // Stop() has completed whatever was queued.
        if (stopping_) return;
        task = std::move(queued_.front());
        queued_.pop_front();
      }
      BatchCompletion done{task.id, Run(*client_, task.items)};
      MutexLock lock(&mu_);
      AddCompletion(std::move(done));
    }
  }

  // Makes the eventfd readable when the first completion arrives.
  void AddCompletion(BatchCompletion done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    completed_.push_back(std::move(done));
    if (completed_.size() == 1) {
      // Cannot fail: the counter is 0 here (it overflows only near 2^64).
      const uint64_t one = 1;
      while (write(event_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
      }
    }
    done_cv_.SignalAll();
  }

  // After completions were taken: drains the eventfd once none waits, and
  // wakes waiters whose task another caller may have taken.
  void Collected() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (completed_.empty()) {
      // Cannot fail: the counter is 1 here. Reading resets it to 0.
      uint64_t count = 0;
      while (read(event_fd_, &count, sizeof(count)) < 0 && errno == EINTR) {
      }
    }
    done_cv_.SignalAll();
  }

  const std::shared_ptr<Client> client_;
  const BatchQueueOptions options_;
  const int event_fd_;

  mutable Mutex mu_;
  CondVar work_cv_{&mu_};  // a task was queued, or Stop()
  CondVar done_cv_{&mu_};  // a completion was added or taken
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  BatchTaskId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // Every task submitted and not collected: queued, running or completed.
  // Its size is what max_pending bounds.
  std::unordered_set<BatchTaskId> pending_ids_ ABSL_GUARDED_BY(mu_);
  std::deque<QueuedBatch> queued_ ABSL_GUARDED_BY(mu_);
  // Oldest first. Non-empty exactly while the eventfd's counter is 1.
  std::deque<BatchCompletion> completed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> workers_;
};

Result<std::unique_ptr<BatchQueue>> BatchQueue::Create(
    std::shared_ptr<Client> client, BatchQueueOptions options) {
  if (client == nullptr) {
    return Status(ErrorReason::kInvalidArgument, "BatchQueue needs a client");
  }
  if (options.workers < 1 || options.workers > kMaxWorkers) {
    return Status(ErrorReason::kInvalidArgument,
                  "BatchQueue workers must be 1.." +
                      std::to_string(kMaxWorkers) + ", not " +
                      std::to_string(options.workers));
  }
  if (options.max_pending < 1 || options.max_pending > kMaxPending) {
    return Status(ErrorReason::kInvalidArgument,
                  "BatchQueue max_pending must be 1.." +
                      std::to_string(kMaxPending) + ", not " +
                      std::to_string(options.max_pending));
  }
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    return Status(ErrorReason::kInternal,
                  std::string("eventfd: ") + std::strerror(errno));
  }
  auto impl = std::make_unique<Impl>(std::move(client), options, fd);
  impl->StartWorkers();
  return std::unique_ptr<BatchQueue>(new BatchQueue(std::move(impl)));
}

BatchQueue::BatchQueue(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

BatchQueue::~BatchQueue() = default;

Result<BatchTaskId> BatchQueue::SubmitPut(std::vector<PutItem> items) {
  return impl_->Submit(std::move(items));
}

Result<BatchTaskId> BatchQueue::SubmitGetInto(std::vector<GetIntoItem> items) {
  return impl_->Submit(std::move(items));
}

Result<BatchTaskId> BatchQueue::SubmitExists(std::vector<std::string> keys) {
  return impl_->Submit(std::move(keys));
}

int BatchQueue::event_fd() const { return impl_->event_fd(); }

std::vector<BatchCompletion> BatchQueue::Collect(size_t max) {
  return impl_->Collect(max);
}

Result<BatchCompletion> BatchQueue::Wait(BatchTaskId id,
                                         std::chrono::milliseconds timeout) {
  return impl_->Wait(id, timeout);
}

void BatchQueue::Stop() { impl_->Stop(); }

size_t BatchQueue::pending() const { return impl_->pending(); }

}  // namespace mooncake_tier
