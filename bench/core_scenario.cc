#include "bench/core_scenario.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "bench/bench_util.h"
#include "bench/heap_kept.h"
#include "core/master.h"
#include "core/master_config.h"
#include "core/node_registry.h"

namespace mooncake_tier::bench {
namespace {

using BenchClock = std::chrono::steady_clock;

// A small KV-cache block: metadata cost dominates, as for real block sizes.
constexpr uint64_t kObjectSize = 4096;
constexpr int kNodeCount = 4;
// Node DRAM is this many times the share of bytes a node gets, so the load
// stays near 50% and far below the 0.90 eviction watermark.
constexpr uint64_t kDramHeadroom = 2;
constexpr uint64_t kMinNodeDram = 64ull << 20;
// Read phases repeat passes over the keys for at least this long.
constexpr auto kMinReadTime = std::chrono::milliseconds(500);
constexpr size_t kBatch = 32;
constexpr int kThreadCounts[] = {1, 2};
// Each put variant runs this many times, each into a fresh master; the
// figure is their median (and the fastest is printed beside it). One pass
// lasts a few hundred milliseconds; on the project's shared VM single
// passes of one binary moved by up to 30% with the host's load.
constexpr int kPutRounds = 5;

const ClientId kClient = "bench-core";

// Keys and put requests, built before any timing starts.
struct Workload {
  std::vector<std::string> keys;
  std::vector<PutStartRequest> requests;
};

struct Tally {
  uint64_t ops = 0;
  uint64_t errors = 0;
};

struct Measurement {
  double seconds = 0;
  Tally total;
  double ops_per_s() const { return seconds > 0 ? total.ops / seconds : 0; }
};

Workload MakeWorkload(uint64_t objects) {
  Workload w;
  w.keys.reserve(objects);
  w.requests.reserve(objects);
  char key[40];
  for (uint64_t i = 0; i < objects; ++i) {
    // Mixed so that neighbouring keys share no long prefix, as hashes do.
    const uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
    std::snprintf(key, sizeof(key), "bench/kv/%016llx",
                  static_cast<unsigned long long>(h));
    w.keys.emplace_back(key);
    PutStartRequest request;
    request.key = w.keys.back();
    request.size = kObjectSize;
    request.client = kClient;
    w.requests.push_back(std::move(request));
  }
  return w;
}

// A master with kNodeCount nodes able to hold `objects` without eviction.
Result<std::unique_ptr<Master>> NewMaster(uint64_t objects) {
  auto master =
      std::make_unique<Master>(MasterConfig{}, SystemClock::Default());
  const uint64_t share = objects * kObjectSize / kNodeCount + kObjectSize;
  for (int i = 0; i < kNodeCount; ++i) {
    NodeSpec spec;
    spec.name = "bench-node-" + std::to_string(i);
    spec.dram_base = static_cast<uint64_t>(i + 1) << 40;
    spec.dram_size = std::max(share * kDramHeadroom, kMinNodeDram);
    MT_RETURN_IF_ERROR(master->RegisterNode(spec, {}).status());
  }
  return master;
}

// Runs body(begin, end) on `threads` threads, each over its share of
// [0, n), and times them from a common start to the last join.
template <typename Body>
Measurement RunSplit(int threads, uint64_t n, const Body& body) {
  std::vector<Tally> tallies(threads);
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    const uint64_t begin = n * t / threads;
    const uint64_t end = n * (t + 1) / threads;
    workers.emplace_back([&, t, begin, end] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      tallies[t] = body(begin, end);
    });
  }
  const auto start = BenchClock::now();
  go.store(true, std::memory_order_release);
  for (std::thread& worker : workers) worker.join();
  Measurement m;
  m.seconds = std::chrono::duration<double>(BenchClock::now() - start).count();
  for (const Tally& tally : tallies) {
    m.total.ops += tally.ops;
    m.total.errors += tally.errors;
  }
  return m;
}

template <typename Results>
uint64_t CountErrors(const Results& results) {
  uint64_t errors = 0;
  for (const auto& r : results) errors += r.ok() ? 0 : 1;
  return errors;
}

// One pass of PutStart + PutEnd over the keys, `batch` keys per call.
Measurement MeasurePut(Master& master, const Workload& w, int threads,
                       size_t batch) {
  const std::span<const PutStartRequest> requests(w.requests);
  const std::span<const std::string> keys(w.keys);
  return RunSplit(threads, keys.size(), [&](uint64_t begin, uint64_t end) {
    Tally tally;
    for (uint64_t i = begin; i < end; i += batch) {
      const size_t n = std::min<uint64_t>(batch, end - i);
      tally.errors += CountErrors(master.PutStart(requests.subspan(i, n)));
      tally.errors += CountErrors(master.PutEnd(kClient, keys.subspan(i, n)));
      tally.ops += n;
    }
    return tally;
  });
}

// Calls call(keys) over each thread's keys, `batch` at a time, wrapping
// around until every thread made one full pass and kMinReadTime elapsed.
template <typename Call>
Measurement MeasureRead(const Workload& w, int threads, size_t batch,
                        const Call& call) {
  const std::span<const std::string> all(w.keys);
  const auto deadline = BenchClock::now() + kMinReadTime;
  return RunSplit(threads, all.size(), [&](uint64_t begin, uint64_t end) {
    Tally tally;
    const std::span<const std::string> keys = all.subspan(begin, end - begin);
    size_t i = 0;
    for (uint64_t calls = 1; !keys.empty(); ++calls) {
      const auto slice = keys.subspan(i, std::min(batch, keys.size() - i));
      tally.errors += CountErrors(call(slice));
      tally.ops += slice.size();
      i = (i + slice.size()) % keys.size();
      if (calls % 256 == 0 && tally.ops >= keys.size() &&
          BenchClock::now() >= deadline) {
        break;
      }
    }
    return tally;
  });
}

// false (with a note on stderr) if any call of `m` failed.
bool CheckErrors(ResultSink& sink, std::string_view op, const Measurement& m) {
  if (m.total.errors == 0) return true;
  sink.Progress("core: " + std::string(op) + " failed " +
                std::to_string(m.total.errors) + " of " +
                std::to_string(m.total.ops) + " keys");
  return false;
}

// Emits one result; false if any call failed.
bool Report(ResultSink& sink, std::string_view op, int threads,
            uint64_t objects, size_t batch, const Measurement& m) {
  sink.Emit({{"scenario", "core"},
             {"op", op},
             {"threads", threads},
             {"objects", objects},
             {"batch", batch},
             {"seconds", m.seconds},
             {"ops_per_s", m.ops_per_s()}});
  return CheckErrors(sink, op, m);
}

// Emits the median and the fastest of a put variant's rounds.
void ReportRounds(ResultSink& sink, std::string_view op, int threads,
                  uint64_t objects, size_t batch,
                  const std::vector<double>& ops_per_s) {
  sink.Emit({{"scenario", "core"},
             {"op", op},
             {"threads", threads},
             {"objects", objects},
             {"batch", batch},
             {"rounds", ops_per_s.size()},
             {"ops_per_s", Percentile(ops_per_s, 0.5)},
             {"best_ops_per_s", Percentile(ops_per_s, 1.0)}});
}

// One put pass of `batch` keys per call on `threads` threads into a fresh
// master, left in `*loaded`. False if the master could not be built or a
// call failed.
bool PutRound(ResultSink& sink, const Workload& w, std::string_view op,
              int threads, size_t batch, std::unique_ptr<Master>* loaded,
              Measurement* m) {
  loaded->reset();  // free the previous master before building another
  Result<std::unique_ptr<Master>> master = NewMaster(w.keys.size());
  if (!master.ok()) {
    sink.Progress("core: cannot register nodes: " + master.status().ToString());
    return false;
  }
  *m = MeasurePut(**master, w, threads, batch);
  *loaded = std::move(*master);
  return CheckErrors(sink, op, *m);
}

// Whether `op` on `threads` threads is one of the selected runs.
bool Selected(const CoreOptions& core, std::string_view op, int threads) {
  return (core.op.empty() || core.op == op) &&
         (core.threads == 0 || core.threads == threads);
}

// The put variants, kPutRounds each, every round into a fresh master,
// after one unreported round that grows the heap to a loaded master's
// size. Leaves the last (fully loaded) master in `*loaded` for the reads.
bool RunPuts(ResultSink& sink, const Workload& w, const CoreOptions& core,
             std::unique_ptr<Master>* loaded) {
  const uint64_t objects = w.keys.size();
  sink.Progress("core: warm-up put pass (not reported)");
  Measurement warm_up;
  if (!PutRound(sink, w, "put", 1, kBatch, loaded, &warm_up)) return false;
  for (const auto& [op, batch] : {std::pair<std::string_view, size_t>{"put", 1},
                                  {"put_batch32", kBatch}}) {
    for (int threads : kThreadCounts) {
      if (!Selected(core, op, threads)) continue;
      sink.Progress("core: " + std::string(op) +
                    " threads=" + std::to_string(threads) + ", " +
                    std::to_string(kPutRounds) + " rounds");
      std::vector<double> ops_per_s;
      for (int round = 0; round < kPutRounds; ++round) {
        Measurement m;
        if (!PutRound(sink, w, op, threads, batch, loaded, &m)) return false;
        ops_per_s.push_back(m.ops_per_s());
        sink.Progress("core:   round " + std::to_string(round + 1) + ": " +
                      std::to_string(static_cast<uint64_t>(m.ops_per_s())) +
                      " ops/s");
      }
      ReportRounds(sink, op, threads, objects, batch, ops_per_s);
    }
  }
  const MasterStats stats = (*loaded)->GetStats();
  if (stats.evicted_memory_objects != 0) {
    sink.Progress("core: eviction ran during the put phase; figures skewed");
    return false;
  }
  return true;
}

// get_replica_list and exists, one key and kBatch keys per call.
bool RunReads(ResultSink& sink, const Workload& w, const CoreOptions& core,
              Master& master) {
  struct ReadOp {
    std::string_view name;
    size_t batch;
    bool exists;  // Exists rather than GetReplicaList
  };
  constexpr ReadOp kReadOps[] = {
      {"get_replica_list", 1, false},
      {"get_replica_list_batch32", kBatch, false},
      {"exists", 1, true},
      {"exists_batch32", kBatch, true},
  };
  const auto get = [&](std::span<const std::string> keys) {
    return master.GetReplicaList(keys);
  };
  const auto exists = [&](std::span<const std::string> keys) {
    return master.Exists(keys);
  };
  bool ok = true;
  for (const ReadOp& op : kReadOps) {
    for (int threads : kThreadCounts) {
      if (!Selected(core, op.name, threads)) continue;
      sink.Progress("core: " + std::string(op.name) +
                    " threads=" + std::to_string(threads));
      const Measurement m = op.exists
                                ? MeasureRead(w, threads, op.batch, exists)
                                : MeasureRead(w, threads, op.batch, get);
      ok = Report(sink, op.name, threads, w.keys.size(), op.batch, m) && ok;
    }
  }
  return ok;
}

}  // namespace

const std::vector<std::string>& CoreOpNames() {
  static const std::vector<std::string> names = {
      "put",    "put_batch32",   "get_replica_list", "get_replica_list_batch32",
      "exists", "exists_batch32"};
  return names;
}

int RunCoreScenario(const CommonOptions& options, ResultSink& sink,
                    const CoreOptions& core) {
  const uint64_t objects = core.objects;
  if (objects == 0) {
    sink.Progress("core: --objects must be at least 1");
    return 1;
  }
  sink.Progress("core: building " + std::to_string(objects) + " keys");
  const Workload w = MakeWorkload(objects);
  // Every put round builds a fresh master of up to a few hundred MB: keep
  // the heap between them (see HeapKeptForBench), declared before `loaded`
  // so that the last master is gone when the settings are undone.
  const HeapKeptForBench heap_kept;
  if (!heap_kept.kept()) {
    sink.Progress(
        "core: malloc did not take the keep-heap settings; "
        "put figures include the kernel's page zeroing");
  }
  std::unique_ptr<Master> loaded;
  bool ok = RunPuts(sink, w, core, &loaded);
  if (loaded != nullptr) ok = RunReads(sink, w, core, *loaded) && ok;
  sink.Progress("core: tearing down");
  return ok ? 0 : 1;
}

}  // namespace mooncake_tier::bench
