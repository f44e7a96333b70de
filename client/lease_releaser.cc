#include "client/lease_releaser.h"

#include <algorithm>
#include <iterator>

namespace mooncake_tier {

LeaseReleaser::LeaseReleaser(MasterApi* master, Options options)
    : master_(master), options_(options) {
  thread_ = std::thread([this] { Loop(); });
}

LeaseReleaser::~LeaseReleaser() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  thread_.join();
}

void LeaseReleaser::Release(std::vector<LeaseRelease> releases) {
  if (releases.empty()) return;
  MutexLock lock(&mu_);
  queue_.insert(queue_.end(), std::make_move_iterator(releases.begin()),
                std::make_move_iterator(releases.end()));
  if (queue_.size() > options_.max_queued) {
    const size_t excess = queue_.size() - options_.max_queued;
    queue_.erase(queue_.begin(), queue_.begin() + excess);
    dropped_ += excess;
  }
  cv_.Signal();
}

void LeaseReleaser::Loop() {
  std::vector<LeaseRelease> batch;
  while (true) {
    {
      MutexLock lock(&mu_);
      cv_.WaitFor(std::chrono::milliseconds(100),
                  [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                    return stopping_ || !queue_.empty();
                  });
      if (queue_.empty() && stopping_) return;
      if (queue_.empty()) continue;
      // Let a few more gets finish: one call for all of them.
      if (!stopping_ && queue_.size() < options_.max_batch) {
        cv_.WaitFor(options_.linger, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return stopping_ || queue_.size() >= options_.max_batch;
        });
      }
      const size_t n = std::min(queue_.size(), options_.max_batch);
      batch.assign(std::make_move_iterator(queue_.begin()),
                   std::make_move_iterator(queue_.begin() + n));
      queue_.erase(queue_.begin(), queue_.begin() + n);
    }
    const bool sent = master_->ReleaseLeases(batch).ok();
    MutexLock lock(&mu_);
    (sent ? sent_ : dropped_) += batch.size();
  }
}

uint64_t LeaseReleaser::sent() const {
  MutexLock lock(&mu_);
  return sent_;
}

uint64_t LeaseReleaser::dropped() const {
  MutexLock lock(&mu_);
  return dropped_;
}

}  // namespace mooncake_tier
