#include "bench/remote_scenarios.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "base/byte_units.h"
#include "bench/bench_util.h"
#include "bench/grpc_ping.h"
#include "bench/raw_device.h"
#include "bench/remote_connection.h"
#include "bench/remote_store.h"
#include "bench/small_object_rows.h"
#include "mooncake_tier/remote_client.h"
#include "rpc/grpc_master_api.h"

namespace mooncake_tier::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::duration;

// DRAM of the daemon --spawn starts.
constexpr uint64_t kSpawnDram = 1024 * kMiB;
constexpr uint64_t kObjectSizes[] = {64 << 10, 1 * kMiB, 4 * kMiB};
constexpr int kThreadCounts[] = {1, 4};
constexpr uint64_t kMaxObjectBytes = 4 * kMiB;

// Runs fn(thread) on `threads` threads started together; wall seconds.
double RunTogether(int threads, const std::function<void(int)>& fn) {
  std::barrier start(threads + 1);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      fn(t);
    });
  }
  start.arrive_and_wait();
  const auto begin = SteadyClock::now();
  for (std::thread& th : pool) th.join();
  return duration<double>(SteadyClock::now() - begin).count();
}

double Gbps(uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0;
}

// One client thread's objects: source bytes and a landing area, both
// registered with the client for zero-copy transfers.
struct ThreadSlab {
  std::vector<std::string> keys;
  std::vector<std::byte> source;
  std::vector<std::byte> landing;
  std::vector<double> get_us;
};

std::vector<ThreadSlab> MakeSlabs(Client& client, const std::string& prefix,
                                  uint64_t size, int threads, size_t count) {
  std::vector<ThreadSlab> slabs(threads);
  std::mt19937_64 rng(size * 131 + threads);
  for (int t = 0; t < threads; ++t) {
    ThreadSlab& s = slabs[t];
    s.source.resize(count * size);
    s.landing.resize(count * size);
    for (size_t i = 0; i < s.source.size(); i += 8) {
      const uint64_t word = rng();
      std::memcpy(&s.source[i], &word,
                  std::min<size_t>(8, s.source.size() - i));
    }
    for (size_t i = 0; i < count; ++i) {
      s.keys.push_back(prefix + "/" + std::to_string(size) + "/" +
                       std::to_string(threads) + "/" + std::to_string(t) + "/" +
                       std::to_string(i));
    }
    client.RegisterBuffer(s.source).IgnoreError();
    client.RegisterBuffer(s.landing).IgnoreError();
  }
  return slabs;
}

void ReleaseSlabs(Client& client, std::vector<ThreadSlab>& slabs) {
  for (ThreadSlab& s : slabs) {
    client.RemoveBatch(s.keys, RemoveOptions{true});
    client.UnregisterBuffer(s.source).IgnoreError();
    client.UnregisterBuffer(s.landing).IgnoreError();
  }
}

// Puts every slab's objects, one per call, retrying NO_SPACE while the
// store makes room (offload and eviction are asynchronous). Seconds, or
// the first error that is not NO_SPACE.
Result<double> PutSlabs(Client& client, std::vector<ThreadSlab>& slabs,
                        uint64_t size) {
  std::atomic<bool> failed{false};
  Status first_error;
  std::mutex error_mu;
  const double seconds = RunTogether(slabs.size(), [&](int t) {
    ThreadSlab& s = slabs[t];
    for (size_t i = 0; i < s.keys.size() && !failed; ++i) {
      std::span<const std::byte> value(&s.source[i * size], size);
      const auto give_up = SteadyClock::now() + std::chrono::seconds(60);
      Status put = client.Put(s.keys[i], value);
      while (put.reason() == ErrorReason::kNoSpace &&
             SteadyClock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        put = client.Put(s.keys[i], value);
      }
      if (!put.ok()) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!failed.exchange(true)) first_error = put;
      }
    }
  });
  if (failed) return first_error;
  return seconds;
}

// Reads every slab's objects into its landing area `rounds` times; records
// per-call latency and checks the bytes of the first round.
// Gets every key of `slabs` (of slice `slice` of `slices`: the same share
// of each thread's keys) `rounds` times, each thread its own keys.
Result<double> GetSlabs(Client& client, std::vector<ThreadSlab>& slabs,
                        uint64_t size, int rounds, size_t slice = 0,
                        size_t slices = 1) {
  std::atomic<int> errors{0};
  std::atomic<int> mismatches{0};
  Status first_error;
  std::mutex error_mu;
  const double seconds = RunTogether(slabs.size(), [&](int t) {
    ThreadSlab& s = slabs[t];
    const size_t begin = s.keys.size() * slice / slices;
    const size_t end = s.keys.size() * (slice + 1) / slices;
    for (int r = 0; r < rounds; ++r) {
      for (size_t i = begin; i < end; ++i) {
        std::span<std::byte> into(&s.landing[i * size], size);
        const auto begin = SteadyClock::now();
        Result<uint64_t> got = client.GetInto(s.keys[i], into);
        s.get_us.push_back(
            duration<double, std::micro>(SteadyClock::now() - begin).count());
        if (!got.ok()) {
          std::lock_guard<std::mutex> lock(error_mu);
          if (errors++ == 0) first_error = got.status();
        } else if (r == 0 &&
                   std::memcmp(into.data(), &s.source[i * size], size) != 0) {
          ++mismatches;
        }
      }
    }
  });
  if (errors > 0) return first_error;
  if (mismatches > 0) {
    return Status(ErrorReason::kInternal,
                  std::to_string(mismatches.load()) +
                      " reads returned different bytes than were put");
  }
  return seconds;
}

// The same bytes copied by the same threads: the ceiling of a local copy.
double MemcpyGbps(std::vector<ThreadSlab>& slabs, uint64_t size, int rounds) {
  const double seconds = RunTogether(slabs.size(), [&](int t) {
    ThreadSlab& s = slabs[t];
    for (int r = 0; r < rounds; ++r) {
      for (size_t i = 0; i < s.keys.size(); ++i) {
        std::memcpy(&s.landing[i * size], &s.source[i * size], size);
      }
    }
  });
  uint64_t bytes = 0;
  for (const ThreadSlab& s : slabs) bytes += s.keys.size() * size * rounds;
  return Gbps(bytes, seconds);
}

nlohmann::ordered_json DatapathRow(const char* tier, uint64_t size, int threads,
                                   uint64_t put_bytes, double put_s,
                                   uint64_t get_bytes, double get_s,
                                   const std::vector<ThreadSlab>& slabs,
                                   double memcpy_gbps) {
  std::vector<double> all;
  for (const ThreadSlab& s : slabs) {
    all.insert(all.end(), s.get_us.begin(), s.get_us.end());
  }
  nlohmann::ordered_json row;
  row["scenario"] = "datapath";
  row["tier"] = tier;
  row["object_bytes"] = size;
  row["threads"] = threads;
  row["put_gbps"] = Gbps(put_bytes, put_s);
  row["get_gbps"] = Gbps(get_bytes, get_s);
  row["p50_us"] = Percentile(all, 0.50);
  row["p99_us"] = Percentile(all, 0.99);
  row["memcpy_gbps"] = memcpy_gbps;
  row["gets"] = all.size();
  return row;
}

// Objects per thread for a run moving about `budget` bytes in all.
size_t PerThread(uint64_t budget, uint64_t size, int threads) {
  return std::max<size_t>(2, budget / size / threads);
}

// What the check lines need from the memory-tier rows.
struct MemoryFigures {
  double best_4mib_ratio = 0;  // get_gbps / memcpy_gbps, 4 MiB
  std::map<uint64_t, double> one_thread_get_p50_us;  // by object size
};

Status RunMemoryRows(Connection& c, const CommonOptions& common,
                     ResultSink& sink, MemoryFigures& figures) {
  // Each run stays well inside DRAM, so nothing is evicted meanwhile.
  const uint64_t budget = std::min<uint64_t>(
      c.dram_bytes / 4, static_cast<uint64_t>(256 * kMiB * common.scale));
  for (uint64_t size : kObjectSizes) {
    for (int threads : kThreadCounts) {
      const size_t count = PerThread(budget, size, threads);
      std::vector<ThreadSlab> slabs =
          MakeSlabs(*c.client, c.prefix + "/mem", size, threads, count);
      const uint64_t bytes = uint64_t{count} * threads * size;
      const int rounds = std::clamp<int>(512 / (count * threads), 1, 8);
      Result<double> put_s = PutSlabs(*c.client, slabs, size);
      if (!put_s.ok()) return put_s.status();
      Result<double> get_s = GetSlabs(*c.client, slabs, size, rounds);
      if (!get_s.ok()) return get_s.status();
      const double memcpy_gbps = MemcpyGbps(slabs, size, rounds);
      nlohmann::ordered_json row =
          DatapathRow("memory", size, threads, bytes, *put_s, bytes * rounds,
                      *get_s, slabs, memcpy_gbps);
      if (size == 4 * kMiB && memcpy_gbps > 0) {
        figures.best_4mib_ratio =
            std::max(figures.best_4mib_ratio,
                     row["get_gbps"].get<double>() / memcpy_gbps);
      }
      if (threads == 1) {
        figures.one_thread_get_p50_us[size] = row["p50_us"].get<double>();
      }
      sink.Emit(row);
      ReleaseSlabs(*c.client, slabs);
    }
  }
  return Status();
}

// Keys of `slabs` that have a local_disk copy and no memory copy. Asking
// grants a lease and counts one access, like the read that follows.
size_t KeepSsdOnly(Connection& c, std::vector<ThreadSlab>& slabs,
                   uint64_t size) {
  size_t kept = 0;
  for (ThreadSlab& s : slabs) {
    std::vector<Result<ObjectReplicas>> lists = c.api->GetReplicaList(s.keys);
    std::vector<std::string> keys;
    std::vector<std::byte> source;
    for (size_t i = 0; i < s.keys.size(); ++i) {
      if (!lists[i].ok() || lists[i]->replicas.empty() ||
          lists[i]->replicas.front().tier != Tier::kLocalDisk) {
        continue;
      }
      keys.push_back(s.keys[i]);
      source.insert(source.end(), s.source.begin() + i * size,
                    s.source.begin() + (i + 1) * size);
    }
    kept += keys.size();
    s.keys = std::move(keys);
    std::copy(source.begin(), source.end(), s.source.begin());
  }
  return kept;
}

// Pushes earlier puts out of DRAM: writes 1 MiB fillers worth 1.25 x DRAM.
Status FillDram(Connection& c, ResultSink& sink) {
  std::vector<ThreadSlab> filler = MakeSlabs(
      *c.client, c.prefix + "/fill", kMiB, 1, c.dram_bytes * 5 / 4 / kMiB);
  sink.Progress("pushing the SSD-tier objects out of DRAM (" +
                std::to_string(filler[0].keys.size()) + " MiB of filler)");
  Result<double> put = PutSlabs(*c.client, filler, kMiB);
  for (ThreadSlab& s : filler) {
    c.client->UnregisterBuffer(s.source).IgnoreError();
    c.client->UnregisterBuffer(s.landing).IgnoreError();
  }
  return put.status();
}

// The store's gets of a local_disk row and O_DIRECT reads of the same
// object size by the same threads in --scratch-dir (where a spawned
// store's SSD files lie), taken in turns: a slice of the store's gets,
// then as many bytes of raw reads, kSsdRowSlices times, so that both meet
// the device in the same moods (a virtual disk's speed drifts by 2x within
// a minute). The raw reads go to `aged`'s region for the row, written
// before the store's objects so that they are as old as those.
constexpr size_t kSsdRowSlices = 4;

struct SsdRowTimes {
  double get_s = 0;
  double raw_s = 0;
  uint64_t raw_bytes = 0;
  bool raw_direct = true;
};

Result<SsdRowTimes> TimeSsdRow(Client& client, std::vector<ThreadSlab>& slabs,
                               uint64_t size, int threads, RawReadFile& aged,
                               uint64_t region_at) {
  SsdRowTimes t;
  uint64_t at = region_at;
  for (size_t slice = 0; slice < kSsdRowSlices; ++slice) {
    MT_ASSIGN_OR_RETURN(const double get_s,
                        GetSlabs(client, slabs, size, 1, slice, kSsdRowSlices));
    t.get_s += get_s;
    uint64_t bytes = 0;
    for (const ThreadSlab& s : slabs) {
      const size_t n = s.keys.size();
      bytes +=
          (n * (slice + 1) / kSsdRowSlices - n * slice / kSsdRowSlices) * size;
    }
    if (bytes == 0) continue;
    MT_ASSIGN_OR_RETURN(const RawDeviceResult raw,
                        aged.Read(at, size, bytes, threads));
    at += raw.bytes;
    t.raw_s += raw.seconds;
    t.raw_bytes += raw.bytes;
    t.raw_direct = t.raw_direct && raw.direct;
  }
  return t;
}

// Adds to a local_disk row the raw figures: raw_read_gbps from the turns
// above, raw_read_fresh_gbps from a file written just before it is read;
// raw_ratio = get_gbps / raw_read_gbps.
Status AddRawReadFigures(const CommonOptions& common, const SsdRowTimes& t,
                         uint64_t size, int threads, uint64_t bytes,
                         ResultSink& sink, nlohmann::ordered_json& row) {
  MT_ASSIGN_OR_RETURN(const RawDeviceResult fresh,
                      RawDirectRead(common.scratch_dir, size, bytes, threads));
  if (!t.raw_direct) {
    sink.Progress("datapath: " + common.scratch_dir +
                  " takes no O_DIRECT; raw_read_gbps is buffered I/O");
  }
  const double raw_gbps = t.raw_s > 0 ? Gbps(t.raw_bytes, t.raw_s) : 0.0;
  row["raw_read_gbps"] = raw_gbps;
  row["raw_read_fresh_gbps"] = fresh.gbps;
  row["raw_ratio"] = Ratio(row["get_gbps"].get<double>(), raw_gbps);
  return Status();
}

Status RunSsdRows(Connection& c, const CommonOptions& common,
                  ResultSink& sink) {
  const uint64_t budget = std::min<uint64_t>(
      c.dram_bytes / 4, static_cast<uint64_t>(256 * kMiB * common.scale));
  struct Run {
    uint64_t size;
    int threads;
    std::vector<ThreadSlab> slabs;
    double put_s;
  };
  std::vector<Run> runs;
  // The raw baseline's bytes are written before the store's objects, so
  // that they are as old as those when read (RawReadFile): one region of
  // `region` bytes per row.
  const uint64_t region =
      (budget + kMaxObjectBytes - 1) / kMaxObjectBytes * kMaxObjectBytes;
  MT_ASSIGN_OR_RETURN(
      std::unique_ptr<RawReadFile> aged,
      RawReadFile::Write(common.scratch_dir, region * std::size(kObjectSizes) *
                                                 std::size(kThreadCounts)));
  for (uint64_t size : kObjectSizes) {
    for (int threads : kThreadCounts) {
      Run run{size, threads,
              MakeSlabs(*c.client, c.prefix + "/ssd", size, threads,
                        PerThread(budget, size, threads)),
              0};
      MT_ASSIGN_OR_RETURN(run.put_s, PutSlabs(*c.client, run.slabs, size));
      runs.push_back(std::move(run));
    }
  }
  MT_RETURN_IF_ERROR(FillDram(c, sink));
  // The last evictions' offloads land (and their DRAM copies go).
  std::this_thread::sleep_for(std::chrono::seconds(3));
  for (size_t r = 0; r < runs.size(); ++r) {
    Run& run = runs[r];
    uint64_t put_bytes = 0;
    for (const ThreadSlab& s : run.slabs) put_bytes += s.keys.size() * run.size;
    const size_t kept = KeepSsdOnly(c, run.slabs, run.size);
    if (kept == 0) {
      sink.Progress("no object of " + std::to_string(run.size) +
                    " bytes left DRAM; skipping its SSD-tier row");
      continue;
    }
    MT_ASSIGN_OR_RETURN(const SsdRowTimes times,
                        TimeSsdRow(*c.client, run.slabs, run.size, run.threads,
                                   *aged, r * region));
    const double memcpy_gbps = MemcpyGbps(run.slabs, run.size, 1);
    nlohmann::ordered_json row =
        DatapathRow("local_disk", run.size, run.threads, put_bytes, run.put_s,
                    kept * run.size, times.get_s, run.slabs, memcpy_gbps);
    row["ssd_only_objects"] = kept;
    MT_RETURN_IF_ERROR(AddRawReadFigures(common, times, run.size, run.threads,
                                         kept * run.size, sink, row));
    sink.Emit(row);
    ReleaseSlabs(*c.client, run.slabs);
  }
  return Status();
}

// The groups_remote scenario: the same objects put and probed through the
// remote client with and without group metadata.
constexpr uint64_t kGroupsRemoteObjectBytes = 4096;
constexpr uint32_t kGroupsRemoteGroupSize = 8;
constexpr int kGroupsRemoteRepeats = 5;

// One variant's run: its keys (and, grouped, the group of each) and what
// was timed.
struct GroupsRemoteRun {
  std::vector<std::string> keys;
  std::vector<std::string> group_ids;  // grouped only, one per group
  double put_s = 0;
  double exists_s = 0;
};

// Puts `run`'s keys `batch` per call, then probes them `batch` per call,
// timing each phase; every put must succeed and every probe find its
// object (grouped: in a complete group). The objects are removed after.
Status TimeGroupsRemoteRun(Client& client, GroupsRemoteRun& run, size_t batch,
                           bool grouped, std::span<const std::byte> value) {
  const size_t n = run.keys.size();
  std::vector<PutItem> items;
  items.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    PutOptions options;
    if (grouped) {
      const auto index = static_cast<uint32_t>(i % kGroupsRemoteGroupSize);
      options.group = GroupSpec{run.group_ids[i / kGroupsRemoteGroupSize],
                                kGroupsRemoteGroupSize, index};
    }
    items.push_back(PutItem{run.keys[i], value, std::move(options)});
  }
  Status failed;
  auto begin = SteadyClock::now();
  for (size_t i = 0; i < n && failed.ok(); i += batch) {
    const std::span<const PutItem> some(&items[i], std::min(batch, n - i));
    for (Status& put : client.PutBatch(some)) {
      if (!put.ok() && failed.ok()) failed = std::move(put);
    }
  }
  run.put_s = duration<double>(SteadyClock::now() - begin).count();
  begin = SteadyClock::now();
  for (size_t i = 0; i < n && failed.ok(); i += batch) {
    const std::span<const std::string> some(&run.keys[i],
                                            std::min(batch, n - i));
    for (Result<ExistsInfo>& info : client.ExistsBatch(some)) {
      if (!failed.ok()) break;
      if (!info.ok()) {
        failed = info.status();
      } else if (!info->exists ||
                 (grouped && (!info->group ||
                              info->group->state != GroupState::kComplete))) {
        failed = Status(ErrorReason::kInternal,
                        "a probe did not find its object in a complete group");
      }
    }
  }
  run.exists_s = duration<double>(SteadyClock::now() - begin).count();
  // Grouped objects go with their groups.
  if (grouped) {
    client.RemoveGroupBatch(run.group_ids, RemoveOptions{true});
  } else {
    client.RemoveBatch(run.keys, RemoveOptions{true});
  }
  return failed;
}

}  // namespace

int RunDatapathScenario(const CommonOptions& common,
                        const RemoteOptions& remote, ResultSink& sink) {
  // A spawned store offloads on eviction and does not promote (each
  // SSD-tier object is read once after a tier check; promotion would only
  // add background copies).
  Result<Connection> c =
      Connect(common, remote,
              {"--dram", std::to_string(kSpawnDram), "--ssd-capacity",
               std::to_string(8 * kSpawnDram), "--offload-mode", "on_evict",
               "--no-promotion-on-hit"},
              "datapath", sink);
  if (!c.ok()) {
    sink.Progress("datapath: " + c.status().ToString());
    return 1;
  }
  if (Status small = RunSmallObjectRows(*c, common, sink); !small.ok()) {
    sink.Progress("datapath (small objects): " + small.ToString());
    return 1;
  }
  MemoryFigures figures;
  Status memory = RunMemoryRows(*c, common, sink, figures);
  if (!memory.ok()) {
    sink.Progress("datapath (memory tier): " + memory.ToString());
    return 1;
  }
  Status ssd = RunSsdRows(*c, common, sink);
  if (!ssd.ok()) {
    sink.Progress("datapath (local_disk tier): " + ssd.ToString());
    return 1;
  }
  sink.Emit({{"scenario", "datapath"},
             {"check", "memory_get_4mib_vs_memcpy"},
             {"value", figures.best_4mib_ratio},
             {"target", 0.5}});
  if (!remote.shared_memory) {
    // Targets for UCX without shared memory (UCX_TLS=tcp): the TCP figures
    // of the best-known peer on the development machine.
    sink.Emit({{"scenario", "datapath"},
               {"check", "ucx_1mib_get_p50_us"},
               {"value", figures.one_thread_get_p50_us[1 * kMiB]},
               {"target", 980.0},
               {"unit", "us_at_most"}});
    sink.Emit({{"scenario", "datapath"},
               {"check", "ucx_4mib_get_p50_us"},
               {"value", figures.one_thread_get_p50_us[4 * kMiB]},
               {"target", 4000.0},
               {"unit", "us_at_most"}});
  }
  return 0;
}

namespace {

// Whether `api` reaches the master's control lane: the first call finds
// it (over gRPC), the second uses it.
bool LaneAnswers(rpc::GrpcMasterApi& api) {
  const std::vector<std::string> none = {"metadata-lane-probe"};
  for (int i = 0; i < 2; ++i) {
    for (auto& r : api.Exists(none)) r.status().IgnoreError();
  }
  return api.lane_calls() > 0;
}

}  // namespace

int RunMetadataScenario(const CommonOptions& common,
                        const RemoteOptions& remote, ResultSink& sink) {
  Result<Connection> c = Connect(common, remote, {}, "metadata", sink);
  if (!c.ok()) {
    sink.Progress("metadata: " + c.status().ToString());
    return 1;
  }
  const size_t count =
      std::max<size_t>(1024, static_cast<size_t>(20000 * common.scale));
  std::vector<ThreadSlab> slabs =
      MakeSlabs(*c->client, c->prefix + "/meta", 4096, 1, count);
  if (Result<double> put = PutSlabs(*c->client, slabs, 4096); !put.ok()) {
    sink.Progress("metadata: loading keys: " + put.status().ToString());
    return 1;
  }
  const std::vector<std::string>& keys = slabs[0].keys;
  const double seconds_per_op = std::max(0.5, 2.0 * common.scale);
  double best_batched = 0;
  double single_exists = 0, probe_64 = 0;
  // Unbatched exists from one thread, over gRPC and over the lane.
  double exists_1_thread[2] = {0, 0}, exists_p50_1_thread[2] = {0, 0};
  double ping_p50_1_thread = 0;
  // An engine's lookup of 64 blocks: one prefix probe, against the same
  // keys asked one exists call each (the batch-1 exists row). "grpc_ping"
  // is a bare gRPC call to the same server (its health service): the
  // floor of a unary round trip here.
  // Every call row runs twice: over gRPC alone ("transport":"grpc") and
  // with the hot calls on the master's control lane ("lane"; skipped with
  // --no-control-lane or when the master offers none).
  const std::vector<std::pair<const char*, size_t>> runs = {
      {"grpc_ping", 1},         {"exists", 1},
      {"exists", 32},           {"get_replica_list", 1},
      {"get_replica_list", 32}, {"prefix_probe", 64}};
  const bool lane = remote.control_lane && LaneAnswers(*c->store.lane_api);
  if (!lane) sink.Progress("metadata: no control lane; gRPC rows only");
  for (const int threads : {1, 4}) {
    for (const auto& [op, batch] : runs) {
      for (const int on_lane : {0, 1}) {
        if (on_lane == 1 && (!lane || std::string_view(op) == "grpc_ping")) {
          continue;
        }
        rpc::GrpcMasterApi* api =
            on_lane == 1 ? c->store.lane_api.get() : c->api;
        std::atomic<uint64_t> done{0}, failed{0};
        std::vector<std::vector<double>> call_us(threads);
        Status ping_error;
        std::mutex ping_mu;
        const std::string_view name(op);
        const double wall = RunTogether(threads, [&](int t) {
          std::unique_ptr<GrpcPing> ping;
          // The first master of a list (a cluster's): any of them answers.
          if (name == "grpc_ping") {
            ping = std::make_unique<GrpcPing>(
                c->store.master.substr(0, c->store.master.find(',')),
                c->store.tls.get());
          }
          const auto until =
              SteadyClock::now() + duration<double>(seconds_per_op);
          size_t at = (keys.size() / threads) * t;
          while (SteadyClock::now() < until) {
            if (at + batch > keys.size()) at = 0;
            std::span<const std::string> some(&keys[at], batch);
            at += batch;
            size_t bad = 0;
            const auto begin = SteadyClock::now();
            if (ping != nullptr) {
              Status s = ping->Ping();
              if (!s.ok()) {
                bad = 1;
                std::lock_guard<std::mutex> lock(ping_mu);
                ping_error = std::move(s);
              }
            } else if (name == "exists") {
              for (auto& r : api->Exists(some)) bad += r.ok() ? 0 : 1;
            } else if (name == "prefix_probe") {
              Result<PrefixInfo> prefix = api->ProbePrefix(some);
              bad = prefix.ok() ? batch - prefix->length : batch;
            } else {
              for (auto& r : api->GetReplicaList(some)) bad += r.ok() ? 0 : 1;
            }
            call_us[t].push_back(
                duration<double, std::micro>(SteadyClock::now() - begin)
                    .count());
            done += batch;
            failed += bad;
          }
        });
        if (failed > 0) {
          sink.Progress(std::string("metadata: ") + op + ": " +
                        std::to_string(failed.load()) + " keys failed" +
                        (ping_error.ok() ? "" : ": " + ping_error.ToString()));
          return 1;
        }
        std::vector<double> all;
        for (const std::vector<double>& us : call_us) {
          all.insert(all.end(), us.begin(), us.end());
        }
        nlohmann::ordered_json row;
        row["scenario"] = "metadata";
        row["op"] = op;
        row["transport"] = on_lane == 1 ? "lane" : "grpc";
        row["batch"] = batch;
        row["threads"] = threads;
        row["ops_per_s"] = done / wall;
        row["call_p50_us"] = Percentile(all, 0.50);
        row["call_p99_us"] = Percentile(all, 0.99);
        if (batch > 1 && name != "prefix_probe") {
          best_batched = std::max(best_batched, done / wall);
        }
        if (name == "exists" && batch == 1) {
          if (threads == 1) {
            exists_1_thread[on_lane] = done / wall;
            exists_p50_1_thread[on_lane] = row["call_p50_us"].get<double>();
          } else if (on_lane == 0) {
            single_exists = done / wall;
          }
        }
        if (name == "grpc_ping" && threads == 1) {
          ping_p50_1_thread = row["call_p50_us"].get<double>();
        }
        if (name == "prefix_probe" && threads == 4 && on_lane == 0) {
          probe_64 = done / wall;
        }
        sink.Emit(row);
      }
    }
  }
  ReleaseSlabs(*c->client, slabs);
  sink.Emit({{"scenario", "metadata"},
             {"check", "prefix_probe_64_keys_per_s_vs_single_exists"},
             {"value", single_exists > 0 ? probe_64 / single_exists : 0.0}});
  sink.Emit({{"scenario", "metadata"},
             {"check", "batched_keys_per_s"},
             {"value", best_batched},
             {"target", 100000}});
  // Unbatched calls from one thread, and how far a unary call is from
  // gRPC's own floor in the same run.
  // The lane's figure when it ran, else gRPC's.
  const int best = lane ? 1 : 0;
  sink.Emit({{"scenario", "metadata"},
             {"check", "unbatched_exists_per_s_1_thread"},
             {"value", exists_1_thread[best]},
             {"transport", best == 1 ? "lane" : "grpc"},
             {"grpc_value", exists_1_thread[0]},
             {"target", 18000}});
  sink.Emit({{"scenario", "metadata"},
             {"check", "exists_p50_vs_grpc_ping_p50_1_thread"},
             {"value", ping_p50_1_thread > 0
                           ? exists_p50_1_thread[best] / ping_p50_1_thread
                           : 0.0},
             {"transport", best == 1 ? "lane" : "grpc"},
             {"exists_p50_us", exists_p50_1_thread[best]},
             {"grpc_exists_p50_us", exists_p50_1_thread[0]},
             {"grpc_ping_p50_us", ping_p50_1_thread}});
  return 0;
}

int RunGroupsRemoteScenario(const CommonOptions& common,
                            const RemoteOptions& remote, ResultSink& sink) {
  Result<Connection> c = Connect(common, remote, {}, "groups_remote", sink);
  if (!c.ok()) {
    sink.Progress("groups_remote: " + c.status().ToString());
    return 1;
  }
  const size_t groups =
      std::max<size_t>(64, static_cast<size_t>(1000 * common.scale));
  const size_t objects = groups * kGroupsRemoteGroupSize;
  std::vector<std::byte> value(kGroupsRemoteObjectBytes, std::byte{7});
  c->client->RegisterBuffer(value).IgnoreError();
  for (const size_t batch : {size_t{1}, size_t{kGroupsRemoteGroupSize}}) {
    sink.Progress("groups_remote: " + std::to_string(objects) + " objects of " +
                  std::to_string(kGroupsRemoteObjectBytes) + " bytes, batch " +
                  std::to_string(batch) + ", " +
                  std::to_string(kGroupsRemoteRepeats) + " runs per variant");
    double best_put[2] = {0, 0};
    double best_exists[2] = {0, 0};
    for (int repeat = 0; repeat < kGroupsRemoteRepeats; ++repeat) {
      // The variants take turns going first, so neither always runs on the
      // store the other just emptied.
      for (int turn = 0; turn < 2; ++turn) {
        const int grouped = (repeat + turn) % 2;
        const std::string prefix = c->prefix + "/" + std::to_string(batch) +
                                   "/" + std::to_string(repeat) +
                                   (grouped != 0 ? "/g/" : "/u/");
        GroupsRemoteRun run;
        for (size_t g = 0; g < groups; ++g) {
          const std::string id = HashedName(prefix, g);
          for (uint32_t i = 0; i < kGroupsRemoteGroupSize; ++i) {
            run.keys.push_back(id + "/" + std::to_string(i));
          }
          if (grouped != 0) run.group_ids.push_back(id);
        }
        Status timed =
            TimeGroupsRemoteRun(*c->client, run, batch, grouped != 0, value);
        if (!timed.ok()) {
          sink.Progress(std::string("groups_remote: ") +
                        (grouped != 0 ? "grouped" : "ungrouped") +
                        " run: " + timed.ToString());
          return 1;
        }
        best_put[grouped] = std::max(best_put[grouped], objects / run.put_s);
        best_exists[grouped] =
            std::max(best_exists[grouped], objects / run.exists_s);
      }
    }
    for (const char* op : {"put", "exists"}) {
      const double* best = op[0] == 'p' ? best_put : best_exists;
      nlohmann::ordered_json row;
      row["scenario"] = "groups_remote";
      row["op"] = op;
      row["objects"] = objects;
      row["object_bytes"] = kGroupsRemoteObjectBytes;
      row["group_size"] = kGroupsRemoteGroupSize;
      row["batch"] = batch;
      row["grouped_ops_per_s"] = best[1];
      row["ungrouped_ops_per_s"] = best[0];
      row["ratio"] = Ratio(best[1], best[0]);
      sink.Emit(row);
    }
  }
  c->client->UnregisterBuffer(value).IgnoreError();
  return 0;
}

}  // namespace mooncake_tier::bench
