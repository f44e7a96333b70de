#include "base/periodic_thread.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "gtest/gtest.h"

namespace mooncake_tier {
namespace periodic_thread_test {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Deadlines are generous: a loaded 2-core machine may stall any thread for
// a while, and these tests check what happens, not how fast.
constexpr seconds kPatience(10);

// Polls `done` until it holds (true) or kPatience passes (false).
template <typename F>
bool Eventually(F done) {
  const auto until = std::chrono::steady_clock::now() + kPatience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

// Runs `stop` on another thread; true when it returned within kPatience.
template <typename F>
bool ReturnsInTime(F stop) {
  std::future<void> done = std::async(std::launch::async, stop);
  return done.wait_for(kPatience) == std::future_status::ready;
}

TEST(PeriodicThreadTest, RunsTheCallbackRepeatedly) {
  std::atomic<int> ticks{0};
  PeriodicThread thread;
  EXPECT_FALSE(thread.running());
  thread.Start(milliseconds(1), [&] { ticks.fetch_add(1); });
  EXPECT_TRUE(thread.running());
  EXPECT_TRUE(Eventually([&] { return ticks.load() >= 5; }));
  thread.Stop();
  EXPECT_FALSE(thread.running());
  // Never called once Stop returned.
  const int after_stop = ticks.load();
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(ticks.load(), after_stop);
}

TEST(PeriodicThreadTest, WaitsAnIntervalBeforeTheFirstCall) {
  std::atomic<int> ticks{0};
  PeriodicThread thread;
  thread.Start(hours(1), [&] { ticks.fetch_add(1); });
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_TRUE(ReturnsInTime([&] { thread.Stop(); }));
  EXPECT_EQ(ticks.load(), 0);
}

TEST(PeriodicThreadTest, StopWakesALongWait) {
  PeriodicThread thread;
  thread.Start(hours(1), [] {});
  EXPECT_TRUE(ReturnsInTime([&] { thread.Stop(); }));
  EXPECT_FALSE(thread.running());
}

TEST(PeriodicThreadTest, StopWaitsForACallInProgress) {
  std::atomic<bool> in_tick{false};
  std::atomic<bool> release{false};
  std::atomic<bool> finished{false};
  PeriodicThread thread;
  thread.Start(milliseconds(1), [&] {
    if (finished.load()) return;
    in_tick.store(true);
    while (!release.load()) std::this_thread::sleep_for(milliseconds(1));
    finished.store(true);
  });
  ASSERT_TRUE(Eventually([&] { return in_tick.load(); }));
  std::future<void> stopped =
      std::async(std::launch::async, [&] { thread.Stop(); });
  EXPECT_EQ(stopped.wait_for(milliseconds(50)), std::future_status::timeout);
  release.store(true);
  ASSERT_EQ(stopped.wait_for(kPatience), std::future_status::ready);
  EXPECT_TRUE(finished.load());
}

TEST(PeriodicThreadTest, StopTwiceAndStopWithoutStartAreFine) {
  PeriodicThread never_started;
  never_started.Stop();
  never_started.Stop();
  EXPECT_FALSE(never_started.running());

  PeriodicThread thread;
  thread.Start(hours(1), [] {});
  EXPECT_TRUE(ReturnsInTime([&] {
    thread.Stop();
    thread.Stop();
  }));
  EXPECT_FALSE(thread.running());
}

TEST(PeriodicThreadTest, StartsAgainAfterStop) {
  std::atomic<int> ticks{0};
  PeriodicThread thread;
  thread.Start(hours(1), [&] { ticks.fetch_add(1); });
  thread.Stop();
  thread.Start(milliseconds(1), [&] { ticks.fetch_add(1); });
  EXPECT_TRUE(Eventually([&] { return ticks.load() >= 2; }));
  thread.Stop();
}

TEST(PeriodicThreadTest, DestructorStopsARunningThread) {
  auto ticks = std::make_shared<std::atomic<int>>(0);
  auto thread = std::make_unique<PeriodicThread>();
  thread->Start(milliseconds(1), [ticks] { ticks->fetch_add(1); });
  ASSERT_TRUE(Eventually([&] { return ticks->load() >= 1; }));
  EXPECT_TRUE(ReturnsInTime([&] { thread.reset(); }));
  const int after = ticks->load();
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(ticks->load(), after);

  PeriodicThread long_wait;
  long_wait.Start(hours(1), [] {});
  // Its destructor, at the end of the test, must not sleep out the hour
  // (the test's timeout would fail it).
}

TEST(PeriodicThreadTest, ConcurrentStopsBothReturnAfterTheThreadEnded) {
  PeriodicThread thread;
  thread.Start(hours(1), [] {});
  std::future<void> a = std::async(std::launch::async, [&] { thread.Stop(); });
  std::future<void> b = std::async(std::launch::async, [&] { thread.Stop(); });
  ASSERT_EQ(a.wait_for(kPatience), std::future_status::ready);
  ASSERT_EQ(b.wait_for(kPatience), std::future_status::ready);
  EXPECT_FALSE(thread.running());
}

}  // namespace
}  // namespace periodic_thread_test
}  // namespace mooncake_tier
