#include "bench/failover_scenario.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "bench/bench_util.h"
#include "bench/remote_store.h"
#include "httplib.h"
#include "mooncake_tier/remote_client.h"
#include "tests/support/subprocess.h"

namespace mooncake_tier::bench {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Json = nlohmann::ordered_json;
using testing::Subprocess;

constexpr const char* kEtcdBinary = "/usr/bin/etcd";
constexpr uint32_t kFailoverGroupSize = 4;
constexpr uint64_t kFailoverObjectBytes = 64 << 10;
constexpr uint64_t kGroupBytes = kFailoverGroupSize * kFailoverObjectBytes;
// A round: load kBeforeKill, kill, load until the first put acknowledged
// after the kill (at most kMaxUnavailable) and kAfterRecovery more.
constexpr auto kBeforeKill = seconds(2);
constexpr auto kAfterRecovery = seconds(2);
constexpr auto kMaxUnavailable = seconds(60);
constexpr auto kStartTimeout = seconds(60);
// Paced rounds keep at most kKeepShare of the two nodes' SSD, assuming a
// round lasts about kPacedRoundSeconds (a slower failover keeps a little
// more): the SSD store fits about 0.8 of its capacity in 64 KiB objects and
// evicts from 0.9 of that, and an evicted object would count as lost.
constexpr double kKeepShare = 0.5;
constexpr double kPacedRoundSeconds = 8;
// Read-back: groups per GetBatch and GetGroupBatch.
constexpr size_t kReadGroups = 4;

// Children (etcd, masters, nodes) are testing::Subprocess: output in
// <dir>/<name>.stdout and .stderr, SIGKILLed when the thread that started
// them exits (a crashed benchmark leaves no daemon behind), so all are
// started on the calling thread. Ports are picked as the e2e tests pick
// theirs: free a moment ago.
Result<int> FreePort() {
  const int port = testing::PickFreePort();
  if (port == 0) return Status(ErrorReason::kIoError, "no free loopback port");
  return port;
}

// Polls `ready` until it holds; UNAVAILABLE, quoting the child's output,
// when the child exited or kStartTimeout passed first.
Status WaitFor(Subprocess& child, const std::function<bool()>& ready,
               const std::string& what) {
  const auto until = SteadyClock::now() + kStartTimeout;
  while (!ready()) {
    const bool running = child.Running();
    if (!running || SteadyClock::now() > until) {
      return Status(ErrorReason::kUnavailable,
                    what + (running ? " not ready in time" : " exited") +
                        "; its output ends with:\n" + child.OutputTail(2000));
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  return Status::Ok();
}

// GET http://127.0.0.1:port/path as JSON; null when it does not answer 200.
nlohmann::json GetJson(int port, const std::string& path) {
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(milliseconds(300));
  http.set_read_timeout(seconds(1));
  httplib::Result res = http.Get(path);
  if (!res || res->status != 200) return nullptr;
  return nlohmann::json::parse(res->body, nullptr, false);
}

// One etcd member on loopback with etcd's default heartbeat (100 ms) and
// election timeout (1 s): what a deployment runs, and what the masters'
// default lease TTL is chosen for. No fsync: a benchmark's data.
Result<std::unique_ptr<Subprocess>> StartEtcd(const std::string& dir,
                                              std::string* endpoint) {
  MT_ASSIGN_OR_RETURN(const int client_port, FreePort());
  MT_ASSIGN_OR_RETURN(const int peer_port, FreePort());
  *endpoint = "127.0.0.1:" + std::to_string(client_port);
  const std::string client = "http://" + *endpoint;
  const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
  MT_ASSIGN_OR_RETURN(
      std::unique_ptr<Subprocess> etcd,
      Subprocess::Start(
          {.binary = kEtcdBinary,
           .args = {"--name=bench", "--data-dir=" + dir + "/etcd",
                    "--listen-client-urls=" + client,
                    "--advertise-client-urls=" + client,
                    "--listen-peer-urls=" + peer,
                    "--initial-advertise-peer-urls=" + peer,
                    "--initial-cluster=bench=" + peer, "--unsafe-no-fsync",
                    "--logger=zap", "--log-level=error"},
           .env = {},
           .unset_env = {},
           .output_dir = dir,
           .name = "etcd"}));
  MT_RETURN_IF_ERROR(WaitFor(
      *etcd,
      [client_port] {
        const nlohmann::json health = GetJson(client_port, "/health");
        return health.is_object() && health.value("health", "") == "true";
      },
      "etcd"));
  return etcd;
}

// A store: three masters campaigning in etcd (or one lone master) and two
// nodes (n1, n2) given every master's address, all at the daemon's
// defaults but for addresses and sizes. Stopped (SIGTERM) when destroyed.
//
// Thread safety: one thread at a time (the one that started it).
class Cluster {
 public:
  // `etcd` empty: one master without --etcd. `name` names the cluster in
  // etcd and its directory under `dir`.
  static Result<std::unique_ptr<Cluster>> Start(const FailoverOptions& options,
                                                const std::string& dir,
                                                const std::string& name,
                                                const std::string& etcd) {
    std::unique_ptr<Cluster> c(new Cluster());
    c->tierd_ = options.tierd_path;
    c->dir_ = dir + "/" + name;
    c->name_ = name;
    c->etcd_ = etcd;
    fs::create_directories(c->dir_);
    c->masters_.resize(etcd.empty() ? 1 : 3);
    for (size_t i = 0; i < c->masters_.size(); ++i) {
      MT_ASSIGN_OR_RETURN(const int rpc, FreePort());
      MT_ASSIGN_OR_RETURN(const int admin, FreePort());
      c->ports_.insert(c->ports_.end(), {rpc, admin});
      c->addresses_.append(i > 0 ? "," : "").append(c->RpcAddress(i));
    }
    for (size_t i = 0; i < c->masters_.size(); ++i) {
      MT_RETURN_IF_ERROR(c->StartMaster(i));
    }
    for (const std::string node : {"n1", "n2"}) {
      MT_ASSIGN_OR_RETURN(
          std::unique_ptr<Subprocess> child,
          c->Daemon(node, {"node", "--master", c->addresses_, "--name", node,
                           "--admin-listen", "127.0.0.1:0", "--dram",
                           std::to_string(options.dram_bytes), "--ssd-dir",
                           c->dir_ + "/" + node + "-ssd", "--ssd-capacity",
                           std::to_string(options.ssd_bytes)}));
      c->nodes_.push_back(std::move(child));
    }
    return c;
  }
  ~Cluster() {
    // SIGTERM to all, then wait (the Subprocess SIGKILLs what is left):
    // a daemon signalled twice exits at once, skipping its shutdown.
    nodes_.insert(nodes_.end(), std::make_move_iterator(masters_.begin()),
                  std::make_move_iterator(masters_.end()));
    for (auto& child : nodes_) {
      if (child) child->Signal(SIGTERM);
    }
    for (auto& child : nodes_) {
      if (child) child->Wait(seconds(20));
    }
  }

  std::string RpcAddress(size_t i) const {
    return "127.0.0.1:" + std::to_string(ports_[2 * i]);
  }

  // (Re)starts master i on its ports; returns once it serves (as the
  // leader or a standby). Each start has output files of its own.
  Status StartMaster(size_t i) {
    std::vector<std::string> args = {
        "master", "--listen", RpcAddress(i), "--admin-listen",
        "127.0.0.1:" + std::to_string(AdminPort(i))};
    if (!etcd_.empty()) {
      args.insert(args.end(), {"--etcd", etcd_, "--cluster", name_});
    }
    masters_[i].reset();
    const std::string name =
        "master" + std::to_string(i) + "-" + std::to_string(++starts_);
    MT_ASSIGN_OR_RETURN(masters_[i], Daemon(name, std::move(args)));
    return Status::Ok();
  }
  void KillMaster(size_t i) {
    masters_[i]->Kill();
    masters_[i]->Wait(seconds(10));
  }

  // The master that serves clients with both nodes registered (with etcd:
  // the leader, not recovering); UNAVAILABLE after kStartTimeout.
  Result<size_t> WaitForServing() const {
    const auto until = SteadyClock::now() + kStartTimeout;
    while (SteadyClock::now() < until) {
      for (size_t i = 0; i < masters_.size(); ++i) {
        const nlohmann::json s = GetJson(AdminPort(i), "/api/v1/status");
        if (!s.is_object() || !s.contains("nodes")) continue;  // a standby
        const bool serves =
            etcd_.empty() ||
            (s.contains("ha") && s["ha"].value("role", "") == "leader" &&
             !s["ha"].value("recovering", true));
        if (serves && s["nodes"].value("alive", 0) >= 2) return i;
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    return Status(ErrorReason::kUnavailable,
                  "no master of " + name_ + " served with both nodes in 60 s");
  }

  const std::string& addresses() const { return addresses_; }

 private:
  Cluster() = default;

  int AdminPort(size_t i) const { return ports_[2 * i + 1]; }

  // Starts mooncake-tierd `args` as `name` and waits for its ready file.
  Result<std::unique_ptr<Subprocess>> Daemon(const std::string& name,
                                             std::vector<std::string> args) {
    const std::string ready = dir_ + "/" + name + ".ready";
    args.insert(args.end(), {"--ready-file", ready});
    MT_ASSIGN_OR_RETURN(std::unique_ptr<Subprocess> child,
                        Subprocess::Start({.binary = tierd_,
                                           .args = std::move(args),
                                           .env = {},
                                           .unset_env = {},
                                           .output_dir = dir_,
                                           .name = name}));
    MT_RETURN_IF_ERROR(WaitFor(
        *child, [&] { return fs::exists(ready); }, name_ + " " + name));
    return child;
  }

  std::string tierd_;
  std::string dir_;
  std::string name_;
  std::string etcd_;        // empty: a lone master
  std::string addresses_;   // every master's gRPC address, for clients
  std::vector<int> ports_;  // master i: gRPC 2i, admin 2i + 1
  int starts_ = 0;
  std::vector<std::unique_ptr<Subprocess>> masters_;
  std::vector<std::unique_ptr<Subprocess>> nodes_;
};

// Object content: every 8 bytes a word of the member's seed and offset.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void Fill(std::span<std::byte> object, uint64_t group_seed, uint32_t member) {
  const uint64_t seed = Mix(group_seed + member);
  for (size_t at = 0; at + 8 <= object.size(); at += 8) {
    const uint64_t word = Mix(seed + at);
    std::memcpy(&object[at], &word, sizeof(word));
  }
}

// Bytes of `got` that differ from `expected`, a size mismatch included.
uint64_t WrongBytes(std::span<const std::byte> got,
                    std::span<const std::byte> expected) {
  const size_t common = std::min(got.size(), expected.size());
  uint64_t wrong = std::max(got.size(), expected.size()) - common;
  for (size_t i = 0; i < common; ++i) wrong += got[i] != expected[i] ? 1 : 0;
  return wrong;
}

// A group the load acknowledged (every member's put returned OK; only
// those are owed: a member of another may read GROUP_INCOMPLETE). Member
// m's key is MemberKey(id, m); its bytes follow from seed and m.
struct PutGroup {
  std::string id;
  uint64_t seed = 0;
};

std::string MemberKey(const std::string& group, uint32_t m) {
  return group + "/" + std::to_string(m);
}

// The load: `threads` threads, each putting groups of kFailoverGroupSize
// objects under its own keys (one PutBatch per group), appending the
// acknowledged ones to `*acked`, and after each group reading back one object
// of
// `*acked` (bytes checked), from construction until Stop. `bytes_per_s` >
// 0 paces each thread to that many bytes put per second.
//
// Thread safety: construct, call and destroy on one thread; `*acked` is
// the load's until Stop returns.
class Load {
 public:
  Load(Client& client, std::string prefix, int threads, double bytes_per_s,
       std::vector<PutGroup>* acked)
      : client_(client),
        prefix_(std::move(prefix)),
        bytes_per_s_(bytes_per_s),
        acked_(acked) {
    for (int t = 0; t < threads; ++t) pool_.emplace_back([this, t] { Run(t); });
  }
  ~Load() { Stop(); }
  // Asks the threads to stop and waits for their calls in flight.
  void Stop() {
    stop_ = true;
    for (std::thread& thread : pool_) thread.join();
    pool_.clear();
  }

  // Puts issued from now on end the outage Unavailable measures.
  void MarkKill(SteadyClock::time_point at) {
    MutexLock lock(&mu_);
    kill_ = at;
  }
  // From the kill to the first put issued after it that returned OK.
  std::optional<SteadyClock::duration> Unavailable() const {
    MutexLock lock(&mu_);
    if (!kill_ || !first_ack_) return std::nullopt;
    return *first_ack_ - *kill_;
  }
  // Member puts acknowledged, and bytes the load's reads got wrong.
  std::pair<uint64_t, uint64_t> Totals() const {
    MutexLock lock(&mu_);
    return {acked_puts_, wrong_bytes_};
  }
  // "failed puts 3 (NOT_LEADER 2, TIMEOUT 1), failed reads 0, ...".
  std::string Failures() const {
    MutexLock lock(&mu_);
    uint64_t failed = 0;
    std::string reasons;
    for (const auto& [reason, count] : put_failures_) {
      failed += count;
      reasons += (reasons.empty() ? " (" : ", ") +
                 std::string(ReasonName(reason)) + " " + std::to_string(count);
    }
    return "failed puts " + std::to_string(failed) + reasons +
           (failed > 0 ? ")" : "") + ", failed reads " +
           std::to_string(read_failures_) + ", groups partly put " +
           std::to_string(partial_groups_);
  }

 private:
  void Run(int t) {
    std::vector<std::byte> source(kGroupBytes);
    std::vector<std::byte> expected(kFailoverObjectBytes);
    // Saves a registration per put; puts work without.
    const bool registered = client_.RegisterBuffer(source).ok();
    std::mt19937_64 random(std::random_device{}());
    const auto interval = std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(
            bytes_per_s_ > 0 ? kGroupBytes / bytes_per_s_ : 0));
    auto next = SteadyClock::now();
    for (uint64_t n = 0; !stop_; ++n) {
      PutGroup group{
          prefix_ + "/t" + std::to_string(t) + "/g" + std::to_string(n),
          random()};
      std::vector<PutItem> items;
      for (uint32_t m = 0; m < kFailoverGroupSize; ++m) {
        const auto slot = std::span(source).subspan(m * kFailoverObjectBytes,
                                                    kFailoverObjectBytes);
        Fill(slot, group.seed, m);
        PutOptions options;
        options.group = GroupSpec{group.id, kFailoverGroupSize, m};
        items.push_back({MemberKey(group.id, m), slot, std::move(options)});
      }
      const auto sent = SteadyClock::now();
      const std::vector<Status> puts = client_.PutBatch(items);
      const std::optional<PutGroup> earlier =
          Record(std::move(group), puts, sent, random());
      if (earlier) {
        const uint32_t m = random() % kFailoverGroupSize;
        const Result<std::vector<std::byte>> got =
            client_.Get(MemberKey(earlier->id, m));
        if (got.ok()) Fill(expected, earlier->seed, m);
        MutexLock lock(&mu_);
        read_failures_ += got.ok() ? 0 : 1;
        wrong_bytes_ += got.ok() ? WrongBytes(*got, expected) : 0;
      }
      if (bytes_per_s_ > 0) {
        // After an outage the pace restarts: no burst to catch up.
        next = std::max(next + interval, SteadyClock::now() - interval);
        std::this_thread::sleep_until(next);
      }
    }
    if (registered) client_.UnregisterBuffer(source).IgnoreError();
  }

  // Counts one group's puts, and picks (by `random`) an acknowledged group
  // to read back; nullopt while there is none.
  std::optional<PutGroup> Record(PutGroup group,
                                 const std::vector<Status>& puts,
                                 SteadyClock::time_point sent,
                                 uint64_t random) {
    const auto answered = SteadyClock::now();
    MutexLock lock(&mu_);
    uint64_t ok = 0;
    for (const Status& put : puts) {
      ok += put.ok() ? 1 : 0;
      if (!put.ok()) ++put_failures_[put.reason()];
    }
    acked_puts_ += ok;
    if (ok > 0 && kill_ && sent >= *kill_ &&
        (!first_ack_ || answered < *first_ack_)) {
      first_ack_ = answered;
    }
    if (ok == kFailoverGroupSize) acked_->push_back(std::move(group));
    partial_groups_ += ok > 0 && ok < kFailoverGroupSize ? 1 : 0;
    if (acked_->empty()) return std::nullopt;
    return (*acked_)[random % acked_->size()];
  }

  Client& client_;
  const std::string prefix_;
  const double bytes_per_s_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> pool_;
  mutable Mutex mu_;
  std::vector<PutGroup>* const acked_ ABSL_PT_GUARDED_BY(mu_);
  std::optional<SteadyClock::time_point> kill_ ABSL_GUARDED_BY(mu_);
  std::optional<SteadyClock::time_point> first_ack_ ABSL_GUARDED_BY(mu_);
  uint64_t acked_puts_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t read_failures_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t wrong_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t partial_groups_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<ErrorReason, uint64_t> put_failures_ ABSL_GUARDED_BY(mu_);
};

// What a read-back found, or the most any round found (summary).
struct Check {
  uint64_t lost = 0;  // acknowledged objects that could not be read
  uint64_t wrong_bytes = 0;
  uint64_t groups_broken = 0;  // acknowledged groups not complete
};

// Reads back every object of every acknowledged group, checking every
// byte, and asks for each group's state. Run with the load stopped.
Check ReadBack(Client& client, const std::vector<PutGroup>& groups,
               ResultSink& sink) {
  Check check;
  std::vector<std::byte> expected(kFailoverObjectBytes);
  for (size_t at = 0; at < groups.size(); at += kReadGroups) {
    std::vector<std::string> ids, keys;
    for (size_t g = at; g < std::min(at + kReadGroups, groups.size()); ++g) {
      ids.push_back(groups[g].id);
      for (uint32_t m = 0; m < kFailoverGroupSize; ++m) {
        keys.push_back(MemberKey(groups[g].id, m));
      }
    }
    const std::vector<Result<std::vector<std::byte>>> got =
        client.GetBatch(keys);
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i].ok()) {
        Fill(expected, groups[at + i / kFailoverGroupSize].seed,
             i % kFailoverGroupSize);
        check.wrong_bytes += WrongBytes(*got[i], expected);
      } else if (++check.lost <= 3) {
        sink.Progress("failover: lost " + keys[i] + ": " +
                      got[i].status().ToString());
      }
    }
    for (const Result<GroupInfo>& info : client.GetGroupBatch(ids)) {
      if (!info.ok() || info->status.state != GroupState::kComplete) {
        ++check.groups_broken;
      }
    }
  }
  return check;
}

// A fresh cluster serving, and a client of it (destroyed first).
struct Store {
  std::unique_ptr<Cluster> cluster;
  std::unique_ptr<Client> client;
};

Result<Store> OpenStore(const FailoverOptions& options, const std::string& dir,
                        const std::string& name, const std::string& etcd) {
  Store store;
  MT_ASSIGN_OR_RETURN(store.cluster, Cluster::Start(options, dir, name, etcd));
  MT_RETURN_IF_ERROR(store.cluster->WaitForServing().status());
  RemoteClientOptions client;
  client.master = store.cluster->addresses();
  // Above a failover (lease TTL, election, nodes registering again): a
  // call made meanwhile follows the leader until one serves it.
  client.rpc_timeout = seconds(10);
  client.transfer_timeout = seconds(5);
  MT_ASSIGN_OR_RETURN(store.client, ConnectRemote(client));
  return store;
}

// The rounds' figures for the summary.
struct RoundsFigures {
  std::vector<double> unavailable_ms;  // of the rounds that recovered
  Check worst;                         // figure by figure
};

// One kill -9 round; emits its line.
Status RunRound(int round, Store& store, const std::string& prefix, int threads,
                double bytes_per_s, std::vector<PutGroup>& acked,
                RoundsFigures& figures, ResultSink& sink) {
  const std::string label = "failover round " + std::to_string(round) + ": ";
  MT_ASSIGN_OR_RETURN(const size_t leader, store.cluster->WaitForServing());
  sink.Progress(label + "leader is " + store.cluster->RpcAddress(leader) +
                ", load started");
  Load load(*store.client, prefix + "/r" + std::to_string(round), threads,
            bytes_per_s, &acked);
  std::this_thread::sleep_for(kBeforeKill);
  const auto killed = SteadyClock::now();
  load.MarkKill(killed);
  store.cluster->KillMaster(leader);
  sink.Progress(label + "leader killed (-9)");
  while (!load.Unavailable() && SteadyClock::now() - killed < kMaxUnavailable) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  Json unavailable_ms = nullptr;
  if (const auto outage = load.Unavailable()) {
    unavailable_ms = std::chrono::duration_cast<milliseconds>(*outage).count();
    figures.unavailable_ms.push_back(unavailable_ms.get<double>());
  }
  sink.Progress(label + "first put acknowledged after the kill: " +
                (unavailable_ms.is_null() ? "none in 60 s"
                                          : unavailable_ms.dump() + " ms"));
  std::this_thread::sleep_for(kAfterRecovery);
  load.Stop();
  sink.Progress(label + "load stopped (" + load.Failures() +
                "); reading back " +
                std::to_string(acked.size() * kFailoverGroupSize) + " objects");
  Check check = ReadBack(*store.client, acked, sink);
  check.wrong_bytes += load.Totals().second;
  for (auto f : {&Check::lost, &Check::wrong_bytes, &Check::groups_broken}) {
    figures.worst.*f = std::max(figures.worst.*f, check.*f);
  }
  sink.Progress(label + "restarting the killed master (a standby now)");
  MT_RETURN_IF_ERROR(store.cluster->StartMaster(leader));
  sink.Emit({{"scenario", "failover"},
             {"round", round},
             {"unavailable_ms", unavailable_ms},
             {"acknowledged", acked.size() * kFailoverGroupSize},
             {"lost", check.lost},
             {"wrong_bytes", check.wrong_bytes},
             {"groups_broken", check.groups_broken}});
  return Status::Ok();
}

Status RunRounds(const FailoverOptions& options, const std::string& dir,
                 const std::string& etcd, RoundsFigures& figures,
                 ResultSink& sink) {
  // Per thread: what the rounds keep stays within kKeepShare of the
  // nodes' SSD (of their DRAM without SSD).
  const double rate =
      kKeepShare * 2 *
      static_cast<double>(std::max(options.ssd_bytes, options.dram_bytes)) /
      options.rounds / kPacedRoundSeconds / options.threads;
  sink.Progress("failover: starting 3 masters and 2 nodes; load paced to " +
                std::to_string(std::lround(rate * options.threads / 1e6)) +
                " MB/s");
  MT_ASSIGN_OR_RETURN(Store store, OpenStore(options, dir, "bench", etcd));
  const std::string prefix = UniqueKeyPrefix("failover");
  std::vector<PutGroup> acked;
  for (int round = 1; round <= options.rounds; ++round) {
    MT_RETURN_IF_ERROR(RunRound(round, store, prefix, options.threads, rate,
                                acked, figures, sink));
  }
  return Status::Ok();
}

struct PhaseFigures {
  double gbps = 0;
  double puts_per_s = 0;  // member puts that returned OK
};

// The load, unpaced, for seconds_per_phase into a fresh cluster (HA when
// `etcd` is set), stopped after.
Result<PhaseFigures> MeasurePuts(const FailoverOptions& options,
                                 const std::string& dir,
                                 const std::string& name,
                                 const std::string& etcd, ResultSink& sink) {
  MT_ASSIGN_OR_RETURN(Store store, OpenStore(options, dir, name, etcd));
  std::vector<PutGroup> acked;
  const auto begin = SteadyClock::now();
  Load load(*store.client, UniqueKeyPrefix(name), options.threads, 0, &acked);
  std::this_thread::sleep_for(
      std::chrono::duration<double>(options.seconds_per_phase));
  load.Stop();
  const double secs =
      std::chrono::duration<double>(SteadyClock::now() - begin).count();
  PhaseFigures f;
  f.puts_per_s = Ratio(static_cast<double>(load.Totals().first), secs);
  f.gbps = f.puts_per_s * kFailoverObjectBytes / 1e9;
  char line[96];
  std::snprintf(line, sizeof(line), ": %.3f GB/s, %.0f puts/s over %.1f s; ",
                f.gbps, f.puts_per_s, secs);
  sink.Progress("failover throughput " + name + line + load.Failures());
  return f;
}

// The middle value, or the mean of the two middle ones; null for none.
Json Median(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  return (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

// The run's temp dir, removed (with every cluster's files) at the end.
struct RunDir {
  std::string path;
  ~RunDir() {
    std::error_code ignored;
    if (!path.empty()) fs::remove_all(path, ignored);
  }
};

}  // namespace

int RunFailoverScenario(const CommonOptions& common,
                        const FailoverOptions& options, ResultSink& sink) {
  // Other REQUIRES: bench/main.cc checks them. A missing binary: start fails.
  if (!options.spawn) {
    sink.Progress(
        "failover: needs --spawn (it starts the etcd, masters and "
        "nodes whose leader it kills)");
    return 2;
  }
  // Destroyed in reverse: clusters, then etcd, then the directory.
  RunDir dir{common.scratch_dir + "/mooncake-bench-failover-XXXXXX"};
  if (::mkdtemp(dir.path.data()) == nullptr) {
    sink.Progress("failover: cannot create a temp dir under " +
                  common.scratch_dir);
    return 1;
  }
  std::string etcd_endpoint;
  Result<std::unique_ptr<Subprocess>> etcd =
      StartEtcd(dir.path, &etcd_endpoint);
  RoundsFigures rounds;
  Status status = etcd.status();
  if (status.ok()) {
    status = RunRounds(options, dir.path, etcd_endpoint, rounds, sink);
  }
  // Per pair: HA on and off, GB/s and puts/s, and the ratio on / off.
  std::vector<double> ha_gbps, lone_gbps, ha_puts, lone_puts, ratios;
  for (int p = 1; p <= options.pairs && status.ok(); ++p) {
    const std::string n = std::to_string(p);
    Result<PhaseFigures> on =
        MeasurePuts(options, dir.path, "ha-" + n, etcd_endpoint, sink);
    Result<PhaseFigures> off =
        on.ok() ? MeasurePuts(options, dir.path, "lone-" + n, "", sink) : on;
    if (!(status = off.status()).ok()) break;
    ha_gbps.push_back(on->gbps);
    ha_puts.push_back(on->puts_per_s);
    lone_gbps.push_back(off->gbps);
    lone_puts.push_back(off->puts_per_s);
    ratios.push_back(Ratio(on->gbps, off->gbps));
  }
  if (!status.ok()) {
    sink.Progress("failover: " + status.ToString());
    return 1;
  }
  const bool all_recovered =
      rounds.unavailable_ms.size() == static_cast<size_t>(options.rounds);
  // max: null when a round never recovered (its outage has no bound).
  sink.Emit(
      {{"scenario", "failover"},
       {"summary", true},
       {"rounds", options.rounds},
       {"p50_unavailable_ms", Median(rounds.unavailable_ms)},
       {"max_unavailable_ms",
        all_recovered ? Json(Percentile(rounds.unavailable_ms, 1.0)) : Json()},
       {"lost", rounds.worst.lost},
       {"wrong_bytes", rounds.worst.wrong_bytes},
       {"groups_broken", rounds.worst.groups_broken},
       {"put_gbps_ha", Median(ha_gbps)},
       {"put_gbps_lone", Median(lone_gbps)},
       {"ha_over_lone", Median(ratios)},
       {"puts_per_s_ha", Median(ha_puts)},
       {"puts_per_s_lone", Median(lone_puts)},
       {"load_avg", LoadAverage()}});
  return 0;
}

}  // namespace mooncake_tier::bench
