#include "bench/trace_scenario.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "bench/bench_util.h"
#include "bench/remote_store.h"
#include "bench/store_fill.h"
#include "bench/trace_sim.h"
#include "nlohmann/json.hpp"

namespace mooncake_tier::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::duration;

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
// Blocks per GetIntoBatch / PutBatch, and the bytes a batch may move: a
// long prompt is read and put in several batches.
constexpr size_t kMaxBlocksPerBatch = 64;
constexpr uint64_t kMaxBatchBytes = 16ull << 20;
constexpr auto kProgressInterval = std::chrono::seconds(5);
// Groups per RemoveGroupBatch when cleaning up after a --master run.
constexpr size_t kTraceRemoveBatch = 1024;

// --- Member values: a function of (hash id, member index), so a read is
// checked without keeping what was put.

// splitmix64: a counter through a 64-bit finaliser; fast, well mixed.
uint64_t NextSplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t MemberStreamSeed(uint64_t hash_id, uint32_t index) {
  uint64_t state = hash_id;
  state = NextSplitMix(state) ^ index;
  return NextSplitMix(state);
}

void FillMemberValue(uint64_t hash_id, uint32_t index,
                     std::span<std::byte> out) {
  uint64_t state = MemberStreamSeed(hash_id, index);
  for (size_t at = 0; at < out.size(); at += sizeof(uint64_t)) {
    const uint64_t word = NextSplitMix(state);
    std::memcpy(&out[at], &word, std::min(sizeof word, out.size() - at));
  }
}

// Bytes of `got` that differ from the member's value of `expected_size`
// bytes; a length difference counts as that many wrong bytes.
uint64_t CountWrongBytes(uint64_t hash_id, uint32_t index,
                         std::span<const std::byte> got,
                         uint64_t expected_size) {
  uint64_t wrong = got.size() > expected_size ? got.size() - expected_size
                                              : expected_size - got.size();
  const size_t common = std::min<uint64_t>(got.size(), expected_size);
  uint64_t state = MemberStreamSeed(hash_id, index);
  for (size_t at = 0; at < common; at += sizeof(uint64_t)) {
    const uint64_t word = NextSplitMix(state);
    const size_t n = std::min(sizeof word, common - at);
    if (std::memcmp(&got[at], &word, n) == 0) continue;
    const auto* expected = reinterpret_cast<const std::byte*>(&word);
    for (size_t i = 0; i < n; ++i) wrong += got[at + i] != expected[i] ? 1 : 0;
  }
  return wrong;
}

// --- Names: "<prefix>/b<hash id>" groups of "<group id>/<index>" members.

std::string GroupId(const std::string& prefix, uint64_t hash_id) {
  return prefix + "/b" + std::to_string(hash_id);
}

std::string MemberKey(const std::string& group_id, uint32_t index) {
  return group_id + "/" + std::to_string(index);
}

// --- What a replay counted so far. Thread-safe.
class ReplayTally {
 public:
  struct Figures {
    uint64_t requests = 0;
    uint64_t blocks = 0;
    uint64_t memory_hits = 0;
    uint64_t disk_hits = 0;
    uint64_t put_failed = 0;
    uint64_t wrong_bytes = 0;
    uint64_t put_bytes = 0;  // of members stored by this replay's puts
    // Blocks after a request's first miss that the store still held (their
    // put found them): stored, but unreachable by prefix, because an
    // earlier block of their chain was gone.
    uint64_t stranded_blocks = 0;
  };

  void AddRequest(uint64_t blocks, uint64_t memory_hits, uint64_t disk_hits) {
    blocks_ += blocks;
    memory_hits_ += memory_hits;
    disk_hits_ += disk_hits;
    ++requests_;
  }
  void AddWrongBytes(uint64_t n) { wrong_bytes_ += n; }
  void AddPutBytes(uint64_t n) { put_bytes_ += n; }
  void AddStranded(uint64_t blocks) { stranded_blocks_ += blocks; }
  // A member of a probe ("probe") or a read ("get") failed with `reason`.
  void AddFailure(std::string_view op, ErrorReason reason) {
    MutexLock lock(&mu_);
    ++failures_[std::string(op) + " " + std::string(ReasonName(reason))];
  }
  // A member's put failed with `reason` (not OBJECT_EXISTS).
  void AddPutFailure(ErrorReason reason) {
    ++put_failed_;
    AddFailure("put", reason);
  }

  Figures Read() const {
    return {requests_.load(),  blocks_.load(),         memory_hits_.load(),
            disk_hits_.load(), put_failed_.load(),     wrong_bytes_.load(),
            put_bytes_.load(), stranded_blocks_.load()};
  }
  // "put NO_SPACE: 12, get OBJECT_NOT_FOUND: 3", or "none".
  std::string FailureSummary() const {
    MutexLock lock(&mu_);
    std::string out;
    for (const auto& [what, count] : failures_) {
      out += (out.empty() ? "" : ", ") + what + ": " + std::to_string(count);
    }
    return out.empty() ? "none" : out;
  }

 private:
  std::atomic<uint64_t> requests_{0}, blocks_{0}, memory_hits_{0},
      disk_hits_{0}, put_failed_{0}, wrong_bytes_{0}, put_bytes_{0},
      stranded_blocks_{0};
  mutable Mutex mu_;
  std::map<std::string, uint64_t> failures_ ABSL_GUARDED_BY(mu_);
};

// --- One client thread's replay of its requests: probe, read, put.
// Not thread-safe: one worker per thread, sharing the client and tally.
class ReplayWorker {
 public:
  ReplayWorker(Client& client, const TraceOptions& options,
               const std::string& key_prefix, ReplayTally& tally)
      : client_(client),
        options_(options),
        key_prefix_(key_prefix),
        tally_(tally),
        block_bytes_(options.members * options.member_bytes),
        batch_blocks_(std::clamp<uint64_t>(kMaxBatchBytes / block_bytes_, 1,
                                           kMaxBlocksPerBatch)),
        slab_(batch_blocks_ * block_bytes_) {
    // Zero-copy transfers from and into the slab; they work without too.
    registered_ = client_.RegisterBuffer(slab_).ok();
  }
  ~ReplayWorker() {
    if (registered_) client_.UnregisterBuffer(slab_).IgnoreError();
  }
  ReplayWorker(const ReplayWorker&) = delete;
  ReplayWorker& operator=(const ReplayWorker&) = delete;

  // Replays one request. UNAVAILABLE or TIMEOUT when the store stopped
  // answering; every other failure is counted in the tally.
  Status Replay(const TraceRequest& request) {
    std::vector<std::string> group_ids;
    group_ids.reserve(request.blocks.size());
    for (uint64_t block : request.blocks) {
      group_ids.push_back(GroupId(key_prefix_, block));
    }
    size_t stored = 0, in_memory = 0;
    MT_RETURN_IF_ERROR(ProbeStoredPrefix(group_ids, stored, in_memory));
    const size_t prefix = ReadPrefix(request, group_ids, stored);
    const auto memory_hits = static_cast<uint64_t>(std::min(prefix, in_memory));
    PutFrom(request, group_ids, prefix);
    tally_.AddRequest(request.blocks.size(), memory_hits, prefix - memory_hits);
    return Status();
  }

 private:
  // The span of the slab holding member `m` of the batch's block `b`.
  std::span<std::byte> MemberSlot(size_t b, uint32_t m) {
    return std::span<std::byte>(slab_).subspan(
        (b * options_.members + m) * options_.member_bytes,
        options_.member_bytes);
  }

  // An engine's lookup, in one master call (the prefix probe over every
  // member key in order): `stored` is the readable prefix in blocks (a
  // block counts once its group is complete), `in_memory` how many of them
  // the probe's DRAM bytes make up (members are all one size).
  Status ProbeStoredPrefix(const std::vector<std::string>& group_ids,
                           size_t& stored, size_t& in_memory) {
    const uint32_t members = options_.members;
    std::vector<std::string> keys;
    keys.reserve(group_ids.size() * members);
    for (const std::string& group_id : group_ids) {
      for (uint32_t m = 0; m < members; ++m) {
        keys.push_back(MemberKey(group_id, m));
      }
    }
    Result<PrefixInfo> prefix = client_.ProbePrefix(keys);
    if (!prefix.ok()) {
      const ErrorReason reason = prefix.status().reason();
      if (reason == ErrorReason::kUnavailable ||
          reason == ErrorReason::kTimeout) {
        return prefix.status();
      }
      tally_.AddFailure("probe", reason);
      return Status();
    }
    stored = prefix->length / members;
    in_memory = std::min<size_t>(
        stored, prefix->memory_bytes / (options_.member_bytes * members));
    return Status();
  }

  // Reads the members of the first `prefix` blocks, checking their bytes.
  // Returns the blocks before the first one with a member that could not
  // be read (`prefix` when all were).
  size_t ReadPrefix(const TraceRequest& request,
                    const std::vector<std::string>& group_ids, size_t prefix) {
    const uint32_t members = options_.members;
    for (size_t first = 0; first < prefix; first += batch_blocks_) {
      const size_t n = std::min<size_t>(batch_blocks_, prefix - first);
      std::vector<GetIntoItem> items;
      items.reserve(n * members);
      for (size_t b = 0; b < n; ++b) {
        for (uint32_t m = 0; m < members; ++m) {
          items.push_back(
              {MemberKey(group_ids[first + b], m), MemberSlot(b, m)});
        }
      }
      std::vector<Result<uint64_t>> got = client_.GetIntoBatch(items);
      size_t first_unread = n;
      for (size_t i = 0; i < items.size(); ++i) {
        const size_t b = i / members;
        const auto m = static_cast<uint32_t>(i % members);
        if (!got[i].ok()) {
          tally_.AddFailure("get", got[i].status().reason());
          first_unread = std::min(first_unread, b);
          continue;
        }
        const std::span<const std::byte> value = MemberSlot(b, m).first(
            std::min<uint64_t>(*got[i], options_.member_bytes));
        const uint64_t wrong = CountWrongBytes(request.blocks[first + b], m,
                                               value, options_.member_bytes);
        if (wrong > 0) tally_.AddWrongBytes(wrong);
      }
      if (first_unread < n) return first + first_unread;
    }
    return prefix;
  }

  // Puts every block from `first` on, each once, as groups.
  void PutFrom(const TraceRequest& request,
               const std::vector<std::string>& group_ids, size_t first) {
    std::vector<size_t> to_put;  // positions in the request
    std::unordered_set<uint64_t> seen;
    for (size_t i = first; i < request.blocks.size(); ++i) {
      if (seen.insert(request.blocks[i]).second) to_put.push_back(i);
    }
    for (size_t at = 0; at < to_put.size(); at += batch_blocks_) {
      const size_t n = std::min<size_t>(batch_blocks_, to_put.size() - at);
      std::vector<PutItem> items;
      items.reserve(n * options_.members);
      for (size_t b = 0; b < n; ++b) {
        const size_t position = to_put[at + b];
        for (uint32_t m = 0; m < options_.members; ++m) {
          FillMemberValue(request.blocks[position], m, MemberSlot(b, m));
          PutOptions put;
          put.group = GroupSpec{group_ids[position], options_.members, m};
          items.push_back({MemberKey(group_ids[position], m), MemberSlot(b, m),
                           std::move(put)});
        }
      }
      uint64_t stored = 0, stranded = 0;
      const std::vector<Status> puts = client_.PutBatch(items);
      for (size_t i = 0; i < puts.size(); ++i) {
        const Status& put = puts[i];
        if (put.ok()) {
          ++stored;
        } else if (put.reason() == ErrorReason::kObjectExists) {
          // A block counts once, by its first member.
          if (i % options_.members == 0) ++stranded;
        } else {
          tally_.AddPutFailure(put.reason());
        }
      }
      tally_.AddPutBytes(stored * options_.member_bytes);
      tally_.AddStranded(stranded);
    }
  }

  Client& client_;
  const TraceOptions& options_;
  const std::string& key_prefix_;
  ReplayTally& tally_;
  const uint64_t block_bytes_;
  const size_t batch_blocks_;
  std::vector<std::byte> slab_;
  bool registered_ = false;
};

// --- A whole replay: worker threads, pacing, progress.

// Figures of one replay.
struct ReplayFigures {
  ReplayTally::Figures counts;
  double seconds = 0;
};

// Replays `requests` on options.threads threads (request i on thread
// i % threads, in order), reporting progress every kProgressInterval.
// UNAVAILABLE or TIMEOUT when the store stopped answering.
// Thread safety: call Run and RemoveGroups from one thread; Run's worker
// threads share the client and the tally.
class TraceReplay {
 public:
  TraceReplay(Client& client, std::span<const TraceRequest> requests,
              const TraceOptions& options, std::string label)
      : client_(client),
        requests_(requests),
        options_(options),
        label_(std::move(label)),
        key_prefix_(UniqueKeyPrefix("trace")) {}

  Result<ReplayFigures> Run(ResultSink& sink) {
    start_ = SteadyClock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < options_.threads; ++t) {
      threads.emplace_back([this, t] { RunThread(t); });
    }
    WaitReportingProgress(sink);
    for (std::thread& thread : threads) thread.join();
    ReplayFigures figures;
    figures.seconds = duration<double>(SteadyClock::now() - start_).count();
    figures.counts = tally_.Read();
    ReportProgress(sink);
    MutexLock lock(&mu_);
    if (!error_.ok()) return error_;
    return figures;
  }

  // Removes every group this replay may have put (best effort, untimed).
  void RemoveGroups(ResultSink& sink) {
    std::vector<std::string> ids;
    std::unordered_set<uint64_t> seen;
    for (const TraceRequest& request : requests_) {
      for (uint64_t block : request.blocks) {
        if (seen.insert(block).second) {
          ids.push_back(GroupId(key_prefix_, block));
        }
      }
    }
    sink.Progress("trace " + label_ + ": removing its " +
                  std::to_string(ids.size()) + " groups");
    for (size_t at = 0; at < ids.size(); at += kTraceRemoveBatch) {
      const size_t n = std::min(kTraceRemoveBatch, ids.size() - at);
      client_.RemoveGroupBatch(std::span<const std::string>(&ids[at], n),
                               RemoveOptions{true});
    }
  }

 private:
  void RunThread(int t) {
    ReplayWorker worker(client_, options_, key_prefix_, tally_);
    for (size_t i = t; i < requests_.size() && !stop_; i += options_.threads) {
      if (options_.speed > 0) PaceUntil(DueTime(i));
      Status replayed = worker.Replay(requests_[i]);
      if (!replayed.ok()) {
        MutexLock lock(&mu_);
        if (error_.ok()) {
          error_ = Status(replayed.reason(), "request " + std::to_string(i) +
                                                 ": " + replayed.message());
        }
        stop_ = true;
      }
    }
    MutexLock lock(&mu_);
    ++finished_threads_;
    done_.SignalAll();
  }

  // When request i may start: its time in the trace (from the first
  // request's) divided by the speed, after the replay's start.
  SteadyClock::time_point DueTime(size_t i) const {
    const int64_t offset_ms =
        requests_[i].timestamp_ms - requests_.front().timestamp_ms;
    return start_ +
           std::chrono::duration_cast<SteadyClock::duration>(
               duration<double, std::milli>(offset_ms / options_.speed));
  }

  // Sleeps until `due`, waking early when the replay stops.
  void PaceUntil(SteadyClock::time_point due) {
    constexpr auto kSlice = std::chrono::milliseconds(100);
    while (!stop_ && SteadyClock::now() < due) {
      std::this_thread::sleep_for(
          std::min<SteadyClock::duration>(kSlice, due - SteadyClock::now()));
    }
  }

  // Returns when every thread finished, reporting progress meanwhile.
  void WaitReportingProgress(ResultSink& sink) {
    while (true) {
      {
        MutexLock lock(&mu_);
        if (done_.WaitFor(kProgressInterval,
                          [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                            return finished_threads_ == options_.threads;
                          })) {
          return;
        }
      }
      ReportProgress(sink);
    }
  }

  void ReportProgress(ResultSink& sink) const {
    const ReplayTally::Figures f = tally_.Read();
    const double seconds =
        duration<double>(SteadyClock::now() - start_).count();
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%llu/%zu requests, %.0f blocks/s, hit ratio %.3f (memory "
                  "%.3f), ",
                  static_cast<unsigned long long>(f.requests), requests_.size(),
                  Ratio(f.blocks, seconds),
                  Ratio(f.memory_hits + f.disk_hits, f.blocks),
                  Ratio(f.memory_hits, f.blocks));
    sink.Progress("trace " + label_ + ": " + line +
                  "failures: " + tally_.FailureSummary());
  }

  Client& client_;
  const std::span<const TraceRequest> requests_;
  const TraceOptions& options_;
  const std::string label_;
  const std::string key_prefix_;
  ReplayTally tally_;
  SteadyClock::time_point start_;
  std::atomic<bool> stop_{false};
  Mutex mu_;
  CondVar done_{&mu_};
  int finished_threads_ ABSL_GUARDED_BY(mu_) = 0;
  Status error_ ABSL_GUARDED_BY(mu_);
};

// --- The simulated figures, the same for every run.
struct SimulatedRatios {
  double dram_lru = 0;  // LRU of the DRAM's bytes alone
  double lru = 0;
  double lru_exclusive = 0;
  double s3fifo = 0;
  double s3fifo_exclusive = 0;
  double clock = 0;
  double clock_exclusive = 0;
  double opt = 0;
  double opt_exclusive = 0;
  double infinite = 0;
};

SimulatedRatios Simulate(std::span<const TraceRequest> requests,
                         const TraceOptions& options, ResultSink& sink) {
  const uint64_t block_bytes = options.members * options.member_bytes;
  const uint64_t ssd_blocks = options.ssd_bytes / block_bytes;
  const uint64_t all_blocks =
      (options.dram_bytes + options.ssd_bytes) / block_bytes;
  const auto begin = SteadyClock::now();
  SimulatedRatios r;
  r.dram_lru = SimulateCache(requests, EvictionPolicy::kLru,
                             options.dram_bytes / block_bytes)
                   .HitRatio();
  r.lru = SimulateCache(requests, EvictionPolicy::kLru, ssd_blocks).HitRatio();
  r.lru_exclusive =
      SimulateCache(requests, EvictionPolicy::kLru, all_blocks).HitRatio();
  r.s3fifo =
      SimulateCache(requests, EvictionPolicy::kS3Fifo, ssd_blocks).HitRatio();
  r.s3fifo_exclusive =
      SimulateCache(requests, EvictionPolicy::kS3Fifo, all_blocks).HitRatio();
  r.clock =
      SimulateCache(requests, EvictionPolicy::kClock, ssd_blocks).HitRatio();
  r.clock_exclusive =
      SimulateCache(requests, EvictionPolicy::kClock, all_blocks).HitRatio();
  r.opt =
      SimulateCache(requests, EvictionPolicy::kBelady, ssd_blocks).HitRatio();
  r.opt_exclusive =
      SimulateCache(requests, EvictionPolicy::kBelady, all_blocks).HitRatio();
  r.infinite = SimulateInfiniteCache(requests).HitRatio();
  char line[300];
  std::snprintf(
      line, sizeof(line),
      "trace: simulated %llu and %llu blocks in %.0f ms: LRU %.3f / "
      "%.3f, S3-FIFO %.3f / %.3f, CLOCK %.3f / %.3f, MIN %.3f / %.3f, "
      "infinite %.3f",
      static_cast<unsigned long long>(ssd_blocks),
      static_cast<unsigned long long>(all_blocks),
      duration<double, std::milli>(SteadyClock::now() - begin).count(), r.lru,
      r.lru_exclusive, r.s3fifo, r.s3fifo_exclusive, r.clock, r.clock_exclusive,
      r.opt, r.opt_exclusive, r.infinite);
  sink.Progress(line);
  return r;
}

// --- The runs.

// A run: the store it goes to, the label of its promotion policy and of
// its SSD eviction policy ("" for a store the bench did not start).
struct RunPlan {
  std::string policy;
  std::string eviction;
  std::vector<std::string> spawn_flags;  // with --spawn
};

std::vector<RunPlan> PlanRuns(const TraceOptions& options,
                              const RemoteOptions& remote) {
  if (!remote.spawn) return {{"external", "", {}}};
  const std::vector<std::string> sizes = {
      "--dram", std::to_string(options.dram_bytes), "--ssd-capacity",
      std::to_string(options.ssd_bytes)};
  const std::vector<RunPlan> promotion = {
      {"off", "", {"--no-promotion-on-hit"}},
      {"threshold", "", {"--promotion-policy", "threshold"}},
      {"tinylfu", "", {"--promotion-policy", "tinylfu"}}};
  std::vector<std::string> extra;
  for (std::string_view rest = options.store_flags; !rest.empty();) {
    const size_t end = std::min(rest.find(' '), rest.size());
    if (end > 0) extra.emplace_back(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  std::vector<RunPlan> plans;
  for (const std::string& eviction : options.ssd_eviction_policies) {
    for (const RunPlan& p : promotion) {
      if (std::find(options.promotion_policies.begin(),
                    options.promotion_policies.end(),
                    p.policy) == options.promotion_policies.end()) {
        continue;
      }
      RunPlan plan = p;
      plan.spawn_flags.insert(plan.spawn_flags.end(), extra.begin(),
                              extra.end());
      plan.eviction = eviction;
      plan.spawn_flags.insert(plan.spawn_flags.begin(), sizes.begin(),
                              sizes.end());
      plan.spawn_flags.push_back("--ssd-eviction-policy");
      plan.spawn_flags.push_back(eviction);
      plans.push_back(std::move(plan));
    }
  }
  return plans;
}

// How full the store's tiers are after the run (the replay fills both:
// the trace holds several times their bytes), what its SSD wrote per byte
// the replay put, and LRU at what its SSD can really hold, beside the
// configured capacity: how much of a gap to lru_hit_ratio is room, not
// policy.
void AddFillFields(nlohmann::ordered_json& row, const StoreFill& fill,
                   const ReplayTally::Figures& counts,
                   const TraceOptions& options,
                   std::span<const TraceRequest> requests) {
  if (!fill.known) return;
  const uint64_t block_bytes = options.members * options.member_bytes;
  row["ssd_object_capacity"] = fill.ssd_object_capacity;
  row["lru_hit_ratio_at_store_capacity"] =
      SimulateCache(requests, EvictionPolicy::kLru,
                    fill.ssd_object_capacity / block_bytes)
          .HitRatio();
  // Averaged over the replay's second half (FillSampler).
  row["ssd_live_fraction"] = Ratio(fill.ssd_used, options.ssd_bytes);
  row["dram_live_fraction"] = Ratio(fill.dram_used, options.dram_bytes);
  row["ssd_write_amplification"] =
      Ratio(fill.ssd_device_bytes_written, counts.put_bytes);
  row["promotion_attempts"] = fill.promotion_attempts;
  row["promotions_completed"] = fill.promotions_completed;
  row["promotions_useful"] = fill.promotions_useful;
  row["promotion_admission_gated"] = fill.promotion_admission_gated;
  row["promotion_watermark_gated"] = fill.promotion_watermark_gated;
  row["promotion_alloc_failed"] = fill.promotion_alloc_failed;
}

nlohmann::ordered_json ResultRow(const std::string& trace_name,
                                 const RunPlan& plan,
                                 const TraceOptions& options,
                                 const ReplayFigures& replay,
                                 const SimulatedRatios& sim) {
  const ReplayTally::Figures& f = replay.counts;
  nlohmann::ordered_json row;
  row["scenario"] = "trace";
  row["trace"] = trace_name;
  row["policy"] = plan.policy;
  if (!plan.eviction.empty()) row["eviction"] = plan.eviction;
  row["requests"] = f.requests;
  row["blocks"] = f.blocks;
  row["memory_hits"] = f.memory_hits;
  row["disk_hits"] = f.disk_hits;
  row["misses"] = f.blocks - f.memory_hits - f.disk_hits;
  row["put_failed"] = f.put_failed;
  row["stranded_blocks"] = f.stranded_blocks;
  row["hit_ratio"] = Ratio(f.memory_hits + f.disk_hits, f.blocks);
  row["memory_hit_ratio"] = Ratio(f.memory_hits, f.blocks);
  row["dram_lru_hit_ratio"] = sim.dram_lru;
  row["lru_hit_ratio"] = sim.lru;
  row["lru_hit_ratio_exclusive"] = sim.lru_exclusive;
  row["s3fifo_hit_ratio"] = sim.s3fifo;
  row["s3fifo_hit_ratio_exclusive"] = sim.s3fifo_exclusive;
  row["clock_hit_ratio"] = sim.clock;
  row["clock_hit_ratio_exclusive"] = sim.clock_exclusive;
  row["opt_hit_ratio"] = sim.opt;
  row["opt_hit_ratio_exclusive"] = sim.opt_exclusive;
  row["infinite_hit_ratio"] = sim.infinite;
  row["wrong_bytes"] = f.wrong_bytes;
  row["blocks_per_s"] = Ratio(f.blocks, replay.seconds);
  row["seconds"] = replay.seconds;
  row["dram_bytes"] = options.dram_bytes;
  row["ssd_bytes"] = options.ssd_bytes;
  row["block_bytes"] = options.members * options.member_bytes;
  row["members"] = options.members;
  row["load_avg"] = LoadAverage();
  return row;
}

// Why `options` break a REQUIRES of TraceOptions, or "" when they do not.
std::string InvalidOptions(const TraceOptions& options,
                           const RemoteOptions& remote) {
  if (options.trace_path.empty()) return "no trace file (--trace FILE)";
  if (options.members == 0) return "--members must be positive";
  if (options.member_bytes == 0) return "--member-bytes must be positive";
  if (!(options.speed >= 0) || std::isinf(options.speed)) {
    return "--speed must be a finite number >= 0";
  }
  if (options.threads < 1) return "--threads must be positive";
  if (options.dram_bytes == 0) return "--dram must be positive";
  if (remote.master.empty() == !remote.spawn) {
    return "give either --master HOST:PORT or --spawn";
  }
  return "";
}

}  // namespace

int RunTraceScenario(const CommonOptions& common, const TraceOptions& options,
                     const RemoteOptions& remote, ResultSink& sink) {
  if (const std::string invalid = InvalidOptions(options, remote);
      !invalid.empty()) {
    sink.Progress("trace: " + invalid);
    return kExitUsage;
  }
  Result<Trace> trace = ReadTraceFile(options.trace_path);
  if (!trace.ok()) {
    sink.Progress("trace: " + trace.status().ToString());
    return kExitFailed;
  }
  std::span<const TraceRequest> requests(trace->requests);
  if (options.requests > 0 && options.requests < requests.size()) {
    requests = requests.first(options.requests);
  }
  if (requests.empty()) {
    sink.Progress("trace: '" + options.trace_path + "' has no requests");
    return kExitFailed;
  }
  const std::string trace_name =
      std::filesystem::path(options.trace_path).filename().string();
  const SimulatedRatios sim = Simulate(requests, options, sink);
  for (const RunPlan& plan : PlanRuns(options, remote)) {
    Result<RemoteStore> c =
        OpenRemoteStore(common, remote, plan.spawn_flags, sink);
    if (!c.ok()) {
      sink.Progress("trace " + plan.policy + ": " + c.status().ToString());
      return kExitFailed;
    }
    TraceReplay replay(*c->client, requests, options, plan.policy);
    FillSampler sampler(*c);
    Result<ReplayFigures> figures = replay.Run(sink);
    const StoreFill fill = sampler.Finish();
    if (!figures.ok()) {
      sink.Progress("trace " + plan.policy + ": the store stopped answering: " +
                    figures.status().ToString());
      return kExitFailed;
    }
    nlohmann::ordered_json row =
        ResultRow(trace_name, plan, options, *figures, sim);
    AddFillFields(row, fill, figures->counts, options, requests);
    sink.Emit(row);
    if (!remote.spawn) replay.RemoveGroups(sink);
  }
  return 0;
}

}  // namespace mooncake_tier::bench
