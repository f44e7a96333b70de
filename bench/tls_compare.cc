#include "bench/tls_compare.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/remote_store.h"

namespace mooncake_tier::bench {
namespace {

using Json = nlohmann::ordered_json;

// The fields that name a row of `scenario` (what is measured, not how
// fast), and the figure compared with whether higher is better.
struct Comparison {
  std::vector<const char*> key;
  const char* figure;
};

Comparison ComparisonOf(const std::string& scenario) {
  if (scenario == "metadata") {
    return {{"op", "transport", "batch", "threads"}, "ops_per_s"};
  }
  return {{"tier", "object_bytes", "threads"}, "p50_us"};
}

// A fresh CA with a master and a client certificate in `dir`.
bool MakeCa(const std::string& dir, ResultSink& sink) {
  const std::string command = "bash '" MOONCAKE_TIER_SOURCE_DIR
                              "/scripts/make-test-ca.sh' '" +
                              dir + "' --force >/dev/null";
  if (std::system(command.c_str()) != 0) {
    sink.Progress("tls: scripts/make-test-ca.sh " + dir + " failed");
    return false;
  }
  return true;
}

// Unbatched exists from one thread against a plaintext and a TLS store that
// run at the same time, in alternating slices: whatever else the machine
// does in a slice falls on one side only briefly, and on both sides evenly
// over the run, so the ratio is steadier than that of two runs minutes
// apart. Emits one row; false (with progress) when a store did not start
// or a call failed.
bool InterleavedExists(const CommonOptions& common, const RemoteOptions& plain,
                       const RemoteOptions& secure, ResultSink& sink) {
  sink.Progress("tls: interleaved exists, both stores at once");
  Result<RemoteStore> stores[2] = {OpenRemoteStore(common, plain, {}, sink),
                                   OpenRemoteStore(common, secure, {}, sink)};
  for (const Result<RemoteStore>& store : stores) {
    if (!store.ok()) {
      sink.Progress("tls: interleaved exists: " + store.status().ToString());
      return false;
    }
  }
  const std::string key =
      "tls-interleaved-" + std::to_string(::getpid()) + "/k";
  const std::vector<std::byte> value(4096, std::byte{0x3C});
  for (Result<RemoteStore>& store : stores) {
    if (Status put = store->client->Put(key, value); !put.ok()) {
      sink.Progress("tls: interleaved exists: put: " + put.ToString());
      return false;
    }
  }
  // Only the two stubs stay: a client's UCX worker threads would compete
  // for the cores with the stores they are measuring.
  for (Result<RemoteStore>& store : stores) {
    store->client.reset();
    store->lane_api.reset();
  }
  using Clock = std::chrono::steady_clock;
  const auto slice = std::chrono::milliseconds(200);
  const int slices = std::max(4, static_cast<int>(40 * common.scale));
  uint64_t calls[2] = {0, 0};
  double busy_s[2] = {0, 0};
  std::vector<double> slice_ratio;
  for (int i = 0; i < slices; ++i) {
    double rate[2] = {0, 0};
    // ABBA order: neither side always goes first.
    for (int step = 0; step < 2; ++step) {
      const int side = (i % 2 == 0) ? step : 1 - step;
      rpc::GrpcMasterApi& api = *stores[side]->api;
      uint64_t n = 0;
      const auto begin = Clock::now();
      const auto until = begin + slice;
      while (Clock::now() < until) {
        for (const Result<ExistsInfo>& r : api.Exists({&key, 1})) {
          if (!r.ok()) {
            sink.Progress("tls: interleaved exists: " + r.status().ToString());
            return false;
          }
        }
        ++n;
      }
      const double took =
          std::chrono::duration<double>(Clock::now() - begin).count();
      calls[side] += n;
      busy_s[side] += took;
      rate[side] = n / took;
    }
    slice_ratio.push_back(rate[0] > 0 ? rate[1] / rate[0] : 0.0);
  }
  std::sort(slice_ratio.begin(), slice_ratio.end());
  Json row;
  row["scenario"] = "metadata";
  row["check"] = "tls_vs_plain_interleaved";
  row["op"] = "exists";
  row["transport"] = "grpc";
  row["batch"] = 1;
  row["threads"] = 1;
  row["figure"] = "ops_per_s";
  row["plain"] = calls[0] / busy_s[0];
  row["tls"] = calls[1] / busy_s[1];
  row["value"] = (calls[1] / busy_s[1]) / (calls[0] / busy_s[0]);
  row["slice_ratio_p10"] = slice_ratio[slice_ratio.size() / 10];
  row["slice_ratio_p50"] = slice_ratio[slice_ratio.size() / 2];
  row["slice_ratio_p90"] = slice_ratio[slice_ratio.size() * 9 / 10];
  row["slices"] = slices;
  row["target"] = 0.8;
  sink.Emit(row);
  return true;
}

}  // namespace

int RunWithAndWithoutTls(const char* scenario, const RemoteScenario& run,
                         const CommonOptions& common,
                         const RemoteOptions& remote, ResultSink& sink) {
  if (!remote.spawn) {
    sink.Progress(std::string(scenario) +
                  ": --tls compares two stores it starts: give --spawn");
    return 2;
  }
  const std::string dir = common.scratch_dir + "/mooncake-tier-bench-tls-" +
                          std::to_string(::getpid());
  if (!MakeCa(dir, sink)) return 1;
  RemoteOptions secure = remote;
  secure.tls_ca = dir + "/ca.pem";
  secure.tls_cert = dir + "/client.pem";
  secure.tls_key = dir + "/client.key";
  secure.tls_spawn_flags = {"--tls-cert", dir + "/master.pem",
                            "--tls-key",  dir + "/master.key",
                            "--tls-ca",   secure.tls_ca};
  // [begin, end) of the rows each run emitted, by round and side.
  struct Run {
    size_t plain_begin, plain_end, tls_end;
  };
  std::vector<Run> runs;
  const int rounds = std::max(1, remote.tls_rounds);
  int code = 0;
  for (int round = 0; round < rounds && code == 0; ++round) {
    Run r{sink.emitted().size(), 0, 0};
    sink.SetTag("round", round + 1);
    for (const bool tls : {false, true}) {
      sink.Progress(std::string(scenario) + ": round " +
                    std::to_string(round + 1) + "/" + std::to_string(rounds) +
                    (tls ? ", over mutual TLS" : ", in plaintext"));
      sink.SetTag("tls", tls);
      const int rc = run(common, tls ? secure : remote, sink);
      if (rc != 0 && code == 0) code = rc;
      (tls ? r.tls_end : r.plain_end) = sink.emitted().size();
    }
    runs.push_back(r);
  }
  sink.SetTag("tls", nullptr);
  sink.SetTag("round", nullptr);
  if (code == 0 && std::string(scenario) == "metadata" &&
      !InterleavedExists(common, remote, secure, sink)) {
    code = 1;
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  if (code != 0) return code;

  // Pair each TLS row with the plaintext row of the same key in its round;
  // gather the pairs by key, in the order the first round printed them.
  const Comparison comparison = ComparisonOf(scenario);
  const std::vector<Json> rows = sink.emitted();
  auto key_of = [&comparison](const Json& row) {
    Json key = Json::object();
    for (const char* field : comparison.key) {
      if (row.contains(field)) key[field] = row[field];
    }
    return key;
  };
  struct Pairs {
    Json key;
    std::vector<double> plain, tls, ratio;
  };
  std::vector<Pairs> by_key;
  for (const Run& r : runs) {
    for (size_t t = r.plain_end; t < r.tls_end; ++t) {
      if (!rows[t].contains(comparison.figure)) continue;
      const Json key = key_of(rows[t]);
      for (size_t p = r.plain_begin; p < r.plain_end; ++p) {
        if (!rows[p].contains(comparison.figure) || key_of(rows[p]) != key) {
          continue;
        }
        const double plain = rows[p][comparison.figure].get<double>();
        const double over_tls = rows[t][comparison.figure].get<double>();
        auto it = std::find_if(by_key.begin(), by_key.end(),
                               [&key](const Pairs& e) { return e.key == key; });
        if (it == by_key.end()) {
          by_key.emplace_back();
          by_key.back().key = key;
          it = by_key.end() - 1;
        }
        it->plain.push_back(plain);
        it->tls.push_back(over_tls);
        it->ratio.push_back(plain > 0 ? over_tls / plain : 0.0);
        break;
      }
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  for (const Pairs& e : by_key) {
    Json check;
    check["scenario"] = scenario;
    check["check"] = "tls_vs_plain";
    for (const auto& [field, value] : e.key.items()) check[field] = value;
    check["figure"] = comparison.figure;
    check["plain"] = median(e.plain);
    check["tls"] = median(e.tls);
    check["value"] = median(e.ratio);
    check["min"] = *std::min_element(e.ratio.begin(), e.ratio.end());
    check["max"] = *std::max_element(e.ratio.begin(), e.ratio.end());
    check["rounds"] = e.ratio.size();
    sink.Emit(check);
  }
  return 0;
}

}  // namespace mooncake_tier::bench
