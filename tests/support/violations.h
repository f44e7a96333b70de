#pragma once

// Invariant violations seen on any thread of a stress test, reported once at
// the end (gtest assertions from many threads would flood the log). Keeps
// the count and the first few descriptions.
//
// Thread safety: thread-safe.

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace mooncake_tier::testing {

class Violations {
 public:
  void Add(std::string what) {
    MutexLock lock(&mu_);
    ++count_;
    if (kept_.size() < kKept) kept_.push_back(std::move(what));
  }
  void Check(bool ok, const std::string& what) {
    if (!ok) Add(what);
  }
  uint64_t count() const {
    MutexLock lock(&mu_);
    return count_;
  }
  std::string Report() const {
    MutexLock lock(&mu_);
    std::ostringstream out;
    out << count_ << " violation(s); the first ones:\n";
    for (const std::string& v : kept_) out << "  " << v << "\n";
    return out.str();
  }

 private:
  static constexpr size_t kKept = 25;
  mutable Mutex mu_;
  uint64_t count_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> kept_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier::testing
