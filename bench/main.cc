// mooncake-tier-bench: one subcommand per benchmark scenario. Figures go to
// stdout (one JSON object per line with --json), progress to stderr.
//
// Exit codes: 0 success, 1 a scenario failed, 2 usage error.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "bench/admin_scenario.h"
#include "bench/alloc_scenario.h"
#include "bench/core_scenario.h"
#include "bench/failover_scenario.h"
#include "bench/groups_scenario.h"
#include "bench/promotion_scenario.h"
#include "bench/remote_scenarios.h"
#include "bench/result_sink.h"
#include "bench/spawned_store.h"
#include "bench/sustained_scenario.h"
#include "bench/tls_compare.h"
#include "bench/trace_scenario.h"
#ifdef MOONCAKE_TIER_BENCH_HAVE_SSD
#include "bench/ssd_scenario.h"
#endif
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace {

using mooncake_tier::bench::CommonOptions;
using mooncake_tier::bench::ResultSink;

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

struct Flags {
  CommonOptions common;
  bool json = false;
  mooncake_tier::bench::CoreOptions core;  // objects 0: default x scale
  mooncake_tier::bench::RemoteOptions remote;
  mooncake_tier::bench::GroupsOptions groups;
  mooncake_tier::bench::SustainedOptions sustained;
  mooncake_tier::bench::TraceOptions trace;
  mooncake_tier::bench::FailoverOptions failover;
};

struct Scenarios {
  CLI::App* core = nullptr;
  CLI::App* alloc = nullptr;
  CLI::App* ssd = nullptr;
  CLI::App* groups = nullptr;
  CLI::App* promotion = nullptr;
  CLI::App* datapath = nullptr;
  CLI::App* metadata = nullptr;
  CLI::App* groups_remote = nullptr;
  CLI::App* admin = nullptr;
  CLI::App* sustained = nullptr;
  CLI::App* trace = nullptr;
  CLI::App* failover = nullptr;
};

// Options of the scenarios that run against a store in other processes.
void AddRemoteOptions(CLI::App& scenario, Flags& flags) {
  CLI::Option* master = scenario.add_option(
      "--master", flags.remote.master, "master of a running store, host:port");
  CLI::Option* spawn = scenario.add_flag(
      "--spawn", flags.remote.spawn,
      "start `mooncake-tierd standalone` on a free port for the run");
  master->excludes(spawn);
  scenario.add_flag(
      "!--no-location-cache", flags.remote.location_cache,
      "read every object through the master (the client's location cache "
      "off; datapath compares both in its small-object rows either way)");
  scenario.add_flag(
      "!--no-control-lane", flags.remote.control_lane,
      "the client's hot metadata calls over gRPC only, not the master's UCX "
      "control lane (metadata measures both either way)");
  scenario.add_flag(
      "!--no-shared-memory", flags.remote.shared_memory,
      "every transfer over UCX: the client maps no node's segment and a "
      "--spawn store offers none (with UCX_TLS=tcp in the environment: the "
      "path between hosts)");
  scenario
      .add_option("--tierd", flags.remote.tierd_path,
                  "the mooncake-tierd binary --spawn starts")
      ->capture_default_str();
  // A --master store that serves TLS: the same flags as mooncake-tierctl
  // kv (not its environment variables: they would turn a --spawn run into
  // an error).
  CLI::Option* ca = scenario.add_option(
      "--tls-ca", flags.remote.tls_ca,
      "with --master: CA bundle the master's certificate must chain to (TLS "
      "on)");
  scenario
      .add_option("--tls-cert", flags.remote.tls_cert,
                  "with --tls-ca: this client's certificate chain (a client "
                  "role), when the master asks for one")
      ->needs(ca);
  scenario
      .add_option("--tls-key", flags.remote.tls_key,
                  "with --tls-cert: its private key")
      ->needs(ca);
  scenario.callback([&scenario, &flags] {
    if (flags.remote.spawn && !flags.remote.tls_ca.empty()) {
      throw CLI::ValidationError(
          scenario.get_name(),
          "--tls-ca connects to a --master store; with --spawn, --tls runs "
          "the scenario on a TLS store of its own");
    }
    if (flags.remote.master.empty() && !flags.remote.spawn) {
      throw CLI::ValidationError(scenario.get_name(),
                                 "give --master HOST:PORT or --spawn");
    }
  });
}

// --tls on the scenarios that compare plaintext and TLS stores.
void AddTlsCompareOption(CLI::App& scenario, Flags& flags) {
  scenario.add_flag(
      "--tls", flags.remote.tls_compare,
      "run on a spawned plaintext store and on one serving mutual TLS, "
      "in --tls-rounds pairs, and print TLS/plaintext ratios "
      "(bench/tls_compare.h; needs --spawn)");
  scenario
      .add_option("--tls-rounds", flags.remote.tls_rounds,
                  "with --tls: plaintext/TLS pairs of runs; the ratio is "
                  "their median")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
}

// Turns one of `names` into its enum value (CLI11 reads an enum as its
// number); any other text, numbers included, is an error listing the names.
template <typename Enum>
CLI::Validator NamedEnum(std::vector<std::pair<std::string, Enum>> names) {
  std::string list;
  for (const auto& entry : names) {
    list += (list.empty() ? "" : "|") + entry.first;
  }
  return CLI::Validator(
      [names, list](std::string& value) -> std::string {
        for (const auto& [name, e] : names) {
          if (value == name) {
            value = std::to_string(static_cast<int>(e));
            return "";
          }
        }
        return "must be one of " + list + ", not '" + value + "'";
      },
      list, "named enum");
}

// Options of the groups scenario: which parts of the bookkeeping phase run,
// and whether the pressure phase runs (bench/README.md, section groups).
void AddGroupsOptions(CLI::App& scenario,
                      mooncake_tier::bench::GroupsOptions& groups) {
  using mooncake_tier::bench::GroupsOp;
  using mooncake_tier::bench::GroupsVariant;
  using mooncake_tier::bench::kGroupsGroupSize;
  scenario
      .add_option("--variant", groups.variant,
                  "bookkeeping: objects with group metadata, without, or both "
                  "(default both)")
      ->transform(
          NamedEnum<GroupsVariant>({{"grouped", GroupsVariant::kGrouped},
                                    {"ungrouped", GroupsVariant::kUngrouped},
                                    {"both", GroupsVariant::kBoth}}));
  scenario
      .add_option("--op", groups.op,
                  "bookkeeping: ops to report; exists still runs the puts "
                  "(default all)")
      ->transform(NamedEnum<GroupsOp>({{"put", GroupsOp::kPut},
                                       {"exists", GroupsOp::kExists},
                                       {"all", GroupsOp::kAll}}));
  scenario
      .add_option("--batch", groups.batch,
                  "bookkeeping: keys per call (default: 1, then 8)")
      ->check(CLI::Range(size_t{1}, mooncake_tier::bench::kMaxGroupsBatch));
  scenario
      .add_option("--repeats", groups.repeats,
                  "bookkeeping: runs per variant and batch, the best counts")
      ->check(CLI::Range(1, mooncake_tier::bench::kMaxGroupsRepeats))
      ->capture_default_str();
  const CLI::Validator whole_groups(
      [](std::string& value) -> std::string {
        uint64_t n = 0;
        if (!CLI::detail::lexical_cast(value, n) || n % kGroupsGroupSize != 0) {
          return "must be a multiple of the group size, " +
                 std::to_string(kGroupsGroupSize) + ": " + value;
        }
        return "";
      },
      "MULTIPLE OF " + std::to_string(kGroupsGroupSize), "whole groups");
  scenario
      .add_option("--objects", groups.objects,
                  "bookkeeping: objects (default: 200000 x --scale, rounded "
                  "down to whole groups)")
      ->check(CLI::Range(uint64_t{kGroupsGroupSize}, uint64_t{1'000'000'000}))
      ->check(whole_groups);
  scenario.add_flag("--skip-pressure", groups.skip_pressure,
                    "skip the consistency-under-pressure phase");
}

// Options of the trace scenario (bench/trace_scenario.h). Sizes take
// units: 16KiB, 64MiB, 1GiB or plain bytes.
void AddTraceOptions(CLI::App& scenario,
                     mooncake_tier::bench::TraceOptions& trace) {
  scenario
      .add_option("--trace", trace.trace_path,
                  "request trace, JSON Lines with timestamp (ms) and "
                  "hash_ids (Mooncake FAST'25 format)")
      ->required();
  scenario.add_option("--members", trace.members, "objects per block (group)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  scenario.add_option("--member-bytes", trace.member_bytes, "bytes per member")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30))
      ->capture_default_str();
  scenario
      .add_option("--speed", trace.speed,
                  "replay at this multiple of the trace's timestamps; 0: as "
                  "fast as possible")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  scenario.add_option("--requests", trace.requests,
                      "replay only the first N requests (default: all)");
  scenario
      .add_option("--threads", trace.threads,
                  "client threads; requests are dealt round-robin")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  scenario
      .add_option("--dram", trace.dram_bytes,
                  "DRAM of the spawned store and of the simulated caches")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50))
      ->capture_default_str();
  scenario
      .add_option("--ssd-capacity", trace.ssd_bytes,
                  "SSD of the spawned store and of the simulated caches")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  scenario
      .add_option("--ssd-eviction-policies", trace.ssd_eviction_policies,
                  "with --spawn: one set of runs per SSD eviction policy")
      ->check(CLI::IsMember({"clock", "lru"}))
      ->delimiter(',')
      ->capture_default_str();
  scenario
      .add_option("--promotion-policies", trace.promotion_policies,
                  "with --spawn: the promotion settings to run")
      ->check(CLI::IsMember({"off", "threshold", "tinylfu"}))
      ->delimiter(',')
      ->capture_default_str();
  scenario.add_option("--store-flags", trace.store_flags,
                      "with --spawn: more flags for each store, separated "
                      "by spaces");
}

// Options of the failover scenario (bench/failover_scenario.h). --spawn is
// checked by the scenario, which says why it needs it.
void AddFailoverOptions(CLI::App& scenario,
                        mooncake_tier::bench::FailoverOptions& failover) {
  scenario.add_flag("--spawn", failover.spawn,
                    "start etcd, three masters and two nodes for the run "
                    "(required)");
  scenario
      .add_option("--tierd", failover.tierd_path,
                  "the mooncake-tierd binary --spawn starts")
      ->capture_default_str();
  scenario.add_option("--rounds", failover.rounds, "kill -9 rounds")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  scenario
      .add_option("--threads", failover.threads, "client threads of the load")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  scenario.add_option("--dram", failover.dram_bytes, "--dram of each node")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(uint64_t{16} << 20, uint64_t{1} << 40))
      ->capture_default_str();
  scenario
      .add_option("--ssd-capacity", failover.ssd_bytes,
                  "--ssd-capacity of each node (0: no SSD tier)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 44))
      ->capture_default_str();
  scenario
      .add_option("--seconds-per-phase", failover.seconds_per_phase,
                  "length of each HA-on and HA-off throughput phase")
      ->check(CLI::Range(0.5, 3600.0))
      ->capture_default_str();
  scenario
      .add_option("--pairs", failover.pairs,
                  "HA-on / HA-off throughput pairs (0: skip)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
}

Scenarios DefineCli(CLI::App& app, Flags& flags) {
  app.require_subcommand(1);
  // Common flags may also follow the scenario name ("core --json").
  app.fallthrough();
  app.add_flag("--json", flags.json,
               "print one JSON object per result line on stdout");
  app.add_option("--scratch-dir", flags.common.scratch_dir,
                 "directory where scenarios may create files")
      ->capture_default_str();
  app.add_option("--scale", flags.common.scale,
                 "multiplies the work of every scenario")
      ->check(CLI::Range(1e-6, 1e6))
      ->capture_default_str();

  Scenarios s;
  s.core = app.add_subcommand(
      "core", "metadata engine ops/s: put, get_replica_list, exists");
  s.core
      ->add_option("--objects", flags.core.objects,
                   "objects to load (default: 1000000 x --scale)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1'000'000'000}));
  s.core
      ->add_option("--op", flags.core.op,
                   "only this op (a read op first loads the keys, unreported)")
      ->check(CLI::IsMember(mooncake_tier::bench::CoreOpNames()));
  s.core->add_option("--threads", flags.core.threads, "only this thread count")
      ->check(CLI::IsMember({1, 2}));
  s.alloc = app.add_subcommand(
      "alloc", "DRAM space allocator ops/s and utilisation vs first fit");
#ifdef MOONCAKE_TIER_BENCH_HAVE_SSD
  s.ssd = app.add_subcommand("ssd", "node SSD store throughput");
#else
  s.ssd = app.add_subcommand("ssd", "node SSD store (not built in)");
#endif
  s.groups = app.add_subcommand(
      "groups",
      "group bookkeeping cost and partial group reads under memory pressure");
  AddGroupsOptions(*s.groups, flags.groups);
  s.promotion = app.add_subcommand(
      "promotion",
      "DRAM hit ratio and get latency per promotion policy, real SSD store");
  s.datapath = app.add_subcommand(
      "datapath",
      "client put/get GB/s and latency over UCX, DRAM and SSD tiers, vs "
      "memcpy");
  AddRemoteOptions(*s.datapath, flags);
  AddTlsCompareOption(*s.datapath, flags);
  s.metadata = app.add_subcommand(
      "metadata", "exists and get_replica_list ops/s over gRPC");
  AddRemoteOptions(*s.metadata, flags);
  AddTlsCompareOption(*s.metadata, flags);
  s.groups_remote = app.add_subcommand(
      "groups_remote",
      "put and exists ops/s with and without groups, through the remote "
      "client");
  AddRemoteOptions(*s.groups_remote, flags);
  s.sustained = app.add_subcommand(
      "sustained",
      "puts of 10x DRAM at the daemon's default flags, GB/s once DRAM is "
      "full, vs raw O_DIRECT writes to the same device");
  AddRemoteOptions(*s.sustained, flags);
  s.sustained
      ->add_option("--threads", flags.sustained.threads,
                   "client threads, each putting its own keys")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  s.trace = app.add_subcommand(
      "trace",
      "replay a request trace (Mooncake FAST'25 JSONL) against a store: hit "
      "ratio beside simulated LRU, MIN and infinite caches");
  AddTraceOptions(*s.trace, flags.trace);
  AddRemoteOptions(*s.trace, flags);
  s.admin = app.add_subcommand(
      "admin", "admin API route latency and data-path get p99 under scraping");
  s.failover = app.add_subcommand(
      "failover",
      "kill -9 of the leading master under a put/get load: unavailable ms, "
      "objects lost, and put GB/s with HA on vs off");
  AddFailoverOptions(*s.failover, flags.failover);
  return s;
}

// The engine logs through spdlog's default logger, which writes to stdout;
// send its warnings and errors to stderr instead, so that --json output
// stays parseable, and drop its info chatter (a node registering per run).
void SendEngineLogToStderr() {
  auto logger = spdlog::stderr_color_mt("engine");
  logger->set_level(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
}

int RunSsd(const Flags& flags, ResultSink& sink) {
#ifdef MOONCAKE_TIER_BENCH_HAVE_SSD
  return RunSsdScenario(flags.common, sink);
#else
  sink.Progress("ssd: this binary was built without the ssd scenario");
  return kExitFailed;
#endif
}

int RunSelected(const Scenarios& s, const Flags& flags) {
  ResultSink sink(flags.json);
  if (s.core->parsed()) {
    mooncake_tier::bench::CoreOptions core = flags.core;
    if (core.objects == 0) {
      core.objects = static_cast<uint64_t>(std::max<long long>(
          1, std::llround(mooncake_tier::bench::kDefaultCoreObjects *
                          flags.common.scale)));
    }
    return mooncake_tier::bench::RunCoreScenario(flags.common, sink, core);
  }
  if (s.alloc->parsed()) {
    return mooncake_tier::bench::RunAllocScenario(flags.common, sink);
  }
  if (s.ssd->parsed()) return RunSsd(flags, sink);
  if (s.groups->parsed()) {
    return mooncake_tier::bench::RunGroupsScenario(flags.common, flags.groups,
                                                   sink);
  }
  if (s.promotion->parsed()) {
    return mooncake_tier::bench::RunPromotionScenario(flags.common, sink);
  }
  if (s.datapath->parsed()) {
    if (flags.remote.tls_compare) {
      return mooncake_tier::bench::RunWithAndWithoutTls(
          "datapath", mooncake_tier::bench::RunDatapathScenario, flags.common,
          flags.remote, sink);
    }
    return mooncake_tier::bench::RunDatapathScenario(flags.common, flags.remote,
                                                     sink);
  }
  if (s.metadata->parsed()) {
    if (flags.remote.tls_compare) {
      return mooncake_tier::bench::RunWithAndWithoutTls(
          "metadata", mooncake_tier::bench::RunMetadataScenario, flags.common,
          flags.remote, sink);
    }
    return mooncake_tier::bench::RunMetadataScenario(flags.common, flags.remote,
                                                     sink);
  }
  if (s.groups_remote->parsed()) {
    return mooncake_tier::bench::RunGroupsRemoteScenario(flags.common,
                                                         flags.remote, sink);
  }
  if (s.sustained->parsed()) {
    return mooncake_tier::bench::RunSustainedScenario(
        flags.common, flags.remote, flags.sustained, sink);
  }
  if (s.trace->parsed()) {
    return mooncake_tier::bench::RunTraceScenario(flags.common, flags.trace,
                                                  flags.remote, sink);
  }
  if (s.admin->parsed()) {
    return mooncake_tier::bench::RunAdminScenario(flags.common, sink);
  }
  if (s.failover->parsed()) {
    return mooncake_tier::bench::RunFailoverScenario(flags.common,
                                                     flags.failover, sink);
  }
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mooncake-tier-bench: benchmark scenarios of mooncake-tier"};
  Flags flags;
  flags.remote.tierd_path = mooncake_tier::bench::DefaultTierdPath();
  flags.failover.tierd_path = flags.remote.tierd_path;
  const Scenarios scenarios = DefineCli(app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the error
    return code == 0 ? 0 : kExitUsage;
  }
  try {
    SendEngineLogToStderr();
    return RunSelected(scenarios, flags);
  } catch (const std::exception& e) {
    std::cerr << "mooncake-tier-bench: scenario failed: " << e.what() << '\n';
    return kExitFailed;
  }
}
