#include "tests/support/round_barrier.h"

namespace mooncake_tier::testing {

RoundBarrier::RoundBarrier(size_t participants)
    : arrived_(participants), excused_(participants, false) {
  for (std::atomic<uint64_t>& a : arrived_) a.store(0);
}

void RoundBarrier::AwaitRound(uint64_t r) {
  if (round() >= r) return;
  MutexLock lock(&mu_);
  while (!stop_ && round_ < r) changed_.Wait();
}

void RoundBarrier::ArriveAndAwait(size_t p, uint64_t r) {
  arrived_.at(p).store(r);
  if (round() >= r) return;
  MutexLock lock(&mu_);
  // The arrival was stored without the lock: wake the driver to see it.
  changed_.SignalAll();
  while (!stop_ && round_ < r) changed_.Wait();
}

bool RoundBarrier::ArriveAndAwaitNext(size_t p) {
  MutexLock lock(&mu_);
  arrived_.at(p).store(round_ + 1);
  changed_.SignalAll();
  return AwaitRoundAfterLocked(round_);
}

bool RoundBarrier::AwaitNextRound() {
  MutexLock lock(&mu_);
  return AwaitRoundAfterLocked(round_);
}

void RoundBarrier::SetExcused(size_t p, bool excused) {
  MutexLock lock(&mu_);
  excused_.at(p) = excused;
  changed_.SignalAll();
}

bool RoundBarrier::Excused(size_t p) const {
  MutexLock lock(&mu_);
  return excused_.at(p);
}

void RoundBarrier::Stop() {
  MutexLock lock(&mu_);
  stop_ = true;
  changed_.SignalAll();
}

bool RoundBarrier::AllArrivedLocked(uint64_t r) const {
  for (size_t p = 0; p < arrived_.size(); ++p) {
    if (!excused_[p] && arrived_[p].load() < r) return false;
  }
  return true;
}

bool RoundBarrier::AwaitRoundAfterLocked(uint64_t seen) {
  while (!stop_ && round_ == seen) changed_.Wait();
  return !stop_;
}

}  // namespace mooncake_tier::testing
