#pragma once

// Waiting on another process (a daemon starting, a node going away): polls
// a condition until it holds or a deadline passes. Only for what a test
// cannot drive with a manual clock (child processes, real sockets).

#include <chrono>
#include <thread>

namespace mooncake_tier::testing {

// Polls `done` every 50 ms until it returns true (then true) or `timeout`
// passes (then false).
template <typename F>
bool Eventually(F done, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace mooncake_tier::testing
