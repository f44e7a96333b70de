#include "bench/promotion_scenario.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "bench/bench_util.h"
#include "client/embedded_cluster.h"
#include "core/master.h"
#include "core/master_config.h"
#include "core/promotion_options.h"
#include "node/aligned_buffer.h"

namespace mooncake_tier::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

// ---- Shape of the store and of the workloads ----

constexpr uint64_t kPromotionObjectBytes = 16ull << 10;
constexpr uint64_t kMinDramObjects = 64;
constexpr uint64_t kPromotionKeySpaceOverDram = 5;
// The SSD store keeps up to half its capacity as compaction headroom; three
// times the key space leaves room for every key, so no SSD eviction runs.
constexpr uint64_t kSsdOverKeySpace = 3;
constexpr double kZipfExponent = 0.99;

// The cluster is stepped (heartbeat, node tasks, master Tick) after every
// kGetsPerStep Gets, and after every put batch of the load.
constexpr size_t kGetsPerStep = 64;
constexpr size_t kPutsPerStep = 16;
// Steps without progress before a load gives up, and steps allowed for the
// last offloads of the load to land.
constexpr int kMaxStalledPutSteps = 64;
constexpr int kMaxDrainSteps = 4096;

// Simulated time: every Get and every put moves the ManualClock this much,
// so last-access times order the LRU eviction.
constexpr auto kPromotionOpTime = std::chrono::microseconds(100);
// A Get here is over when it returns, so a reader's lease only has to cover
// the call; 5 ms (50 Gets) instead of the default 10 s, which would make
// every object read in the last 100,000 Gets of simulated time unevictable.
constexpr auto kLeaseTtl = std::chrono::milliseconds(5);

// Gets of each phase, in multiples of the DRAM's object count.
constexpr uint64_t kWarmGetsPerDramObject = 4;
constexpr uint64_t kMeasuredGetsPerDramObject = 8;
// warmup: Gets over hot set B measured from the switch.
constexpr uint64_t kSwitchGetsPerDramObject = 2;
// scan_mix: the last kScanGetsPerStep Gets of every step are a scan run.
constexpr size_t kScanGetsPerStep = kGetsPerStep / 4;

constexpr uint64_t kPromotionSeed = 0x70726f6d6f7465;

// ---- Policies ----

struct Policy {
  const char* name;
  bool on_hit;
  PromotionPolicy policy;
};

constexpr Policy kPolicies[] = {
    {"off", false, PromotionPolicy::kThreshold},
    {"threshold", true, PromotionPolicy::kThreshold},
    {"tinylfu", true, PromotionPolicy::kTinyLfu},
};

PromotionOptions OptionsOf(const Policy& policy) {
  PromotionOptions o;  // defaults: threshold 2, sketch period 16384 reads
  o.on_hit = policy.on_hit;
  o.policy = policy.policy;
  o.proactive_low_watermark = 0;  // isolate promotion on hit
  return o;
}

// ---- Keys and Get sequences ----

// Keys, and two unrelated orders of them: by popularity and by load.
struct KeySpace {
  uint64_t dram_objects = 0;
  std::vector<std::string> keys;
  std::vector<uint32_t> by_rank;     // zipf rank r reads key by_rank[r]
  std::vector<uint32_t> load_order;  // the order of the puts
};

std::vector<uint32_t> Shuffled(uint64_t n, uint64_t seed) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  std::mt19937_64 rng(seed);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

KeySpace MakeKeySpace(uint64_t dram_objects) {
  KeySpace ks;
  ks.dram_objects = dram_objects;
  const uint64_t n = dram_objects * kPromotionKeySpaceOverDram;
  for (uint64_t i = 0; i < n; ++i) {
    char hex[20];
    std::snprintf(
        hex, sizeof(hex), "%016llx",
        static_cast<unsigned long long>((i + 1) * 0x9E3779B97F4A7C15ull));
    ks.keys.push_back(std::string("bench/promo/") + hex);
  }
  ks.by_rank = Shuffled(n, kPromotionSeed);
  ks.load_order = Shuffled(n, kPromotionSeed + 1);
  return ks;
}

// Ranks 0..n-1 with P(r) proportional to 1 / (r + 1)^s.
class ZipfSampler {
 public:
  ZipfSampler(uint64_t n, double s) : cdf_(n) {
    double sum = 0;
    for (uint64_t r = 0; r < n; ++r) {
      sum += 1.0 / std::pow(static_cast<double>(r + 1), s);
      cdf_[r] = sum;
    }
    for (double& c : cdf_) c /= sum;
  }

  uint32_t Next(std::mt19937_64& rng) {
    const double u = uniform_(rng);
    const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u);
    return static_cast<uint32_t>(
        std::min<size_t>(it - cdf_.begin(), cdf_.size() - 1));
  }

 private:
  std::vector<double> cdf_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
};

// The Gets of one workload, as key indices: `warm` runs first and is not
// counted, then `measured`. Every policy plays the same sequence.
struct GetPlan {
  std::string workload;
  std::vector<uint32_t> warm;
  std::vector<uint32_t> measured;
};

GetPlan ZipfPlan(const KeySpace& ks) {
  GetPlan plan{"zipf", {}, {}};
  std::mt19937_64 rng(kPromotionSeed + 2);
  ZipfSampler zipf(ks.keys.size(), kZipfExponent);
  for (uint64_t i = 0; i < kWarmGetsPerDramObject * ks.dram_objects; ++i) {
    plan.warm.push_back(ks.by_rank[zipf.Next(rng)]);
  }
  for (uint64_t i = 0; i < kMeasuredGetsPerDramObject * ks.dram_objects; ++i) {
    plan.measured.push_back(ks.by_rank[zipf.Next(rng)]);
  }
  return plan;
}

// The zipf of ZipfPlan, with the last quarter of every step's Gets a run of
// a sequential scan from the coldest rank up. The scan never wraps (3/5 of
// the key space at most), so each scanned key is read once.
GetPlan ScanMixPlan(const KeySpace& ks) {
  GetPlan plan{"scan_mix", {}, {}};
  std::mt19937_64 rng(kPromotionSeed + 2);
  ZipfSampler zipf(ks.keys.size(), kZipfExponent);
  uint64_t scanned = 0;
  const auto next = [&](uint64_t i) {
    if (i % kGetsPerStep >= kGetsPerStep - kScanGetsPerStep) {
      return ks.by_rank[ks.keys.size() - 1 - scanned++];
    }
    return ks.by_rank[zipf.Next(rng)];
  };
  const uint64_t warm = kWarmGetsPerDramObject * ks.dram_objects;
  const uint64_t measured = kMeasuredGetsPerDramObject * ks.dram_objects;
  for (uint64_t i = 0; i < warm; ++i) plan.warm.push_back(next(i));
  for (uint64_t i = warm; i < warm + measured; ++i) {
    plan.measured.push_back(next(i));
  }
  return plan;
}

// Zipf over hot set A (half the DRAM's objects), then over a disjoint hot
// set B of the same size; measured from the switch.
GetPlan WarmupPlan(const KeySpace& ks) {
  GetPlan plan{"warmup", {}, {}};
  std::mt19937_64 rng(kPromotionSeed + 3);
  const uint64_t hot = std::max<uint64_t>(1, ks.dram_objects / 2);
  ZipfSampler zipf(hot, kZipfExponent);
  for (uint64_t i = 0; i < kWarmGetsPerDramObject * ks.dram_objects; ++i) {
    plan.warm.push_back(ks.by_rank[zipf.Next(rng)]);
  }
  for (uint64_t i = 0; i < kSwitchGetsPerDramObject * ks.dram_objects; ++i) {
    plan.measured.push_back(ks.by_rank[hot + zipf.Next(rng)]);
  }
  return plan;
}

// ---- One (workload, policy) run ----

struct PromotionFigures {
  double memory_hit_ratio = 0;
  double mean_get_us = 0;
  double p99_get_us = 0;
  uint64_t promoted = 0;
  uint64_t gets = 0;
};

// A fresh store stepped by hand on a ManualClock, one node with DRAM for
// ks.dram_objects objects and an SSD store on files in `dir`.
class PromotionRun {
 public:
  PromotionRun(const KeySpace& ks, const Policy& policy, std::string dir)
      : ks_(ks),
        policy_(policy),
        dir_(std::move(dir)),
        value_(kPromotionObjectBytes),
        buffer_(kPromotionObjectBytes) {
    std::fill(value_.data(), value_.data() + value_.size(), std::byte{0x5a});
  }

  Status Start(bool direct_io);
  // Puts every key in load order, stepping the cluster so that evicted
  // objects are offloaded, then lets the last offloads land.
  Status Load();
  // Gets `gets` one by one, stepping every kGetsPerStep; with `latencies_us`
  // records each Get's wall time.
  Status Play(std::span<const uint32_t> gets,
              std::vector<double>* latencies_us);
  MasterStats Stats() const { return cluster_->master().GetStats(); }
  // The engine's view of the run, for stderr.
  std::string Summary(const MasterStats& before,
                      const MasterStats& after) const;

 private:
  Status PutSome(std::vector<uint32_t>& pending);

  const KeySpace& ks_;
  const Policy& policy_;
  const std::string dir_;
  AlignedBuffer value_;   // every put writes these bytes
  AlignedBuffer buffer_;  // every Get reads into it
  ManualClock clock_;     // outlives the cluster
  std::unique_ptr<EmbeddedCluster> cluster_;
  std::unique_ptr<Client> client_;  // dies before the cluster
};

Status PromotionRun::Start(bool direct_io) {
  EmbeddedClusterOptions options;
  options.master.offload_mode = OffloadMode::kOnEvict;
  options.master.lease_ttl = kLeaseTtl;
  options.master.promotion = OptionsOf(policy_);
  options.clock = &clock_;
  options.background = false;
  EmbeddedNodeOptions node;
  node.node.name = "bench-promotion-node";
  node.node.dram_bytes = ks_.dram_objects * kPromotionObjectBytes;
  node.ssd_bytes = kSsdOverKeySpace * ks_.keys.size() * kPromotionObjectBytes;
  node.ssd_dir = dir_;
  node.direct_io = direct_io;
  options.nodes.push_back(std::move(node));
  MT_ASSIGN_OR_RETURN(cluster_, EmbeddedCluster::Start(std::move(options)));
  client_ = cluster_->NewClient();
  return Status::Ok();
}

// One put batch of the keys in `pending`; leaves in it those refused
// NO_SPACE (DRAM waits for offloads), to be tried after the next step.
Status PromotionRun::PutSome(std::vector<uint32_t>& pending) {
  std::vector<PutItem> items;
  for (const uint32_t k : pending) {
    items.push_back(
        {ks_.keys[k], value_.span().first(kPromotionObjectBytes), {}});
  }
  const std::vector<Status> results = client_->PutBatch(items);
  std::vector<uint32_t> retry;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok()) continue;
    if (results[i].reason() != ErrorReason::kNoSpace) return results[i];
    retry.push_back(pending[i]);
  }
  pending = std::move(retry);
  return Status::Ok();
}

Status PromotionRun::Load() {
  std::vector<uint32_t> pending;
  size_t next = 0;
  int stalled = 0;
  while (next < ks_.load_order.size() || !pending.empty()) {
    while (pending.size() < kPutsPerStep && next < ks_.load_order.size()) {
      pending.push_back(ks_.load_order[next++]);
    }
    const size_t tried = pending.size();
    MT_RETURN_IF_ERROR(PutSome(pending));
    stalled = pending.size() == tried ? stalled + 1 : 0;
    if (stalled > kMaxStalledPutSteps) {
      return Status(ErrorReason::kNoSpace, "load: puts refused NO_SPACE for " +
                                               std::to_string(stalled) +
                                               " steps");
    }
    clock_.Advance(kPromotionOpTime * tried);
    cluster_->Step();
  }
  for (int i = 0; i < kMaxDrainSteps; ++i) {
    const MasterStats s = Stats();
    if (s.offload_tasks_queued + s.offload_tasks_in_flight == 0) {
      return Status::Ok();
    }
    clock_.Advance(kPromotionOpTime);
    cluster_->Step();
  }
  return Status(ErrorReason::kInternal, "load: offloads did not drain");
}

Status PromotionRun::Play(std::span<const uint32_t> gets,
                          std::vector<double>* latencies_us) {
  for (size_t i = 0; i < gets.size(); ++i) {
    const std::string& key = ks_.keys[gets[i]];
    const auto start = SteadyClock::now();
    const Result<uint64_t> got = client_->GetInto(key, buffer_.span());
    const auto took = SteadyClock::now() - start;
    if (!got.ok()) {
      return Status(got.status().reason(),
                    "get '" + key + "': " + got.status().message());
    }
    if (latencies_us != nullptr) {
      latencies_us->push_back(
          std::chrono::duration<double, std::micro>(took).count());
    }
    clock_.Advance(kPromotionOpTime);
    if ((i + 1) % kGetsPerStep == 0) cluster_->Step();
  }
  return Status::Ok();
}

std::string PromotionRun::Summary(const MasterStats& b,
                                  const MasterStats& a) const {
  const auto delta = [](uint64_t after, uint64_t before) {
    return std::to_string(after - before);
  };
  return "measured phase: promotions queued " +
         delta(a.promotion_queued, b.promotion_queued) + ", completed " +
         delta(a.promotion_completed, b.promotion_completed) +
         ", admission gated " +
         delta(a.promotion_admission_gated, b.promotion_admission_gated) +
         ", watermark gated " +
         delta(a.promotion_watermark_gated, b.promotion_watermark_gated) +
         ", deduped " + delta(a.promotion_deduped, b.promotion_deduped) +
         ", alloc failed " +
         delta(a.promotion_alloc_failed, b.promotion_alloc_failed) +
         ", DRAM evictions " +
         delta(a.evicted_memory_objects, b.evicted_memory_objects) +
         ", offloads " + delta(a.offload_completed, b.offload_completed) +
         ", sketch halvings " +
         delta(a.promotion_sketch_halvings, b.promotion_sketch_halvings) +
         " (run " + std::to_string(a.promotion_sketch_halvings) + ")" +
         "; DRAM " +
         std::to_string(
             static_cast<int>(100 * Ratio(a.memory.used, a.memory.capacity))) +
         "% used; audit " +
         (cluster_->master().Audit().consistent() ? "consistent"
                                                  : "INCONSISTENT");
}

PromotionFigures Summarise(const MasterStats& before, const MasterStats& after,
                           const std::vector<double>& latencies_us) {
  PromotionFigures f;
  const double memory =
      static_cast<double>(after.get_memory_hit - before.get_memory_hit);
  const double disk =
      static_cast<double>(after.get_local_disk_hit - before.get_local_disk_hit);
  f.memory_hit_ratio = Ratio(memory, memory + disk);
  f.gets = latencies_us.size();
  f.mean_get_us =
      Ratio(std::accumulate(latencies_us.begin(), latencies_us.end(), 0.0),
            static_cast<double>(latencies_us.size()));
  f.p99_get_us = Percentile(latencies_us, 0.99);
  f.promoted = after.promotion_completed - before.promotion_completed;
  return f;
}

// Whether files in `dir` can be opened with O_DIRECT (not on tmpfs).
bool SupportsDirectIo(const std::string& dir) {
  const std::string probe = dir + "/direct-io-probe";
  const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_DIRECT, 0600);
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

Result<PromotionFigures> RunCase(const KeySpace& ks, const GetPlan& plan,
                                 const Policy& policy, const std::string& dir,
                                 bool direct_io, ResultSink& sink) {
  const std::string name = plan.workload + "/" + policy.name;
  sink.Progress("promotion: " + name + ": loading " +
                std::to_string(ks.keys.size()) + " keys");
  PromotionRun run(ks, policy, dir);
  MT_RETURN_IF_ERROR(run.Start(direct_io));
  MT_RETURN_IF_ERROR(run.Load());
  sink.Progress("promotion: " + name + ": " + std::to_string(plan.warm.size()) +
                " warm-up and " + std::to_string(plan.measured.size()) +
                " measured gets");
  MT_RETURN_IF_ERROR(run.Play(plan.warm, nullptr));
  const MasterStats before = run.Stats();
  std::vector<double> latencies_us;
  latencies_us.reserve(plan.measured.size());
  MT_RETURN_IF_ERROR(run.Play(plan.measured, &latencies_us));
  const MasterStats after = run.Stats();
  sink.Progress("promotion: " + name + ": " + run.Summary(before, after));
  return Summarise(before, after, latencies_us);
}

// ---- The targets, as figures ----

using FiguresByPolicy = std::map<std::string, PromotionFigures>;

void EmitChecks(const std::vector<std::string>& workloads,
                std::map<std::string, FiguresByPolicy>& results,
                ResultSink& sink) {
  FiguresByPolicy& zipf = results["zipf"];
  for (const char* policy : {"threshold", "tinylfu"}) {
    sink.Emit({{"scenario", "promotion"},
               {"check", "zipf_hit_ratio_vs_off"},
               {"policy", policy},
               {"value", Ratio(zipf[policy].memory_hit_ratio,
                               zipf["off"].memory_hit_ratio)},
               {"target", 1.5}});
  }
  for (const std::string& workload : workloads) {
    FiguresByPolicy& by_policy = results[workload];
    std::string best = "off";
    for (const auto& [policy, figures] : by_policy) {
      if (figures.memory_hit_ratio > by_policy[best].memory_hit_ratio) {
        best = policy;
      }
    }
    sink.Emit({{"scenario", "promotion"},
               {"check", "tinylfu_within_5pct_of_best"},
               {"workload", workload},
               {"best_policy", best},
               {"value", Ratio(by_policy["tinylfu"].memory_hit_ratio,
                               by_policy[best].memory_hit_ratio)},
               {"target", 0.95}});
  }
  for (const std::string& workload : workloads) {
    FiguresByPolicy& by_policy = results[workload];
    sink.Emit({{"scenario", "promotion"},
               {"check", "every_policy_promotes"},
               {"workload", workload},
               {"value", std::min(by_policy["threshold"].promoted,
                                  by_policy["tinylfu"].promoted)},
               {"target", 1}});
  }
}

}  // namespace

int RunPromotionScenario(const CommonOptions& common, ResultSink& sink) {
  const uint64_t dram_objects = std::max<uint64_t>(
      kMinDramObjects,
      std::llround(kDefaultPromotionDramObjects * common.scale));
  const KeySpace ks = MakeKeySpace(dram_objects);
  const std::vector<GetPlan> plans = {ZipfPlan(ks), ScanMixPlan(ks),
                                      WarmupPlan(ks)};
  std::string root = common.scratch_dir + "/mt-promotion-bench-XXXXXX";
  if (::mkdtemp(root.data()) == nullptr) {
    sink.Progress("promotion: cannot create a temp dir under " +
                  common.scratch_dir);
    return 1;
  }
  const bool direct_io = SupportsDirectIo(root);
  sink.Progress("promotion: " + std::to_string(ks.keys.size()) + " keys of " +
                std::to_string(kPromotionObjectBytes >> 10) +
                " KiB, DRAM for " + std::to_string(dram_objects) +
                ", SSD files in " + root +
                (direct_io ? " (O_DIRECT)" : " (page cache: no O_DIRECT)"));

  std::vector<std::string> workloads;
  std::map<std::string, FiguresByPolicy> results;
  int exit_code = 0;
  for (const GetPlan& plan : plans) {
    workloads.push_back(plan.workload);
    for (const Policy& policy : kPolicies) {
      const std::string dir = root + "/" + plan.workload + "-" + policy.name;
      const Result<PromotionFigures> f =
          RunCase(ks, plan, policy, dir, direct_io, sink);
      std::filesystem::remove_all(dir);
      if (!f.ok()) {
        sink.Progress("promotion: " + plan.workload + "/" + policy.name +
                      " failed: " + f.status().ToString());
        exit_code = 1;
        break;
      }
      results[plan.workload][policy.name] = *f;
      sink.Emit({{"scenario", "promotion"},
                 {"workload", plan.workload},
                 {"policy", policy.name},
                 {"memory_hit_ratio", f->memory_hit_ratio},
                 {"mean_get_us", f->mean_get_us},
                 {"p99_get_us", f->p99_get_us},
                 {"promoted", f->promoted},
                 {"gets", f->gets},
                 {"ssd_direct_io", direct_io}});
    }
    if (exit_code != 0) break;
  }
  std::filesystem::remove_all(root);
  if (exit_code == 0) EmitChecks(workloads, results, sink);
  return exit_code;
}

}  // namespace mooncake_tier::bench
