// Helpers shared by the LeaderElector tests (leader_elector_test.cc against
// a real etcd, leader_elector_fake_test.cc on a manual clock and a fake
// gateway): candidates, what their callbacks reported, and waits.

#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "ha/leader_elector.h"

namespace mooncake_tier::ha::elector_test {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

inline constexpr milliseconds kLong(
    5000);  // bound of waits that should be short

inline bool WaitUntil(const std::function<bool()>& done, milliseconds timeout) {
  const auto until = steady_clock::now() + timeout;
  while (!done()) {
    if (steady_clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return true;
}

inline milliseconds Since(steady_clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
}

// Nanoseconds, so that failed comparisons of instants print numbers.
inline int64_t Ns(steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

// What the callbacks reported, with when.
class Events {
 public:
  LeaderElectorCallbacks Callbacks() {
    return {[this](Term term) {
              MutexLock lock(&mu_);
              elected_.push_back(term);
            },
            [this](Term term, StepDownReason reason) {
              MutexLock lock(&mu_);
              deposed_.push_back({term, reason, steady_clock::now()});
            }};
  }

  struct Deposed {
    Term term;
    StepDownReason reason;
    steady_clock::time_point at;
  };
  std::vector<Term> elected() const {
    MutexLock lock(&mu_);
    return elected_;
  }
  std::vector<Deposed> deposed() const {
    MutexLock lock(&mu_);
    return deposed_;
  }
  // The first step-down, waiting up to kLong for it.
  std::optional<Deposed> FirstDeposed() const {
    std::optional<Deposed> first;
    WaitUntil(
        [&] {
          MutexLock lock(&mu_);
          if (!deposed_.empty()) first = deposed_.front();
          return first.has_value();
        },
        kLong);
    return first;
  }

 private:
  mutable Mutex mu_;
  std::vector<Term> elected_ ABSL_GUARDED_BY(mu_);
  std::vector<Deposed> deposed_ ABSL_GUARDED_BY(mu_);
};

// One master process's elector and what it reported.
struct Candidate {
  Events events;
  std::unique_ptr<LeaderElector> elector;  // after `events`, which it calls
};

inline LeaderElectorOptions Options(const std::string& endpoint,
                                    const std::string& cluster,
                                    const std::string& value) {
  LeaderElectorOptions options;
  options.etcd.endpoints = {endpoint};
  options.cluster = cluster;
  options.value = value;
  options.lease_ttl = std::chrono::seconds(1);
  return options;
}

inline std::unique_ptr<Candidate> StartCandidate(LeaderElectorOptions options) {
  auto candidate = std::make_unique<Candidate>();
  Result<std::unique_ptr<LeaderElector>> elector =
      LeaderElector::Create(std::move(options), candidate->events.Callbacks());
  EXPECT_TRUE(elector.ok()) << elector.status().ToString();
  if (!elector.ok()) return nullptr;
  candidate->elector = std::move(elector).value();
  const Status started = candidate->elector->Start();
  EXPECT_TRUE(started.ok()) << started.ToString();
  return candidate;
}

}  // namespace mooncake_tier::ha::elector_test
