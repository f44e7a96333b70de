#include "bench/groups_scenario.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
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

const ClientId kClient = "bench-groups";

// ---- Shared by both phases ----

// Groups of kGroupsGroupSize objects, with put requests carrying the group
// metadata and the same requests without it.
struct Objects {
  uint64_t groups = 0;
  size_t id_size = 0;  // every group id's length
  std::vector<std::string>
      keys;  // member i of group g at g * kGroupsGroupSize + i
  std::vector<std::string> group_ids;  // group g's id
  std::vector<PutStartRequest> grouped;
  std::vector<PutStartRequest> ungrouped;

  // The group id that a member's key starts with (keys are named
  // "<group id>/<index>", as engines name a block's pieces after the
  // block). The put phase reads it from there, as a server reads it from
  // the request it just decoded, rather than from group_ids, which no
  // request is next to.
  std::string_view GroupIdIn(std::string_view key) const {
    return key.substr(0, id_size);
  }

  std::span<const std::string> KeysOf(uint64_t g) const {
    return std::span(keys).subspan(g * kGroupsGroupSize, kGroupsGroupSize);
  }
};

Objects MakeObjects(std::string_view prefix, uint64_t groups, uint64_t size) {
  Objects o;
  o.groups = groups;
  const uint64_t n = groups * kGroupsGroupSize;
  o.keys.reserve(n);
  o.group_ids.reserve(groups);
  o.grouped.reserve(n);
  o.ungrouped.reserve(n);
  for (uint64_t g = 0; g < groups; ++g) {
    const std::string group_id = HashedName(prefix, g);
    o.id_size = group_id.size();  // HashedName: one length for all
    o.group_ids.push_back(group_id);
    for (uint32_t i = 0; i < kGroupsGroupSize; ++i) {
      o.keys.push_back(group_id + "/" + std::to_string(i));
      PutStartRequest request;
      request.key = o.keys.back();
      request.size = size;
      request.client = kClient;
      o.ungrouped.push_back(request);
      request.options.group = GroupSpec{group_id, kGroupsGroupSize, i};
      o.grouped.push_back(std::move(request));
    }
  }
  return o;
}

Status RegisterNodes(Master& master, int count, uint64_t dram, uint64_t ssd,
                     std::vector<NodeId>* ids) {
  for (int i = 0; i < count; ++i) {
    NodeSpec spec;
    spec.name = "bench-node-" + std::to_string(i);
    spec.dram_base = static_cast<uint64_t>(i + 1) << 40;
    spec.dram_size = dram;
    spec.ssd_capacity = ssd;
    MT_ASSIGN_OR_RETURN(const NodeId id, master.RegisterNode(spec, {}));
    ids->push_back(id);
  }
  return Status::Ok();
}

template <typename Results>
uint64_t CountErrors(const Results& results) {
  uint64_t errors = 0;
  for (const auto& r : results) errors += r.ok() ? 0 : 1;
  return errors;
}

// ---- Phase 1: bookkeeping cost ----

constexpr uint64_t kBookkeepingObjectSize = 4096;
constexpr int kBookkeepingNodes = 4;
constexpr uint64_t kMinNodeDram = 64ull << 20;
constexpr auto kMinExistsTime = std::chrono::milliseconds(250);

struct Timed {
  double seconds = 0;
  uint64_t ops = 0;
  uint64_t errors = 0;
  double ops_per_s() const { return Ratio(ops, seconds); }
};

double Since(BenchClock::time_point start) {
  return std::chrono::duration<double>(BenchClock::now() - start).count();
}

// A master whose nodes hold `objects` at about 50% of DRAM: no eviction.
Result<std::unique_ptr<Master>> NewBookkeepingMaster(uint64_t objects) {
  auto master =
      std::make_unique<Master>(MasterConfig{}, SystemClock::Default());
  const uint64_t share = objects * kBookkeepingObjectSize / kBookkeepingNodes +
                         kBookkeepingObjectSize;
  std::vector<NodeId> ids;
  MT_RETURN_IF_ERROR(RegisterNodes(*master, kBookkeepingNodes,
                                   std::max(2 * share, kMinNodeDram), 0, &ids));
  return master;
}

// The put and exists phases of a bookkeeping run are the functions named
// below, never inlined nor cloned, so that callgrind's --toggle-collect
// (bench/README.md) collects exactly one phase, whatever the compiler does.
#if defined(__clang__)
#define MT_GROUPS_PHASE __attribute__((noinline))
#else
#define MT_GROUPS_PHASE __attribute__((noinline, noclone))
#endif

// Puts every object, `batch` keys per call, with or without its group.
// Each call's requests are written into a few reused slots just before the
// call, as a server decodes a call's requests just before handling them
// (and timed with it): the master reads requests that are fresh in cache,
// not 200,000 prebuilt ones spread over tens of MB, whose cache misses
// would be charged to whichever variant reads more request bytes.
MT_GROUPS_PHASE Timed GroupsPutPhase(Master& master, const Objects& o,
                                     bool grouped, size_t batch) {
  std::vector<PutStartRequest> slots(batch);
  for (PutStartRequest& r : slots) {
    r.size = kBookkeepingObjectSize;
    r.client = kClient;
    if (grouped) r.options.group.emplace();
  }
  const std::span<const std::string> keys(o.keys);
  Timed t;
  const auto start = BenchClock::now();
  for (size_t i = 0; i < keys.size(); i += batch) {
    const size_t n = std::min(batch, keys.size() - i);
    for (size_t j = 0; j < n; ++j) {
      PutStartRequest& r = slots[j];
      r.key.assign(keys[i + j]);  // strings keep their capacity: no malloc
      if (grouped) {
        GroupSpec& spec = *r.options.group;
        spec.group_id.assign(o.GroupIdIn(keys[i + j]));
        spec.group_size = kGroupsGroupSize;
        spec.group_index = static_cast<uint32_t>((i + j) % kGroupsGroupSize);
      }
    }
    t.errors += CountErrors(master.PutStart(std::span(slots).first(n)));
    t.errors += CountErrors(master.PutEnd(kClient, keys.subspan(i, n)));
    t.ops += n;
  }
  t.seconds = Since(start);
  return t;
}

// Full passes of Exists over the keys until kMinExistsTime elapsed (at
// least one). A key that is absent, or (grouped) whose group is not
// complete, is an error.
MT_GROUPS_PHASE Timed GroupsExistsPhase(Master& master,
                                        std::span<const std::string> keys,
                                        size_t batch, bool grouped) {
  Timed t;
  const auto start = BenchClock::now();
  do {
    for (size_t i = 0; i < keys.size(); i += batch) {
      const size_t n = std::min(batch, keys.size() - i);
      for (const auto& r : master.Exists(keys.subspan(i, n))) {
        const bool good = r.ok() && r->exists &&
                          (!grouped || (r->group && r->group->state ==
                                                        GroupState::kComplete));
        t.errors += good ? 0 : 1;
      }
      t.ops += n;
    }
  } while (Since(start) <
           std::chrono::duration<double>(kMinExistsTime).count());
  t.seconds = Since(start);
  return t;
}

// The variants a run selects, in the order each repeat runs them: index 0
// without, 1 with group metadata.
std::vector<int> SelectedVariants(GroupsVariant variant) {
  switch (variant) {
    case GroupsVariant::kGrouped:
      return {1};
    case GroupsVariant::kUngrouped:
      return {0};
    case GroupsVariant::kBoth:
      break;
  }
  return {0, 1};
}

// The best ops/s over the repeats, per op and variant ([grouped]), and the
// exists passes of the last run of each variant (for callgrind: instructions
// of GroupsExistsPhase / (passes x objects)).
struct BookkeepingBest {
  double put[2] = {};
  double exists[2] = {};
  uint64_t exists_passes[2] = {};
};

bool MeasureBookkeeping(ResultSink& sink, const Objects& o, size_t batch,
                        const GroupsOptions& options, BookkeepingBest& best) {
  const bool run_exists = options.op != GroupsOp::kPut;
  for (int rep = 0; rep < options.repeats; ++rep) {
    for (const int grouped : SelectedVariants(options.variant)) {
      auto master = NewBookkeepingMaster(o.keys.size());
      if (!master.ok()) {
        sink.Progress("groups: cannot register nodes: " +
                      master.status().ToString());
        return false;
      }
      const Timed put = GroupsPutPhase(**master, o, grouped != 0, batch);
      const Timed exists =
          run_exists ? GroupsExistsPhase(**master, o.keys, batch, grouped != 0)
                     : Timed{};
      const uint64_t evicted = (*master)->GetStats().evicted_memory_objects;
      if (put.errors + exists.errors + evicted != 0) {
        sink.Progress("groups: bookkeeping failed: put errors " +
                      std::to_string(put.errors) + ", exists errors " +
                      std::to_string(exists.errors) + ", evictions " +
                      std::to_string(evicted));
        return false;
      }
      best.put[grouped] = std::max(best.put[grouped], put.ops_per_s());
      best.exists[grouped] = std::max(best.exists[grouped], exists.ops_per_s());
      best.exists_passes[grouped] = exists.ops / o.keys.size();
    }
  }
  return true;
}

// One result line of the bookkeeping phase. With both variants it carries
// both figures and their ratio; with one, only that variant's figure.
nlohmann::ordered_json BookkeepingLine(std::string_view op, const Objects& o,
                                       size_t batch, GroupsVariant variant,
                                       const double figures[2]) {
  nlohmann::ordered_json line = {{"scenario", "groups"},
                                 {"op", op},
                                 {"objects", o.keys.size()},
                                 {"group_size", kGroupsGroupSize},
                                 {"batch", batch}};
  if (variant != GroupsVariant::kUngrouped) {
    line["grouped_ops_per_s"] = figures[1];
  }
  if (variant != GroupsVariant::kGrouped) {
    line["ungrouped_ops_per_s"] = figures[0];
  }
  if (variant == GroupsVariant::kBoth) {
    line["ratio"] = Ratio(figures[1], figures[0]);
  }
  return line;
}

std::string ExistsPassesNote(const BookkeepingBest& best,
                             GroupsVariant variant) {
  std::string note;
  for (const int grouped : SelectedVariants(variant)) {
    note += (note.empty() ? "" : ", ") +
            std::to_string(best.exists_passes[grouped]) +
            (grouped != 0 ? " grouped" : " ungrouped");
  }
  return note;
}

bool RunBookkeeping(ResultSink& sink, uint64_t objects,
                    const GroupsOptions& options) {
  const uint64_t groups = std::max<uint64_t>(1, objects / kGroupsGroupSize);
  const uint64_t keys = groups * kGroupsGroupSize;
  // The object count goes to stderr before any run, so that a callgrind
  // count of GroupsPutPhase can be divided by it.
  sink.Progress("groups: bookkeeping, building " + std::to_string(keys) +
                " keys; each GroupsPutPhase call puts all " +
                std::to_string(keys) + " objects, " +
                std::to_string(options.repeats) +
                " call(s) per selected variant and batch size");
  const Objects o = MakeObjects("bench/kv/", groups, kBookkeepingObjectSize);
  const HeapKeptForBench heap_kept;
  if (!heap_kept.kept()) {
    sink.Progress(
        "groups: malloc did not take the keep-heap settings; "
        "figures include the kernel's page zeroing");
  }
  std::vector<size_t> batches = {1, kGroupsGroupSize};
  if (options.batch != 0) batches = {options.batch};
  for (const size_t batch : batches) {
    sink.Progress("groups: bookkeeping, batch " + std::to_string(batch));
    BookkeepingBest best;
    if (!MeasureBookkeeping(sink, o, batch, options, best)) return false;
    if (options.op != GroupsOp::kExists) {
      sink.Emit(BookkeepingLine("put", o, batch, options.variant, best.put));
    }
    if (options.op != GroupsOp::kPut) {
      sink.Progress("groups: batch " + std::to_string(batch) +
                    ", passes over the keys of the last GroupsExistsPhase "
                    "call: " +
                    ExistsPassesNote(best, options.variant));
      sink.Emit(
          BookkeepingLine("exists", o, batch, options.variant, best.exists));
    }
  }
  return true;
}

// ---- Phase 2: consistency under pressure ----

constexpr uint64_t kPressureObjectSize = 16ull << 10;
constexpr int kPressureNodes = 2;
// DRAM holds a quarter of the key space's bytes, and so does SSD: the store
// keeps about half of the key space, the rest is evicted from both tiers.
constexpr uint64_t kGroupsKeySpaceOverDram = 4;
constexpr uint64_t kKeySpaceOverSsd = 4;
constexpr uint64_t kMinPressureGroups = 64;
// A round: this many new groups put, then this many group reads, then the
// clock passes lease_ttl and the background steps run.
constexpr int kPutsPerRound = 2;
constexpr int kReadsPerRound = 8;
// The clock moves this much per group op, so recency orders the ops.
constexpr auto kGroupsOpTime = std::chrono::milliseconds(1);
constexpr uint64_t kGroupsSeed = 0x67726f757073;  // both modes see the same ops

struct PressureTally {
  uint64_t group_reads = 0;
  uint64_t partial = 0;     // some members readable, some not
  uint64_t missing = 0;     // no member readable
  uint64_t mixed_tier = 0;  // all readable, some from DRAM and some not
  uint64_t member_reads = 0;
  uint64_t memory_hits = 0;       // first replica in DRAM
  uint64_t group_incomplete = 0;  // member reads refused GROUP_INCOMPLETE
  uint64_t put_no_space = 0;      // member PutStarts refused NO_SPACE
};

// Distance back from the newest of `n` groups, log-uniform (a continuous
// zipf with s = 1): mostly recent, with a long tail over all of them.
uint64_t RecentDistance(uint64_t n, double u) {
  const auto d = static_cast<uint64_t>(std::pow(n + 1.0, u)) - 1;
  return std::min(d, n - 1);
}

// One pressure run: an in-process master on a ManualClock, offload
// on_evict, and fake nodes that complete every offload they are handed.
class PressureRun {
 public:
  PressureRun(const Objects& objects, bool grouped)
      : objects_(objects), grouped_(grouped) {}

  // False (with a note) on an unexpected engine error.
  bool Run(ResultSink& sink);
  const PressureTally& tally() const { return tally_; }
  // What the engine did, for stderr: evictions, offloads, audit.
  std::string Summary() const;

 private:
  Status PutGroup(uint64_t g);
  Status ReadGroup(uint64_t g);
  // Hands every queued offload to its node and reports it done.
  Status DrainOffloads();
  // Leases expire, offloads land, Tick, then DRAM copies of groups now
  // wholly on SSD may go.
  Status BackgroundStep();

  const Objects& objects_;
  const bool grouped_;
  ManualClock clock_;
  std::unique_ptr<Master> master_;
  std::vector<NodeId> nodes_;
  PressureTally tally_;
};

Status PressureRun::PutGroup(uint64_t g) {
  const auto requests =
      std::span(grouped_ ? objects_.grouped : objects_.ungrouped)
          .subspan(g * kGroupsGroupSize, kGroupsGroupSize);
  const std::span<const std::string> keys = objects_.KeysOf(g);
  const auto starts = master_->PutStart(requests);
  std::vector<std::string> started;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (starts[i].ok()) {
      started.push_back(keys[i]);
    } else if (starts[i].status().reason() == ErrorReason::kNoSpace) {
      ++tally_.put_no_space;  // the group stays short of this member
    } else {
      return starts[i].status();
    }
  }
  for (const Status& s : master_->PutEnd(kClient, started)) {
    MT_RETURN_IF_ERROR(s);
  }
  return Status::Ok();
}

Status PressureRun::ReadGroup(uint64_t g) {
  uint32_t readable = 0;
  uint32_t in_memory = 0;
  for (const auto& r : master_->GetReplicaList(objects_.KeysOf(g))) {
    ++tally_.member_reads;
    if (r.ok()) {
      ++readable;
      if (!r->replicas.empty() && r->replicas.front().tier == Tier::kMemory) {
        ++in_memory;
      }
      continue;
    }
    const ErrorReason reason = r.status().reason();
    if (reason == ErrorReason::kGroupIncomplete) {
      ++tally_.group_incomplete;
    } else if (reason != ErrorReason::kObjectNotFound) {
      return r.status();
    }
  }
  ++tally_.group_reads;
  tally_.memory_hits += in_memory;
  if (readable == 0) {
    ++tally_.missing;
  } else if (readable < kGroupsGroupSize) {
    ++tally_.partial;
  } else if (in_memory != 0 && in_memory != kGroupsGroupSize) {
    ++tally_.mixed_tier;
  }
  return Status::Ok();
}

Status PressureRun::DrainOffloads() {
  for (const NodeId node : nodes_) {
    for (;;) {
      MT_ASSIGN_OR_RETURN(const NodeTasks reply, master_->PullTasks(node));
      for (const Task& task : reply.offloads) {
        MT_RETURN_IF_ERROR(master_->NotifyOffloadSuccess(node, task.id));
      }
      if (reply.offloads.empty()) break;
    }
  }
  return Status::Ok();
}

Status PressureRun::BackgroundStep() {
  // Heartbeats first: the clock just jumped past lease_ttl, and a node
  // silent for node_ttl would be declared dead by Tick.
  clock_.Advance(master_->config().lease_ttl + kGroupsOpTime);
  MT_RETURN_IF_ERROR(DrainOffloads());
  master_->Tick();
  MT_RETURN_IF_ERROR(DrainOffloads());
  master_->EvictMemory();
  return Status::Ok();
}

bool PressureRun::Run(ResultSink& sink) {
  const std::string mode = grouped_ ? "group" : "per_object";
  MasterConfig config;
  config.offload_mode = OffloadMode::kOnEvict;
  master_ = std::make_unique<Master>(config, &clock_);
  const uint64_t bytes = objects_.keys.size() * kPressureObjectSize;
  Status status =
      RegisterNodes(*master_, kPressureNodes,
                    bytes / kGroupsKeySpaceOverDram / kPressureNodes,
                    bytes / kKeySpaceOverSsd / kPressureNodes, &nodes_);
  std::mt19937_64 rng(kGroupsSeed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const uint64_t groups = objects_.groups;
  uint64_t put = 0;
  uint64_t next_progress = 0;
  while (status.ok() && put < groups) {
    if (put >= next_progress) {
      sink.Progress("groups: " + mode + ", " + std::to_string(put) + " of " +
                    std::to_string(groups) + " groups put");
      next_progress += std::max<uint64_t>(1, groups / 4);
    }
    for (int p = 0; p < kPutsPerRound && put < groups && status.ok(); ++p) {
      status = PutGroup(put++);
      clock_.Advance(kGroupsOpTime);
    }
    for (int r = 0; r < kReadsPerRound && status.ok(); ++r) {
      status = ReadGroup(put - 1 - RecentDistance(put, uniform(rng)));
      clock_.Advance(kGroupsOpTime);
    }
    if (status.ok()) status = BackgroundStep();
  }
  if (!status.ok()) {
    sink.Progress("groups: " + mode + " failed: " + status.ToString());
    return false;
  }
  return true;
}

std::string PressureRun::Summary() const {
  const MasterStats st = master_->GetStats();
  const GroupCounterSnapshot& g = st.group_counters;
  return "DRAM evictions " + std::to_string(st.evicted_memory_objects) +
         " objects (" + std::to_string(g.groups_evicted_memory) +
         " groups), SSD evictions " + std::to_string(st.evicted_disk_objects) +
         " objects (" + std::to_string(g.groups_evicted_disk) +
         " groups), objects gone " + std::to_string(st.objects_evicted) +
         ", offloads " + std::to_string(st.offload_completed) + ", audit " +
         (master_->Audit().consistent() ? "consistent" : "INCONSISTENT");
}

bool RunPressure(ResultSink& sink, uint64_t groups) {
  const Objects o = MakeObjects("bench/pp/", groups, kPressureObjectSize);
  for (const bool grouped : {true, false}) {
    PressureRun run(o, grouped);
    if (!run.Run(sink)) return false;
    sink.Progress(std::string("groups: ") + (grouped ? "group" : "per_object") +
                  ": " + run.Summary());
    const PressureTally& t = run.tally();
    sink.Emit({{"scenario", "groups"},
               {"mode", grouped ? "group" : "per_object"},
               {"groups", groups},
               {"group_reads", t.group_reads},
               {"partial_read_ratio", Ratio(t.partial, t.group_reads)},
               {"memory_hit_ratio", Ratio(t.memory_hits, t.member_reads)},
               {"missing_read_ratio", Ratio(t.missing, t.group_reads)},
               {"mixed_tier_read_ratio", Ratio(t.mixed_tier, t.group_reads)},
               {"group_incomplete_member_reads", t.group_incomplete},
               {"put_no_space", t.put_no_space}});
  }
  return true;
}

uint64_t Scaled(uint64_t base, double scale, uint64_t at_least) {
  return std::max<uint64_t>(at_least, std::llround(base * scale));
}

}  // namespace

int RunGroupsScenario(const CommonOptions& options, const GroupsOptions& groups,
                      ResultSink& sink) {
  if (groups.objects % kGroupsGroupSize != 0 || groups.repeats < 1 ||
      groups.repeats > kMaxGroupsRepeats || groups.batch > kMaxGroupsBatch) {
    sink.Progress("groups: bad options: objects must be a multiple of " +
                  std::to_string(kGroupsGroupSize) + ", repeats 1.." +
                  std::to_string(kMaxGroupsRepeats) + ", batch 1.." +
                  std::to_string(kMaxGroupsBatch));
    return 2;  // usage error, as the CLI's validators report it
  }
  const uint64_t objects =
      groups.objects != 0
          ? groups.objects
          : Scaled(kDefaultGroupsObjects, options.scale, kGroupsGroupSize);
  bool ok = RunBookkeeping(sink, objects, groups);
  if (!groups.skip_pressure) {
    ok = RunPressure(sink, Scaled(kDefaultPressureGroups, options.scale,
                                  kMinPressureGroups)) &&
         ok;
  }
  return ok ? 0 : 1;
}

}  // namespace mooncake_tier::bench
