#pragma once

// Rounds: the lockstep of group_stress_test.cc's client, node and driver
// threads over simulated time.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace mooncake_tier::group_stress {

constexpr int kOpsPerRound = 3;  // ops of each client per step of time

// Simulated time in rounds. Client op n waits for round n / kOpsPerRound;
// the driver starts round r+1 (advancing the clock) once every running
// client reached op (r+1) * kOpsPerRound and the node finished round r. So
// clients and clock keep pace whatever the scheduler does, and the node
// reports each offload in the round it was handed out: only the offloads
// it holds back can time out.
class Rounds {
 public:
  explicit Rounds(int clients) : reached_(clients), done_(clients) {
    for (int c = 0; c < clients; ++c) {
      reached_[c].store(0);
      done_[c].store(false);
    }
  }
  // Client `c` is at op `op`; waits until its round has started.
  void AwaitOp(int c, uint64_t op) {
    reached_[c].store(op);
    const uint64_t round = op / kOpsPerRound;
    if (started_.load() >= round) return;
    std::unique_lock<std::mutex> lock(mu_);
    changed_.notify_all();
    changed_.wait(lock, [&] { return stop_ || round_ >= round; });
  }
  void ClientDone(int c) {
    done_[c].store(true);
    std::lock_guard<std::mutex> lock(mu_);
    changed_.notify_all();
  }
  bool AllClientsDone() const {
    return std::all_of(done_.begin(), done_.end(),
                       [](const auto& d) { return d.load(); });
  }
  // The node: waits for a round after `seen`; 0 once the run stops.
  uint64_t NodeWait(uint64_t seen) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return stop_ || round_ != seen; });
    return stop_ ? 0 : round_;
  }
  void NodeDone(uint64_t round) {
    std::lock_guard<std::mutex> lock(mu_);
    node_done_ = round;
    changed_.notify_all();
  }
  // The driver: waits for the clients and the node, runs `advance` and
  // starts the next round.
  template <typename Fn>
  void Next(Fn&& advance) {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t need = (round_ + 1) * kOpsPerRound;
    changed_.wait(lock, [&] {
      for (size_t c = 0; c < done_.size(); ++c) {
        if (!done_[c].load() && reached_[c].load() < need) return false;
      }
      return node_done_ == round_;
    });
    advance();
    ++round_;
    started_.store(round_);
    changed_.notify_all();
  }
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::atomic<uint64_t>> reached_;
  std::vector<std::atomic<bool>> done_;
  std::atomic<uint64_t> started_{0};  // round_, readable without mu_
  uint64_t round_ = 0;                // guarded by mu_
  uint64_t node_done_ = 0;            // guarded by mu_
  bool stop_ = false;                 // guarded by mu_
};

}  // namespace mooncake_tier::group_stress
