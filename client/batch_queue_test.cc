#include "mooncake_tier/batch_queue.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace mooncake_tier {
namespace batch_queue_test {
namespace {

using std::chrono::milliseconds;

// Long enough never to be reached by a correct queue; only ends a broken
// test instead of hanging it.
constexpr milliseconds kLong = std::chrono::seconds(10);

// A Client over a map. PutBatch and GetIntoBatch can be held at a gate so
// that a test decides when a batch finishes. Counts the batches it runs.
class FakeClient final : public Client {
 public:
  // While closed, PutBatch and GetIntoBatch wait inside the call.
  void CloseGate() {
    MutexLock lock(&mu_);
    gate_open_ = false;
  }
  void OpenGate() {
    MutexLock lock(&mu_);
    gate_open_ = true;
    cv_.SignalAll();
  }
  // Returns once `n` calls have started.
  void AwaitStarted(int n) {
    MutexLock lock(&mu_);
    cv_.WaitFor(kLong,
                [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return calls_ >= n; });
  }
  int calls() const {
    MutexLock lock(&mu_);
    return calls_;
  }
  void SetGroup(const std::string& key, GroupStatus status) {
    MutexLock lock(&mu_);
    groups_[key] = std::move(status);
  }

  std::vector<Status> PutBatch(std::span<const PutItem> items) override {
    EnterGate();
    MutexLock lock(&mu_);
    std::vector<Status> out;
    for (const PutItem& item : items) {
      if (item.key.empty()) {
        out.emplace_back(ErrorReason::kInvalidKey, "empty key");
      } else if (objects_.contains(item.key)) {
        out.emplace_back(ErrorReason::kObjectExists, item.key);
      } else {
        objects_[item.key].assign(item.value.begin(), item.value.end());
        out.emplace_back();
      }
    }
    return out;
  }
  std::vector<Result<uint64_t>> GetIntoBatch(
      std::span<const GetIntoItem> items) override {
    EnterGate();
    MutexLock lock(&mu_);
    std::vector<Result<uint64_t>> out;
    for (const GetIntoItem& item : items) {
      auto it = objects_.find(item.key);
      if (it == objects_.end()) {
        out.push_back(Status(ErrorReason::kObjectNotFound, item.key));
      } else if (it->second.size() > item.buffer.size()) {
        out.push_back(Status(ErrorReason::kBufferTooSmall, item.key));
      } else {
        std::copy(it->second.begin(), it->second.end(), item.buffer.begin());
        out.emplace_back(static_cast<uint64_t>(it->second.size()));
      }
    }
    return out;
  }
  std::vector<Result<ExistsInfo>> ExistsBatch(
      std::span<const std::string> keys) override {
    MutexLock lock(&mu_);
    ++calls_;
    std::vector<Result<ExistsInfo>> out;
    for (const std::string& key : keys) {
      if (key.empty()) {
        out.push_back(Status(ErrorReason::kInvalidKey, "empty key"));
        continue;
      }
      ExistsInfo info;
      auto it = objects_.find(key);
      info.exists = it != objects_.end();
      if (info.exists) info.size = it->second.size();
      auto group = groups_.find(key);
      if (group != groups_.end()) info.group = group->second;
      out.push_back(std::move(info));
    }
    return out;
  }

  std::vector<Result<std::vector<std::byte>>> GetBatch(
      std::span<const std::string> keys) override {
    return {keys.size(), Unused()};
  }
  Result<PrefixInfo> ProbePrefix(std::span<const std::string>) override {
    return Unused();
  }
  std::vector<Status> RemoveBatch(std::span<const std::string> keys,
                                  RemoveOptions) override {
    return {keys.size(), Unused()};
  }
  std::vector<Result<GroupInfo>> GetGroupBatch(
      std::span<const std::string> ids) override {
    return {ids.size(), Unused()};
  }
  std::vector<Status> RemoveGroupBatch(std::span<const std::string> ids,
                                       RemoveOptions) override {
    return {ids.size(), Unused()};
  }
  Status CheckHealth() override { return Unused(); }
  Status RegisterBuffer(std::span<std::byte>) override { return Unused(); }
  Status UnregisterBuffer(std::span<std::byte>) override { return Unused(); }

 private:
  static Status Unused() {
    return Status(ErrorReason::kInternal, "not used by BatchQueue");
  }
  void EnterGate() {
    MutexLock lock(&mu_);
    ++calls_;
    cv_.SignalAll();
    while (!gate_open_) cv_.Wait();
  }

  mutable Mutex mu_;
  CondVar cv_{&mu_};
  bool gate_open_ ABSL_GUARDED_BY(mu_) = true;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::vector<std::byte>> objects_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, GroupStatus> groups_ ABSL_GUARDED_BY(mu_);
};

std::vector<std::byte> Pattern(size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = std::byte((i * 7 + seed) & 0xff);
  return out;
}

// Whether the eventfd is readable within `timeout` (0: now).
bool Readable(const BatchQueue& queue, milliseconds timeout = milliseconds(0)) {
  pollfd p{queue.event_fd(), POLLIN, 0};
  return poll(&p, 1, static_cast<int>(timeout.count())) == 1 &&
         (p.revents & POLLIN) != 0;
}

struct Fixture {
  explicit Fixture(BatchQueueOptions options = {})
      : fake(std::make_shared<FakeClient>()) {
    auto made = BatchQueue::Create(fake, options);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    if (made.ok()) queue = std::move(made).value();
  }
  std::shared_ptr<FakeClient> fake;
  std::unique_ptr<BatchQueue> queue;
};

ErrorReason ReasonOf(const Result<uint64_t>& r) { return r.status().reason(); }

TEST(BatchQueueTest, WaitReturnsPerItemResultsInOrder) {
  Fixture f;
  const std::vector<std::byte> a = Pattern(10, 1), b = Pattern(20, 2);
  Result<BatchTaskId> id = f.queue->SubmitPut(
      {{"a", a, {}}, {"", a, {}}, {"b", b, {}}, {"a", b, {}}});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_NE(*id, 0u);
  Result<BatchCompletion> done = f.queue->Wait(*id, kLong);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->id, *id);
  ASSERT_EQ(done->results.size(), 4u);
  EXPECT_EQ(*done->results[0], 0u);
  EXPECT_EQ(ReasonOf(done->results[1]), ErrorReason::kInvalidKey);
  EXPECT_EQ(*done->results[2], 0u);
  EXPECT_EQ(ReasonOf(done->results[3]), ErrorReason::kObjectExists);

  Result<BatchTaskId> empty = f.queue->SubmitExists({});
  ASSERT_TRUE(empty.ok());
  EXPECT_GT(*empty, *id);
  EXPECT_TRUE(f.queue->Wait(*empty, kLong)->results.empty());
  EXPECT_EQ(f.queue->pending(), 0u);
}

TEST(BatchQueueTest, GetIntoFillsTheBuffers) {
  Fixture f;
  const std::vector<std::byte> a = Pattern(100, 3), b = Pattern(7, 4);
  ASSERT_TRUE(f.fake->Put("a", a).ok() && f.fake->Put("b", b).ok());
  std::vector<std::byte> buf_a(128), buf_b(7), small(6), absent(8);
  Result<BatchTaskId> id = f.queue->SubmitGetInto(
      {{"a", buf_a}, {"b", buf_b}, {"a", small}, {"nope", absent}});
  ASSERT_TRUE(id.ok());
  Result<BatchCompletion> done = f.queue->Wait(*id, kLong);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  ASSERT_EQ(done->results.size(), 4u);
  EXPECT_EQ(*done->results[0], 100u);
  EXPECT_EQ(*done->results[1], 7u);
  EXPECT_EQ(ReasonOf(done->results[2]), ErrorReason::kBufferTooSmall);
  EXPECT_EQ(ReasonOf(done->results[3]), ErrorReason::kObjectNotFound);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), buf_a.begin()));
  EXPECT_EQ(buf_b, b);
}

TEST(BatchQueueTest, ExistsGivesSizesAndFailsAbsentKeysAndIncompleteGroups) {
  Fixture f;
  for (const char* key : {"plain", "filling", "complete", "broken"}) {
    ASSERT_TRUE(f.fake->Put(key, Pattern(42, 5)).ok());
  }
  f.fake->SetGroup("filling", {"g1", GroupState::kFilling, 2, 1});
  f.fake->SetGroup("complete", {"g2", GroupState::kComplete, 2, 2});
  f.fake->SetGroup("broken", {"g3", GroupState::kBroken, 2, 1});
  Result<BatchTaskId> id = f.queue->SubmitExists(
      {"plain", "absent", "filling", "complete", "broken", ""});
  ASSERT_TRUE(id.ok());
  Result<BatchCompletion> done = f.queue->Wait(*id, kLong);
  ASSERT_TRUE(done.ok());
  ASSERT_EQ(done->results.size(), 6u);
  EXPECT_EQ(*done->results[0], 42u);
  EXPECT_EQ(ReasonOf(done->results[1]), ErrorReason::kObjectNotFound);
  EXPECT_EQ(ReasonOf(done->results[2]), ErrorReason::kGroupIncomplete);
  EXPECT_EQ(*done->results[3], 42u);
  EXPECT_EQ(ReasonOf(done->results[4]), ErrorReason::kGroupIncomplete);
  EXPECT_EQ(ReasonOf(done->results[5]), ErrorReason::kInvalidKey);
}

TEST(BatchQueueTest, EventFdIsReadableExactlyWhileCompletionsWait) {
  Fixture f({.workers = 1});  // one worker: batches complete in order
  EXPECT_FALSE(Readable(*f.queue));
  f.fake->CloseGate();
  const std::vector<std::byte> v = Pattern(8, 6);
  const BatchTaskId first = *f.queue->SubmitPut({{"k1", v, {}}});
  f.fake->AwaitStarted(1);
  EXPECT_FALSE(Readable(*f.queue));  // running is not completed
  f.fake->OpenGate();
  ASSERT_TRUE(Readable(*f.queue, kLong));
  const BatchTaskId second = *f.queue->SubmitPut({{"k2", v, {}}});
  ASSERT_TRUE(f.queue->Wait(second, kLong).ok());
  EXPECT_TRUE(Readable(*f.queue));  // `first` still waits
  std::vector<BatchCompletion> got = f.queue->Collect();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, first);
  EXPECT_FALSE(Readable(*f.queue));
  EXPECT_TRUE(f.queue->Collect().empty());

  // Readable again for later completions, until the last is taken.
  const BatchTaskId third = *f.queue->SubmitExists({"k1"});
  const BatchTaskId fourth = *f.queue->SubmitExists({"k2"});
  const BatchTaskId fifth = *f.queue->SubmitExists({"k1"});
  ASSERT_TRUE(f.queue->Wait(fifth, kLong).ok());
  EXPECT_TRUE(f.queue->Collect(0).empty());
  EXPECT_TRUE(Readable(*f.queue));
  EXPECT_EQ(f.queue->Collect(1).at(0).id, third);
  EXPECT_TRUE(Readable(*f.queue));
  EXPECT_EQ(f.queue->Collect(1).at(0).id, fourth);
  EXPECT_FALSE(Readable(*f.queue));
  EXPECT_EQ(f.queue->pending(), 0u);
}

TEST(BatchQueueTest, WaitOnAnUnknownOrCollectedIdIsTaskNotFound) {
  Fixture f;
  EXPECT_EQ(f.queue->Wait(0, milliseconds(0)).status().reason(),
            ErrorReason::kTaskNotFound);
  EXPECT_EQ(f.queue->Wait(12345, milliseconds(0)).status().reason(),
            ErrorReason::kTaskNotFound);
  BatchTaskId id = *f.queue->SubmitExists({"k"});
  ASSERT_TRUE(f.queue->Wait(id, kLong).ok());
  EXPECT_EQ(f.queue->Wait(id, kLong).status().reason(),
            ErrorReason::kTaskNotFound);
  id = *f.queue->SubmitExists({"k"});
  ASSERT_TRUE(Readable(*f.queue, kLong));
  ASSERT_EQ(f.queue->Collect().size(), 1u);
  EXPECT_EQ(f.queue->Wait(id, kLong).status().reason(),
            ErrorReason::kTaskNotFound);
}

TEST(BatchQueueTest, WaitTimesOutWhileTheBatchRunsAndSucceedsAfter) {
  Fixture f;
  f.fake->CloseGate();
  const std::vector<std::byte> v = Pattern(8, 7);
  BatchTaskId id = *f.queue->SubmitPut({{"k", v, {}}});
  f.fake->AwaitStarted(1);
  EXPECT_EQ(f.queue->Wait(id, milliseconds(0)).status().reason(),
            ErrorReason::kTimeout);
  EXPECT_EQ(f.queue->Wait(id, milliseconds(20)).status().reason(),
            ErrorReason::kTimeout);
  EXPECT_EQ(f.queue->pending(), 1u);
  f.fake->OpenGate();
  Result<BatchCompletion> done = f.queue->Wait(id, kLong);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(*done->results.at(0), 0u);
  EXPECT_EQ(f.queue->pending(), 0u);
}

TEST(BatchQueueTest, QueueFullAtMaxPendingUntilSomethingIsCollected) {
  Fixture f({.workers = 1, .max_pending = 3});
  f.fake->CloseGate();
  const std::vector<std::byte> v = Pattern(8, 8);
  std::vector<BatchTaskId> ids;
  for (const char* key : {"a", "b", "c"}) {
    Result<BatchTaskId> id = f.queue->SubmitPut({{key, v, {}}});
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    ids.push_back(*id);
  }
  f.fake->AwaitStarted(1);  // one running, two queued
  EXPECT_EQ(f.queue->SubmitPut({{"d", v, {}}}).status().reason(),
            ErrorReason::kQueueFull);
  EXPECT_EQ(f.queue->pending(), 3u);
  f.fake->OpenGate();
  ASSERT_TRUE(f.queue->Wait(ids[2], kLong).ok());
  f.fake->CloseGate();
  ASSERT_TRUE(f.queue->SubmitPut({{"d", v, {}}}).ok());
  f.fake->AwaitStarted(4);
  // Completed but not collected still counts.
  EXPECT_EQ(f.queue->SubmitExists({"a"}).status().reason(),
            ErrorReason::kQueueFull);
  EXPECT_EQ(f.queue->Collect().size(), 2u);  // a and b; d is held
  ASSERT_TRUE(f.queue->SubmitExists({"a"}).ok());
  f.fake->OpenGate();
  while (f.queue->pending() > 0) {
    ASSERT_TRUE(Readable(*f.queue, kLong));
    f.queue->Collect();
  }
  EXPECT_EQ(f.fake->calls(), 5);  // a, b, c, d, the probe: no rejected one
}

TEST(BatchQueueTest, StopAbortsQueuedBatchesAndLaterSubmits) {
  Fixture f({.workers = 1, .max_pending = 8});
  f.fake->CloseGate();
  const std::vector<std::byte> v = Pattern(8, 9);
  BatchTaskId running = *f.queue->SubmitPut({{"a", v, {}}});
  f.fake->AwaitStarted(1);
  std::vector<std::byte> buf(8, std::byte{0xAA});
  BatchTaskId queued = *f.queue->SubmitGetInto({{"a", buf}, {"a", buf}});
  f.queue->Stop();
  f.queue->Stop();
  EXPECT_EQ(f.queue->SubmitExists({"a"}).status().reason(),
            ErrorReason::kAborted);
  Result<BatchCompletion> aborted = f.queue->Wait(queued, milliseconds(0));
  ASSERT_TRUE(aborted.ok()) << aborted.status().ToString();
  ASSERT_EQ(aborted->results.size(), 2u);
  EXPECT_EQ(ReasonOf(aborted->results[1]), ErrorReason::kAborted);
  f.fake->OpenGate();
  EXPECT_TRUE(f.queue->Wait(running, kLong).ok());
  EXPECT_EQ(f.queue->pending(), 0u);
  EXPECT_EQ(f.fake->calls(), 1);
  EXPECT_EQ(buf, std::vector<std::byte>(8, std::byte{0xAA}));
}

TEST(BatchQueueTest, DestructorLeavesQueuedBatchesUnstartedAndReturns) {
  Fixture f({.workers = 1, .max_pending = 8});
  f.fake->CloseGate();
  const std::vector<std::byte> v = Pattern(8, 10);
  ASSERT_TRUE(f.queue->SubmitPut({{"a", v, {}}}).ok());
  f.fake->AwaitStarted(1);
  std::vector<std::vector<std::byte>> bufs(4, std::vector<std::byte>(8));
  for (auto& buf : bufs) ASSERT_TRUE(f.queue->SubmitGetInto({{"a", buf}}).ok());
  const int fd = f.queue->event_fd();
  EXPECT_FALSE(Readable(*f.queue));
  std::thread destroy([&] { f.queue.reset(); });
  // The destructor stops first: the queued batches complete ABORTED (and are
  // dropped later), which makes the eventfd readable; it stays open until
  // the running batch ends, which the gate holds.
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, static_cast<int>(kLong.count())), 1);
  f.fake->OpenGate();
  destroy.join();
  EXPECT_EQ(f.fake->calls(), 1);
  for (const auto& buf : bufs) EXPECT_EQ(buf, std::vector<std::byte>(8));
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);  // closed
}

// Submitters (half of them waiting for their own tasks), collectors and
// workers on real threads, for ThreadSanitizer. Every task is answered once,
// with its own results, and pending() never passes max_pending.
TEST(BatchQueueTest, ConcurrentSubmittersWaitersAndCollectors) {
  constexpr int kSubmitters = 4, kPerSubmitter = 150, kTotal = 600;
  constexpr size_t kMaxPending = 8;
  Fixture f({.workers = 3, .max_pending = kMaxPending});
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(f.fake->Put("k" + std::to_string(i), Pattern(i + 1, i)).ok());
  }
  struct Ledger {
    Mutex mu;
    std::map<BatchTaskId, uint64_t> expected ABSL_GUARDED_BY(mu);
    std::map<BatchTaskId, uint64_t> answered ABSL_GUARDED_BY(mu);
  } ledger;
  std::atomic<int> done{0}, wrong{0};
  auto record = [&](const BatchCompletion& c) {
    MutexLock lock(&ledger.mu);
    if (c.results.size() != 1 || !c.results[0].ok() ||
        !ledger.answered.emplace(c.id, *c.results[0]).second) {
      wrong.fetch_add(1);
    }
    done.fetch_add(1);
  };
  // Get buffers, one per task: they outlive every thread.
  std::vector<std::vector<std::byte>> buffers(kTotal,
                                              std::vector<std::byte>(16));
  auto key_of = [](int task) { return task % 10; };
  auto submitter = [&](int t) {
    for (int n = 0; n < kPerSubmitter;) {
      const int task = t * kPerSubmitter + n, i = key_of(task);
      const std::string key = "k" + std::to_string(i);
      Result<BatchTaskId> id =
          task % 2 == 0 ? f.queue->SubmitExists({key})
                        : f.queue->SubmitGetInto({{key, buffers[task]}});
      if (f.queue->pending() > kMaxPending) wrong.fetch_add(1);
      if (!id.ok()) {
        if (id.status().reason() != ErrorReason::kQueueFull) wrong.fetch_add(1);
        std::this_thread::yield();
        continue;
      }
      ++n;
      {
        MutexLock lock(&ledger.mu);
        ledger.expected[*id] = i + 1;
      }
      if (t % 2 == 1) continue;
      Result<BatchCompletion> c = f.queue->Wait(*id, kLong);
      if (c.ok()) {
        record(*c);
      } else if (c.status().reason() != ErrorReason::kTaskNotFound) {
        wrong.fetch_add(1);  // TASK_NOT_FOUND: a collector took it
      }
    }
  };
  auto collector = [&] {
    while (done.load() < kTotal) {
      Readable(*f.queue, milliseconds(2));  // a poll interval, not an oracle
      for (const BatchCompletion& c : f.queue->Collect(3)) record(c);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kSubmitters; ++t) threads.emplace_back(submitter, t);
  for (int c = 0; c < 2; ++c) threads.emplace_back(collector);
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(f.queue->pending(), 0u);
  EXPECT_FALSE(Readable(*f.queue));
  for (int task = 1; task < kTotal; task += 2) {
    const int i = key_of(task);
    const std::vector<std::byte> want = Pattern(i + 1, i);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), buffers[task].begin()));
  }
  MutexLock lock(&ledger.mu);
  EXPECT_EQ(ledger.answered, ledger.expected);
  EXPECT_EQ(ledger.answered.size(), size_t{kTotal});
}

TEST(BatchQueueTest, BadOptionsAreRejected) {
  auto fake = std::make_shared<FakeClient>();
  for (BatchQueueOptions bad :
       {BatchQueueOptions{.workers = 0}, BatchQueueOptions{.workers = -1},
        BatchQueueOptions{.workers = 65}, BatchQueueOptions{.max_pending = 0},
        BatchQueueOptions{.max_pending = (size_t{1} << 16) + 1}}) {
    EXPECT_EQ(BatchQueue::Create(fake, bad).status().reason(),
              ErrorReason::kInvalidArgument);
  }
  EXPECT_EQ(BatchQueue::Create(nullptr).status().reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_TRUE(BatchQueue::Create(fake, {.workers = 64, .max_pending = 1}).ok());
}

}  // namespace
}  // namespace batch_queue_test
}  // namespace mooncake_tier
