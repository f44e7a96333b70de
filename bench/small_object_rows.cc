#include "bench/small_object_rows.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "mooncake_tier/remote_client.h"

namespace mooncake_tier::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::duration;

// Small objects, one client thread: put latency, and get latency of keys
// read again and again (hot) or once each (cold), with the location cache
// on and off in turns (the second client has it off).
constexpr uint64_t kSmallObjectSizes[] = {4 << 10, 64 << 10};
constexpr size_t kHotKeys = 64;

struct SmallRun {
  std::vector<double> put_us;
  std::vector<double> get_us;
  double get_s = 0;
};

// Puts `count` objects of `size` one per call under `prefix`, then reads
// them: cold, each once; hot, the first kHotKeys round-robin `hot_reads`
// times after one untimed round. Checks every value read.
Result<SmallRun> TimeSmallRun(Client& client, const std::string& prefix,
                              uint64_t size, size_t count, bool hot,
                              size_t hot_reads) {
  SmallRun run;
  std::vector<std::string> keys;
  std::vector<std::byte> source(count * size), landing(size);
  std::mt19937_64 rng(size + count);
  for (size_t i = 0; i < source.size(); i += 8) {
    const uint64_t word = rng();
    std::memcpy(&source[i], &word, std::min<size_t>(8, source.size() - i));
  }
  client.RegisterBuffer(source).IgnoreError();
  client.RegisterBuffer(landing).IgnoreError();
  Status failed;
  for (size_t i = 0; i < count && failed.ok(); ++i) {
    keys.push_back(prefix + "/" + std::to_string(i));
    const auto begin = SteadyClock::now();
    failed = client.Put(keys.back(), {&source[i * size], size});
    run.put_us.push_back(
        duration<double, std::micro>(SteadyClock::now() - begin).count());
  }
  const auto read = [&](size_t i) {
    const auto begin = SteadyClock::now();
    Result<uint64_t> got = client.GetInto(keys[i], landing);
    const double us =
        duration<double, std::micro>(SteadyClock::now() - begin).count();
    if (!got.ok()) {
      failed = got.status();
    } else if (*got != size ||
               std::memcmp(landing.data(), &source[i * size], size) != 0) {
      failed = Status(ErrorReason::kInternal,
                      "a read returned other bytes than were put");
    }
    return us;
  };
  if (failed.ok() && hot) {
    const size_t n = std::min(kHotKeys, count);
    for (size_t i = 0; i < n && failed.ok(); ++i) read(i);  // warm
    const auto begin = SteadyClock::now();
    for (size_t r = 0; r < hot_reads && failed.ok(); ++r) {
      run.get_us.push_back(read(r % n));
    }
    run.get_s = duration<double>(SteadyClock::now() - begin).count();
  } else if (failed.ok()) {
    const auto begin = SteadyClock::now();
    for (size_t i = 0; i < count && failed.ok(); ++i) {
      run.get_us.push_back(read(i));
    }
    run.get_s = duration<double>(SteadyClock::now() - begin).count();
  }
  client.RemoveBatch(keys, RemoveOptions{true});
  client.UnregisterBuffer(source).IgnoreError();
  client.UnregisterBuffer(landing).IgnoreError();
  if (!failed.ok()) return failed;
  return run;
}

// The small-object rows, and a check line per target.

}  // namespace

Status RunSmallObjectRows(Connection& c, const CommonOptions& common,
                          ResultSink& sink) {
  // Two more clients, with the cache on and off, whatever the main
  // client's flags say.
  RemoteClientOptions options = BenchClientOptions(c.remote, c.store.master);
  options.location_cache = true;
  MT_ASSIGN_OR_RETURN(std::unique_ptr<Client> cached, ConnectRemote(options));
  options.location_cache = false;
  MT_ASSIGN_OR_RETURN(std::unique_ptr<Client> uncached, ConnectRemote(options));
  const size_t count =
      std::max<size_t>(kHotKeys, static_cast<size_t>(2000 * common.scale));
  const size_t hot_reads =
      std::max<size_t>(1000, static_cast<size_t>(20000 * common.scale));
  std::map<std::string, double> p50;  // "<size>/<pattern>/<cache>" and puts
  int run_id = 0;
  for (uint64_t size : kSmallObjectSizes) {
    for (const bool hot : {true, false}) {
      // Cache on, then off, with the same keys' shapes, back to back.
      for (const bool cache : {true, false}) {
        Client& client = cache ? *cached : *uncached;
        MT_ASSIGN_OR_RETURN(
            SmallRun run,
            TimeSmallRun(client,
                         c.prefix + "/small/" + std::to_string(run_id++), size,
                         count, hot, hot_reads));
        nlohmann::ordered_json row;
        row["scenario"] = "datapath";
        row["object_bytes"] = size;
        row["pattern"] = hot ? "hot" : "cold";
        row["cache"] = cache;
        row["get_p50_us"] = Percentile(run.get_us, 0.50);
        row["get_p99_us"] = Percentile(run.get_us, 0.99);
        row["put_p50_us"] = Percentile(run.put_us, 0.50);
        row["put_p99_us"] = Percentile(run.put_us, 0.99);
        row["gets_per_s"] =
            run.get_s > 0 ? static_cast<double>(run.get_us.size()) / run.get_s
                          : 0.0;
        row["gets"] = run.get_us.size();
        row["threads"] = 1;
        sink.Emit(row);
        const std::string name = std::to_string(size) + "/" +
                                 (hot ? "hot" : "cold") + "/" +
                                 (cache ? "on" : "off");
        p50[name] = row["get_p50_us"].get<double>();
        p50["put/" + std::to_string(size)] =
            std::max(p50["put/" + std::to_string(size)],
                     row["put_p50_us"].get<double>());
      }
    }
  }
  const auto check = [&](const char* name, double value, double target) {
    sink.Emit({{"scenario", "datapath"},
               {"check", name},
               {"value", value},
               {"target", target},
               {"unit", "us_at_most"}});
  };
  check("hot_64kib_get_p50_us", p50["65536/hot/on"], 20);
  check("hot_4kib_get_p50_us", p50["4096/hot/on"], 10);
  check("cold_64kib_get_p50_us", p50["65536/cold/on"], 80);
  check("put_64kib_p50_us", p50["put/65536"], 150);
  return Status();
}

}  // namespace mooncake_tier::bench
