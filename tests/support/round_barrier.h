#pragma once

// RoundBarrier: simulated time in rounds, for stress tests whose threads
// must keep pace with a ManualClock however the scheduler runs them.
//
// Rounds are numbered from 0 (started before any Advance). One driver
// thread calls Advance to start the next round (moving the clock inside
// it); it waits until every participant has arrived, that is finished its
// work of the current round. Participants are numbered 0..participants-1
// and say they are done with rounds before r by arriving at r; one that is
// excused (a client that finished, a node that chose silence) is not waited
// for. Other threads may wait for a round without taking part. So no
// participant falls behind the clock, and none runs ahead of it.
//
// Thread safety: thread-safe. Each participant id is used by one thread at
// a time; Advance by one driver thread, which also calls Stop once the run
// is over (Stop may come from any thread). Callbacks passed to Advance run
// with the barrier's lock held and must not call back into it.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace mooncake_tier::testing {

class RoundBarrier {
 public:
  // REQUIRES: every participant id passed later is < `participants`.
  explicit RoundBarrier(size_t participants);
  RoundBarrier(const RoundBarrier&) = delete;
  RoundBarrier& operator=(const RoundBarrier&) = delete;

  // The round that has started; lock-free.
  uint64_t round() const { return started_.load(std::memory_order_acquire); }

  // Waits until round `r` has started or the barrier stopped, without
  // taking part: returns at once, without the lock, when `r` already
  // started.
  void AwaitRound(uint64_t r);

  // Participant `p` is done with every round before `r`, then waits until
  // round `r` has started or the barrier stopped. When `r` already started
  // it returns at once without the lock: the driver then needs a later
  // arrival from `p`, which takes the slow path and wakes it.
  void ArriveAndAwait(size_t p, uint64_t r);

  // Participant `p` is done with the current round; waits for the next one.
  // False once the barrier stopped (even if a round started meanwhile).
  bool ArriveAndAwaitNext(size_t p);

  // Waits for the round after the current one, without taking part. False
  // once the barrier stopped.
  bool AwaitNextRound();

  // Whether Advance waits for participant `p`.
  void SetExcused(size_t p, bool excused);
  bool Excused(size_t p) const;

  // The driver: waits until every participant not excused arrived at the
  // next round, runs `advance` (the lock held: move the clock there), starts
  // the next round and wakes every waiter. False, without advancing, once
  // the barrier stopped.
  template <typename Fn>
  bool Advance(Fn&& advance) {
    MutexLock lock(&mu_);
    while (!stop_ && !AllArrivedLocked(round_ + 1)) changed_.Wait();
    if (stop_) return false;
    advance();
    ++round_;
    started_.store(round_, std::memory_order_release);
    changed_.SignalAll();
    return true;
  }

  // Ends the run: every waiter returns, and Advance no longer advances.
  void Stop();

 private:
  bool AllArrivedLocked(uint64_t r) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits while the round is `seen`; !stop_.
  bool AwaitRoundAfterLocked(uint64_t seen) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  CondVar changed_{&mu_};
  uint64_t round_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> started_{0};  // round_, readable without mu_
  // Per participant: the round it arrived at. Atomic because ArriveAndAwait
  // stores it without mu_; read by the driver under mu_.
  std::vector<std::atomic<uint64_t>> arrived_;
  std::vector<bool> excused_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier::testing
