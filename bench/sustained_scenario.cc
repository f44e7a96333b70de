#include "bench/sustained_scenario.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/byte_units.h"
#include "base/mutex.h"
#include "bench/bench_util.h"
#include "bench/raw_device.h"
#include "bench/remote_store.h"

namespace mooncake_tier::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::duration;

// DRAM of a spawned store: kSpawnDram x scale, at least kMinSpawnDram.
constexpr uint64_t kSpawnDram = 256 * kMiB;
constexpr uint64_t kMinSpawnDram = 64 * kMiB;
// The stream is this many times DRAM; a spawned store's SSD is this many
// times DRAM, so that it holds the whole stream: of 16 D the store counts
// about 13 D of 64 KiB objects (a 4 KiB header block each, room to compact
// and for dead records) and starts evicting at 90 % of that. At 12 D the
// last part of a 64 KiB stream pushed its first objects out.
constexpr uint64_t kStreamOverDram = 10;
constexpr uint64_t kSsdOverDram = 16;
constexpr uint32_t kSustainedGroupSize = 4;
// Every kSampleEvery-th object of a thread's stream is read back, once
// kReadBackLag objects later (a quarter of the thread's stream when that
// is shorter, so short streams read back too) and once after the stream.
constexpr size_t kSampleEvery = 50;
constexpr size_t kReadBackLag = 500;
// Objects per GetIntoBatch of the final pass: the landing buffer's slots.
constexpr size_t kFinalReadBatch = 4;
// Raw baseline: at most kRawCap x scale bytes, at least kMinRawBytes.
constexpr uint64_t kRawCap = 2 * kGiB;
constexpr uint64_t kMinRawBytes = 64 * kMiB;
// Every object carries a key-derived word every kStampStride bytes.
constexpr uint64_t kStampStride = 4096;
constexpr auto kProgressPeriod = std::chrono::seconds(5);
constexpr size_t kSustainedRemoveBatch = 256;

struct Config {
  uint64_t object_bytes;
  bool grouped;
  size_t batch;  // objects per PutBatch call
};
constexpr Config kConfigs[] = {{64 * kKiB, false, 4},
                               {64 * kKiB, true, kSustainedGroupSize},
                               {kMiB, false, 1},
                               {kMiB, true, kSustainedGroupSize}};

std::string Label(const Config& config) {
  return HumanBytes(config.object_bytes, ByteUnit::kGiB) +
         (config.grouped ? " objects in groups of 4" : " objects alone");
}

double Gbps(uint64_t bytes, double seconds) {
  return Ratio(static_cast<double>(bytes), seconds) / 1e9;
}

double Seconds(SteadyClock::duration d) { return duration<double>(d).count(); }

// One configuration's stream: thread t puts objects 0..per_thread-1 of its
// own, `config.batch` per call.
struct StreamPlan {
  std::string prefix;  // unique to this process and configuration
  Config config{};
  int threads = 0;
  size_t per_thread = 0;  // whole calls
  uint64_t dram_bytes = 0;

  uint64_t planned_bytes() const {
    return per_thread * threads * config.object_bytes;
  }
};

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

StreamPlan MakePlan(const std::string& run_prefix, const Config& config,
                    int threads, uint64_t dram_bytes) {
  StreamPlan plan;
  plan.prefix = run_prefix + "/" + std::to_string(config.object_bytes) +
                (config.grouped ? "/g" : "/u");
  plan.config = config;
  plan.threads = threads;
  plan.dram_bytes = dram_bytes;
  const uint64_t objects =
      CeilDiv(kStreamOverDram * dram_bytes, config.object_bytes);
  plan.per_thread =
      CeilDiv(CeilDiv(objects, threads), config.batch) * config.batch;
  return plan;
}

// Grouped, thread t's object i is member i % 4 of group i / 4.
std::string GroupId(const StreamPlan& plan, int t, size_t i) {
  return plan.prefix + "/" + std::to_string(t) + "/g" +
         std::to_string(i / kSustainedGroupSize);
}

std::string ObjectKey(const StreamPlan& plan, int t, size_t i) {
  if (plan.config.grouped) {
    return GroupId(plan, t, i) + "/" + std::to_string(i % kSustainedGroupSize);
  }
  return plan.prefix + "/" + std::to_string(t) + "/" + std::to_string(i);
}

// Object content. Every object is one background pattern with the first
// 8 bytes of every 4 KiB replaced by a word of its key and the offset:
// writing a key's object into a slot that holds the background (or
// another key's object) rewrites only those words, and a reader checks
// every byte without keeping what was put.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t KeySeed(std::string_view key) {
  uint64_t hash = 0xCBF29CE484222325ull;  // FNV-1a
  for (const char c : key) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  }
  return Mix(hash);
}

void FillBackground(std::span<std::byte> object) {
  for (size_t at = 0; at + 8 <= object.size(); at += 8) {
    const uint64_t word = Mix(at);
    std::memcpy(&object[at], &word, sizeof(word));
  }
}

void StampKey(std::span<std::byte> object, uint64_t seed) {
  for (size_t at = 0; at + 8 <= object.size(); at += kStampStride) {
    const uint64_t word = Mix(seed + at);
    std::memcpy(&object[at], &word, sizeof(word));
  }
}

// Bytes of `got` that differ from `expected`, a missing tail included.
uint64_t CountWrongBytes(std::span<const std::byte> got,
                         std::span<const std::byte> expected) {
  const size_t common = std::min(got.size(), expected.size());
  uint64_t wrong = std::max(got.size(), expected.size()) - common;
  if (std::memcmp(got.data(), expected.data(), common) == 0) return wrong;
  for (size_t i = 0; i < common; ++i) wrong += got[i] != expected[i] ? 1 : 0;
  return wrong;
}

// When the bytes stored first exceeded DRAM, and how many were stored then.
struct DramFull {
  SteadyClock::time_point at;
  uint64_t stored = 0;
};

// What the threads of one stream share: bytes stored, the moment DRAM
// filled, failures by reason, and how many threads are done.
//
// Thread safety: thread-safe.
class StreamTally {
 public:
  StreamTally(uint64_t dram_bytes, int threads)
      : dram_bytes_(dram_bytes), threads_(threads) {}

  // One call's objects that were stored.
  void AddStored(uint64_t bytes) {
    const uint64_t after = stored_.fetch_add(bytes) + bytes;
    // Exactly one call crosses the line.
    if (after > dram_bytes_ && after - bytes <= dram_bytes_) {
      MutexLock lock(&mu_);
      full_ = DramFull{SteadyClock::now(), after};
    }
  }
  void AddPutFailure(ErrorReason reason) {
    MutexLock lock(&mu_);
    ++put_failures_[reason];
  }
  void AddReadFailure(ErrorReason reason) {
    MutexLock lock(&mu_);
    ++read_failures_[reason];
  }
  void ThreadDone() {
    MutexLock lock(&mu_);
    ++done_;
    done_cv_.SignalAll();
  }
  // True once every thread is done; false when `timeout` passed first.
  bool WaitDone(std::chrono::milliseconds timeout) {
    MutexLock lock(&mu_);
    return done_cv_.WaitFor(timeout, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return done_ == threads_;
    });
  }

  uint64_t stored() const { return stored_.load(); }
  std::optional<DramFull> dram_full() const {
    MutexLock lock(&mu_);
    return full_;
  }
  uint64_t put_failures() const {
    MutexLock lock(&mu_);
    uint64_t total = 0;
    for (const auto& [reason, count] : put_failures_) total += count;
    return total;
  }
  // "failed puts 3 (NO_SPACE 2, TIMEOUT 1), failed reads 0".
  std::string FailureSummary() const {
    MutexLock lock(&mu_);
    return "failed puts " + Counts(put_failures_) + ", failed reads " +
           Counts(read_failures_);
  }

 private:
  static std::string Counts(const std::map<ErrorReason, uint64_t>& counts) {
    uint64_t total = 0;
    std::string by_reason;
    for (const auto& [reason, count] : counts) {
      total += count;
      by_reason += (by_reason.empty() ? "" : ", ") +
                   std::string(ReasonName(reason)) + " " +
                   std::to_string(count);
    }
    return std::to_string(total) +
           (by_reason.empty() ? "" : " (" + by_reason + ")");
  }

  const uint64_t dram_bytes_;
  const int threads_;
  std::atomic<uint64_t> stored_{0};
  mutable Mutex mu_;
  CondVar done_cv_{&mu_};
  int done_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<DramFull> full_ ABSL_GUARDED_BY(mu_);
  std::map<ErrorReason, uint64_t> put_failures_ ABSL_GUARDED_BY(mu_);
  std::map<ErrorReason, uint64_t> read_failures_ ABSL_GUARDED_BY(mu_);
};

// One client thread's memory and figures; only that thread touches it
// while the stream runs.
struct StreamThread {
  std::vector<std::byte> source;    // one call's objects, registered
  std::vector<std::byte> landing;   // kFinalReadBatch objects, registered
  std::vector<std::byte> expected;  // one object, what a read should give
  std::vector<uint8_t> stored;      // per object: it (and its group) stored
  std::vector<double> put_ms;       // per PutBatch call
  uint64_t reads = 0;               // sample objects asked for
  uint64_t read_failed = 0;
  uint64_t wrong_bytes = 0;
};

std::vector<StreamThread> MakeThreads(Client& client, const StreamPlan& plan,
                                      ResultSink& sink) {
  const uint64_t size = plan.config.object_bytes;
  std::vector<StreamThread> states(plan.threads);
  Status registered;
  for (StreamThread& s : states) {
    s.source.resize(plan.config.batch * size);
    s.landing.resize(kFinalReadBatch * size);
    s.expected.resize(size);
    for (size_t at = 0; at < s.source.size(); at += size) {
      FillBackground(std::span(s.source).subspan(at, size));
    }
    FillBackground(s.expected);
    s.stored.assign(plan.per_thread, 0);
    s.put_ms.reserve(plan.per_thread / plan.config.batch);
    for (std::vector<std::byte>* buffer : {&s.source, &s.landing}) {
      Status status = client.RegisterBuffer(*buffer);
      if (!status.ok() && registered.ok()) registered = std::move(status);
    }
  }
  if (!registered.ok()) {
    sink.Progress(
        "sustained: RegisterBuffer failed, transfers go "
        "unregistered: " +
        registered.ToString());
  }
  return states;
}

void UnregisterThreads(Client& client, std::vector<StreamThread>& states) {
  for (StreamThread& s : states) {
    client.UnregisterBuffer(s.source).IgnoreError();
    client.UnregisterBuffer(s.landing).IgnoreError();
  }
}

// Puts thread t's objects [first, first + batch) in one call.
void PutCall(Client& client, const StreamPlan& plan, int t, size_t first,
             StreamThread& state, StreamTally& tally) {
  const Config& config = plan.config;
  std::vector<PutItem> items;
  items.reserve(config.batch);
  for (size_t b = 0; b < config.batch; ++b) {
    const std::span<std::byte> slot =
        std::span(state.source)
            .subspan(b * config.object_bytes, config.object_bytes);
    PutItem item{ObjectKey(plan, t, first + b), slot, {}};
    StampKey(slot, KeySeed(item.key));
    if (config.grouped) {
      item.options.group =
          GroupSpec{GroupId(plan, t, first), kSustainedGroupSize,
                    static_cast<uint32_t>(b)};
    }
    items.push_back(std::move(item));
  }
  const auto begin = SteadyClock::now();
  std::vector<Status> puts = client.PutBatch(items);
  state.put_ms.push_back(
      duration<double, std::milli>(SteadyClock::now() - begin).count());
  uint64_t stored_bytes = 0;
  bool all_stored = true;
  for (size_t b = 0; b < puts.size(); ++b) {
    if (puts[b].ok()) {
      state.stored[first + b] = 1;
      stored_bytes += config.object_bytes;
    } else {
      all_stored = false;
      tally.AddPutFailure(puts[b].reason());
    }
  }
  // A group with a member missing never completes: none of it is read.
  if (config.grouped && !all_stored) {
    std::fill_n(state.stored.begin() + first, config.batch, 0);
  }
  tally.AddStored(stored_bytes);
}

// Reads thread t's objects `indices` (at most kFinalReadBatch) in one call
// and checks every byte.
void ReadAndVerify(Client& client, const StreamPlan& plan, int t,
                   std::span<const size_t> indices, StreamThread& state,
                   StreamTally& tally) {
  const uint64_t size = plan.config.object_bytes;
  std::vector<GetIntoItem> items;
  for (size_t k = 0; k < indices.size(); ++k) {
    items.push_back({ObjectKey(plan, t, indices[k]),
                     std::span(state.landing).subspan(k * size, size)});
  }
  std::vector<Result<uint64_t>> got = client.GetIntoBatch(items);
  state.reads += items.size();
  for (size_t k = 0; k < got.size(); ++k) {
    if (!got[k].ok()) {
      ++state.read_failed;
      tally.AddReadFailure(got[k].status().reason());
      continue;
    }
    StampKey(state.expected, KeySeed(items[k].key));
    state.wrong_bytes += CountWrongBytes(
        items[k].buffer.first(std::min<uint64_t>(*got[k], size)),
        state.expected);
  }
}

// Thread t's stream: each call's puts, then the sample put `lag` objects
// before them, if there is one.
void StreamOnThread(Client& client, const StreamPlan& plan, int t,
                    StreamThread& state, StreamTally& tally) {
  const size_t lag =
      std::max<size_t>(1, std::min<size_t>(kReadBackLag, plan.per_thread / 4));
  for (size_t i = 0; i < plan.per_thread; i += plan.config.batch) {
    PutCall(client, plan, t, i, state, tally);
    for (size_t k = i; k < i + plan.config.batch; ++k) {
      if (k < lag) continue;
      const size_t j = k - lag;
      if (j % kSampleEvery == 0 && state.stored[j] != 0) {
        ReadAndVerify(client, plan, t, std::span(&j, 1), state, tally);
      }
    }
  }
  tally.ThreadDone();
}

// Thread t's whole sample once more, kFinalReadBatch objects per call.
void FinalPass(Client& client, const StreamPlan& plan, int t,
               StreamThread& state, StreamTally& tally) {
  std::vector<size_t> sample;
  for (size_t j = 0; j < plan.per_thread; j += kSampleEvery) {
    if (state.stored[j] == 0) continue;
    sample.push_back(j);
    if (sample.size() == kFinalReadBatch) {
      ReadAndVerify(client, plan, t, sample, state, tally);
      sample.clear();
    }
  }
  if (!sample.empty()) ReadAndVerify(client, plan, t, sample, state, tally);
}

// Progress every kProgressPeriod until every stream thread is done.
void ReportUntilDone(const StreamPlan& plan, StreamTally& tally,
                     ResultSink& sink) {
  uint64_t last_bytes = 0;
  auto last = SteadyClock::now();
  while (!tally.WaitDone(kProgressPeriod)) {
    const auto now = SteadyClock::now();
    const uint64_t bytes = tally.stored();
    char rate[64];
    std::snprintf(rate, sizeof(rate), "%.3f GB/s over the last %.1f s",
                  Gbps(bytes - last_bytes, Seconds(now - last)),
                  Seconds(now - last));
    sink.Progress("sustained " + Label(plan.config) + ": " +
                  HumanBytes(bytes, ByteUnit::kGiB) + " of " +
                  HumanBytes(plan.planned_bytes(), ByteUnit::kGiB) +
                  " stored, " + rate +
                  (tally.dram_full() ? ", DRAM full" : "") + "; " +
                  tally.FailureSummary());
    last_bytes = bytes;
    last = now;
  }
}

struct StreamFigures {
  double seconds = 0;   // wall time of the stream
  uint64_t stored = 0;  // bytes of the puts that succeeded
  double put_gbps = 0;  // after DRAM was full
  double put_gbps_all = 0;
  uint64_t failed = 0;
  uint64_t reads = 0;  // sample reads, during and after the stream
  uint64_t read_failed = 0;
  uint64_t wrong_bytes = 0;
  std::vector<double> put_ms;
};

StreamFigures Summarize(const StreamTally& tally,
                        const std::vector<StreamThread>& states,
                        SteadyClock::time_point begin,
                        SteadyClock::time_point end) {
  StreamFigures f;
  f.seconds = Seconds(end - begin);
  f.stored = tally.stored();
  f.put_gbps_all = Gbps(f.stored, f.seconds);
  if (const std::optional<DramFull> full = tally.dram_full()) {
    f.put_gbps = Gbps(f.stored - full->stored, Seconds(end - full->at));
  }
  f.failed = tally.put_failures();
  for (const StreamThread& s : states) {
    f.reads += s.reads;
    f.read_failed += s.read_failed;
    f.wrong_bytes += s.wrong_bytes;
    f.put_ms.insert(f.put_ms.end(), s.put_ms.begin(), s.put_ms.end());
  }
  return f;
}

// Runs the stream on plan.threads threads, then the final pass.
StreamFigures RunStream(Client& client, const StreamPlan& plan,
                        ResultSink& sink) {
  std::vector<StreamThread> states = MakeThreads(client, plan, sink);
  StreamTally tally(plan.dram_bytes, plan.threads);
  const auto begin = SteadyClock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < plan.threads; ++t) {
    pool.emplace_back(
        [&, t] { StreamOnThread(client, plan, t, states[t], tally); });
  }
  ReportUntilDone(plan, tally, sink);
  for (std::thread& thread : pool) thread.join();
  const auto end = SteadyClock::now();
  sink.Progress("sustained " + Label(plan.config) + ": stream done in " +
                std::to_string(Seconds(end - begin)) +
                " s; reading the sample back; " + tally.FailureSummary());
  pool.clear();
  for (int t = 0; t < plan.threads; ++t) {
    pool.emplace_back([&, t] { FinalPass(client, plan, t, states[t], tally); });
  }
  for (std::thread& thread : pool) thread.join();
  UnregisterThreads(client, states);
  StreamFigures figures = Summarize(tally, states, begin, end);
  sink.Progress("sustained " + Label(plan.config) + ": " +
                std::to_string(figures.reads) + " sample reads, " +
                std::to_string(figures.wrong_bytes) + " wrong bytes; " +
                tally.FailureSummary());
  return figures;
}

// Removes the stream's objects (a store that outlives the benchmark).
void RemoveStream(Client& client, const StreamPlan& plan) {
  const size_t step = plan.config.grouped ? kSustainedGroupSize : 1;
  std::vector<std::string> names;
  auto flush = [&] {
    if (plan.config.grouped) {
      client.RemoveGroupBatch(names, RemoveOptions{true});
    } else {
      client.RemoveBatch(names, RemoveOptions{true});
    }
    names.clear();
  };
  for (int t = 0; t < plan.threads; ++t) {
    for (size_t i = 0; i < plan.per_thread; i += step) {
      names.push_back(plan.config.grouped ? GroupId(plan, t, i)
                                          : ObjectKey(plan, t, i));
      if (names.size() == kSustainedRemoveBatch) flush();
    }
  }
  if (!names.empty()) flush();
}

// The store one configuration runs against.
struct SustainedStore {
  RemoteStore remote;
  uint64_t dram_bytes = 0;
};

Result<SustainedStore> OpenStore(const CommonOptions& common,
                                 const RemoteOptions& remote,
                                 uint64_t spawn_dram, const std::string& prefix,
                                 ResultSink& sink) {
  SustainedStore store;
  // The daemon's defaults are under test: sizes only.
  std::vector<std::string> flags;
  if (remote.spawn) {
    flags = {"--dram", std::to_string(spawn_dram), "--ssd-capacity",
             std::to_string(kSsdOverDram * spawn_dram)};
  }
  MT_ASSIGN_OR_RETURN(store.remote,
                      OpenRemoteStore(common, remote, std::move(flags), sink));
  if (remote.spawn) {
    store.dram_bytes = spawn_dram;
  } else {
    MT_ASSIGN_OR_RETURN(
        store.dram_bytes,
        ProbeStoreDram(*store.remote.client, *store.remote.api, prefix));
  }
  return store;
}

nlohmann::ordered_json MakeRow(const StreamPlan& plan, const StreamFigures& f,
                               const RawDeviceResult& raw) {
  nlohmann::ordered_json row;
  row["scenario"] = "sustained";
  row["object_bytes"] = plan.config.object_bytes;
  row["grouped"] = plan.config.grouped;
  row["threads"] = plan.threads;
  row["dram_bytes"] = plan.dram_bytes;
  row["stream_bytes"] = f.stored;
  row["put_gbps"] = f.put_gbps;
  row["put_gbps_all"] = f.put_gbps_all;
  row["raw_ssd_write_gbps"] = raw.gbps;
  row["raw_direct"] = raw.direct;
  row["ratio"] = Ratio(f.put_gbps, raw.gbps);
  row["failed"] = f.failed;
  row["read_failed"] = f.read_failed;
  row["put_p50_ms"] = Percentile(f.put_ms, 0.50);
  row["put_p99_ms"] = Percentile(f.put_ms, 0.99);
  row["put_max_ms"] = Percentile(f.put_ms, 1.0);
  row["wrong_bytes"] = f.wrong_bytes;
  row["seconds"] = f.seconds;
  row["load_avg"] = LoadAverage();
  return row;
}

// One configuration: store, stream, raw baseline, result line. The exit
// code: 0, or 1 when the store or the baseline failed.
int RunConfiguration(const CommonOptions& common, const RemoteOptions& remote,
                     const SustainedOptions& options, const Config& config,
                     const std::string& run_prefix, ResultSink& sink) {
  const uint64_t spawn_dram = std::max<uint64_t>(
      kMinSpawnDram, static_cast<uint64_t>(kSpawnDram * common.scale));
  Result<SustainedStore> store =
      OpenStore(common, remote, spawn_dram, run_prefix, sink);
  if (!store.ok()) {
    sink.Progress(
        "sustained " + Label(config) +
        ": could not start or reach the store: " + store.status().ToString());
    return 1;
  }
  const StreamPlan plan =
      MakePlan(run_prefix, config, options.threads, store->dram_bytes);
  sink.Progress("sustained " + Label(config) + ": " +
                HumanBytes(plan.planned_bytes(), ByteUnit::kGiB) + " from " +
                std::to_string(plan.threads) + " threads into " +
                HumanBytes(plan.dram_bytes, ByteUnit::kGiB) + " of DRAM");
  const StreamFigures figures = RunStream(*store->remote.client, plan, sink);
  if (!remote.spawn) RemoveStream(*store->remote.client, plan);
  // The store is stopped (and its files removed) before the baseline.
  store->remote.client.reset();
  store->remote.api.reset();
  store->remote.spawned.reset();
  const uint64_t raw_cap = std::max<uint64_t>(
      kMinRawBytes, static_cast<uint64_t>(kRawCap * common.scale));
  Result<RawDeviceResult> raw =
      RawDirectWrite(common.scratch_dir, config.object_bytes,
                     std::min(figures.stored, raw_cap), options.threads);
  if (!raw.ok()) {
    sink.Progress("sustained " + Label(config) +
                  ": raw device baseline: " + raw.status().ToString());
    return 1;
  }
  sink.Emit(MakeRow(plan, figures, *raw));
  return 0;
}

}  // namespace

int RunSustainedScenario(const CommonOptions& common,
                         const RemoteOptions& remote,
                         const SustainedOptions& options, ResultSink& sink) {
  if (options.threads < 1) {
    sink.Progress("sustained: --threads must be at least 1");
    return 2;
  }
  if (remote.master.empty() != remote.spawn) {
    sink.Progress("sustained: give --master HOST:PORT or --spawn");
    return 2;
  }
  const std::string run_prefix = UniqueKeyPrefix("sustained");
  for (const Config& config : kConfigs) {
    const int code =
        RunConfiguration(common, remote, options, config, run_prefix, sink);
    if (code != 0) return code;
  }
  return 0;
}

}  // namespace mooncake_tier::bench
