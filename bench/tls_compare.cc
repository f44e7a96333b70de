#include "bench/tls_compare.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
  const size_t first = sink.emitted().size();
  int code = 0;
  size_t split = first;
  for (const bool tls : {false, true}) {
    sink.Progress(std::string(scenario) + ": run " +
                  (tls ? "2/2 over mutual TLS" : "1/2 in plaintext"));
    sink.SetTag("tls", tls);
    const int rc = run(common, tls ? secure : remote, sink);
    if (rc != 0 && code == 0) code = rc;
    if (!tls) split = sink.emitted().size();
  }
  sink.SetTag("tls", nullptr);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  if (code != 0) return code;

  // Pair each TLS row with the plaintext row of the same key.
  const Comparison comparison = ComparisonOf(scenario);
  const std::vector<Json> rows = sink.emitted();
  for (size_t t = split; t < rows.size(); ++t) {
    const Json& secure_row = rows[t];
    if (!secure_row.contains(comparison.figure)) continue;
    for (size_t p = first; p < split; ++p) {
      const Json& plain_row = rows[p];
      if (!plain_row.contains(comparison.figure)) continue;
      bool same = true;
      for (const char* field : comparison.key) {
        same = same && plain_row.value(field, Json()) ==
                           secure_row.value(field, Json());
      }
      if (!same) continue;
      const double plain = plain_row[comparison.figure].get<double>();
      const double over_tls = secure_row[comparison.figure].get<double>();
      Json check;
      check["scenario"] = scenario;
      check["check"] = "tls_vs_plain";
      for (const char* field : comparison.key) {
        if (plain_row.contains(field)) check[field] = plain_row[field];
      }
      check["figure"] = comparison.figure;
      check["plain"] = plain;
      check["tls"] = over_tls;
      check["value"] = plain > 0 ? over_tls / plain : 0.0;
      const bool headline = std::string(scenario) == "metadata" &&
                            plain_row.value("op", "") == "exists" &&
                            plain_row.value("batch", 0) == 1;
      if (headline) check["target"] = 0.8;
      sink.Emit(check);
      break;
    }
  }
  return 0;
}

}  // namespace mooncake_tier::bench
