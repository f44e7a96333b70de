#include "bench/admin_scenario.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "admin_server/admin_server.h"
#include "admin_server/master_admin_facade.h"
#include "admin_server/route_table.h"
#include "bench/bench_util.h"
#include "client/embedded_cluster.h"
#include "core/clock.h"
#include "core/master.h"
#include "core/mutex.h"
#include "httplib.h"
#include "metrics/master_metrics.h"
#include "metrics/text_exposition.h"
#include "mooncake_tier/client.h"
#include "rpc/call_recorder.h"

namespace mooncake_tier::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// ---- Shape of the store ----

constexpr uint32_t kGroupSize = 8;
// Share of the loaded objects that are group members; the rest stand alone.
constexpr double kGroupedShare = 0.8;
constexpr uint64_t kMinObjects = 1000;
// The loaded objects are metadata only: their bytes are never written, so
// the node's DRAM segment (mapped without reserve) stays untouched.
constexpr uint64_t kLoadObjectBytes = 4096;
constexpr uint64_t kLoadKeysPerCall = 64;  // 8 groups, or 64 loose keys
const ClientId kLoader = "bench-admin-loader";

// ---- Route latency ----

constexpr size_t kPageLimit = 1000;
constexpr size_t kWarmupRequests = 5;
constexpr double kRouteTargetMs = 50;

// ---- Interference ----

// DRAM objects the data path reads: 128 groups of 8 x 64 KiB (64 MiB).
constexpr uint64_t kDataObjectBytes = 64 << 10;
constexpr uint64_t kDataGroups = 128;
constexpr int kReaderThreads = 2;
// Quiet and scraped windows alternate in pairs, the order flipping every
// pair (quiet-scraped, scraped-quiet, ...), so a drift of the shared
// machine's load over the run weighs on both kinds alike.
constexpr int kWindowPairs = 4;
constexpr auto kReaderWarmup = milliseconds(500);
constexpr double kInterferenceTarget = 1.10;

struct Cadence {
  const char* variant;
  milliseconds period;
};
// What the scraper fetches each period: /metrics (a Prometheus scrape),
// /api/v1/status and one 1000-group page (an operator's dashboard or CLI).
// Every 1 s is a scrape interval tighter than Prometheus' usual 15 s; every
// 100 ms is a `top`-like tool left running, the worst plausible case.
constexpr Cadence kCadences[] = {
    {"prometheus_1s", milliseconds(1000)},
    {"aggressive_100ms", milliseconds(100)},
};

double MsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start)
      .count();
}

double Ratio(double num, double den) { return den > 0 ? num / den : 0; }

// ---- The store ----

struct Population {
  std::vector<std::string> group_ids;
  // Member i of group g at g * kGroupSize + i, then the loose objects.
  std::vector<std::string> keys;
  uint64_t grouped() const { return group_ids.size() * kGroupSize; }
};

Population MakePopulation(uint64_t objects) {
  Population p;
  const auto groups = static_cast<uint64_t>(
      std::llround(static_cast<double>(objects) * kGroupedShare / kGroupSize));
  p.group_ids.reserve(groups);
  p.keys.reserve(objects);
  for (uint64_t g = 0; g < groups; ++g) {
    p.group_ids.push_back(HashedName("grp-", g));
    for (uint32_t i = 0; i < kGroupSize; ++i) {
      p.keys.push_back(p.group_ids.back() + "/" + std::to_string(i));
    }
  }
  for (uint64_t i = p.keys.size(); i < objects; ++i) {
    p.keys.push_back(HashedName("obj-", i));
  }
  return p;
}

// Puts every object of `p` through the master's API (PutStart + PutEnd, a
// batch per call, each group whole within one call).
Status Load(Master& master, const Population& p, ResultSink& sink) {
  const auto start = SteadyClock::now();
  const uint64_t total = p.keys.size();
  uint64_t next_report = total / 10;
  std::vector<PutStartRequest> requests;
  for (uint64_t first = 0; first < total;) {
    // Grouped keys come first and kLoadKeysPerCall is a multiple of the
    // group size, so no call splits a group.
    const uint64_t end =
        first < p.grouped() ? std::min(first + kLoadKeysPerCall, p.grouped())
                            : std::min(first + kLoadKeysPerCall, total);
    requests.clear();
    for (uint64_t i = first; i < end; ++i) {
      PutStartRequest r;
      r.key = p.keys[i];
      r.size = kLoadObjectBytes;
      r.client = kLoader;
      if (i < p.grouped()) {
        r.options.group = GroupSpec{p.group_ids[i / kGroupSize], kGroupSize,
                                    static_cast<uint32_t>(i % kGroupSize)};
      }
      requests.push_back(std::move(r));
    }
    for (const auto& r : master.PutStart(requests)) {
      if (!r.ok()) return r.status();
    }
    const auto keys = std::span(p.keys).subspan(first, end - first);
    for (const Status& s : master.PutEnd(kLoader, keys)) {
      MT_RETURN_IF_ERROR(s);
    }
    first = end;
    if (first >= next_report) {
      char line[128];
      std::snprintf(line, sizeof(line), "admin: loaded %llu / %llu (%.1f s)",
                    static_cast<unsigned long long>(first),
                    static_cast<unsigned long long>(total),
                    MsSince(start) / 1000);
      sink.Progress(line);
      next_report += std::max<uint64_t>(1, total / 10);
    }
  }
  return Status::Ok();
}

// The DRAM objects the data path reads, put through the client in groups.
struct DataSet {
  std::vector<std::string> keys;
};

Result<DataSet> PutDataSet(Client& client) {
  DataSet d;
  std::vector<std::byte> value(kDataObjectBytes);
  for (size_t i = 0; i < value.size(); ++i) {
    value[i] = static_cast<std::byte>(i * 131 + 7);
  }
  for (uint64_t g = 0; g < kDataGroups; ++g) {
    const std::string id = HashedName("data-", g);
    std::vector<PutItem> items;
    for (uint32_t i = 0; i < kGroupSize; ++i) {
      d.keys.push_back(id + "/" + std::to_string(i));
      PutOptions options;
      options.group = GroupSpec{id, kGroupSize, i};
      items.push_back({d.keys.back(), value, options});
    }
    for (const Status& s : client.PutBatch(items)) MT_RETURN_IF_ERROR(s);
  }
  return d;
}

// The store, the admin server in front of it and a data-path client.
// Members are destroyed in reverse order: the server stops first, the
// cluster last.
struct Stack {
  std::unique_ptr<EmbeddedCluster> cluster;
  std::unique_ptr<Client> client;
  std::unique_ptr<admin::MasterAdminFacade> facade;
  std::unique_ptr<rpc::CallRecorder> requests;
  std::unique_ptr<metrics::MasterMetrics> metrics;
  std::unique_ptr<admin::AdminServer> server;

  std::string RenderMetrics() const {
    return metrics::RenderText({metrics.get()});
  }
};

Result<std::unique_ptr<Stack>> StartStack(uint64_t objects) {
  auto stack = std::make_unique<Stack>();
  EmbeddedClusterOptions options;  // system clock, background threads on
  EmbeddedNodeOptions node;
  node.node.name = "bench-admin-node";
  // Twice the bytes of everything put: DRAM stays near 50%, no eviction.
  const uint64_t bytes =
      objects * kLoadObjectBytes + kDataGroups * kGroupSize * kDataObjectBytes;
  node.node.dram_bytes = std::max<uint64_t>(2 * bytes, 256ull << 20);
  options.nodes.push_back(std::move(node));
  MT_ASSIGN_OR_RETURN(stack->cluster, EmbeddedCluster::Start(std::move(options)));
  stack->client = stack->cluster->NewClient();
  const Clock* clock = SystemClock::Default();
  stack->facade = std::make_unique<admin::MasterAdminFacade>(
      &stack->cluster->master(), clock);
  stack->requests =
      std::make_unique<rpc::CallRecorder>(admin::AdminServer::RouteNames());
  stack->metrics = std::make_unique<metrics::MasterMetrics>(
      &stack->cluster->master(), clock, nullptr, stack->requests.get());
  admin::AdminServerOptions server_options;
  server_options.port = 0;
  const Stack* s = stack.get();
  MT_ASSIGN_OR_RETURN(
      stack->server,
      admin::AdminServer::Start(
          server_options, stack->facade.get(),
          [s] { return s->RenderMetrics(); }, stack->requests.get()));
  stack->server->SetReady(true);
  return stack;
}

// ---- HTTP ----

// One keep-alive connection to the admin server; a GET that does not
// answer 200 is an error.
class HttpProbe {
 public:
  explicit HttpProbe(uint16_t port) : client_("127.0.0.1", port) {
    client_.set_url_encode(false);  // paths are encoded here
    client_.set_keep_alive(true);
    client_.set_read_timeout(60, 0);
    // As Prometheus' and curl's clients do; it cannot help a server that
    // sends one response in two small writes with Nagle on.
    client_.set_tcp_nodelay(true);
  }

  // Milliseconds from sending the request to holding the whole body.
  Result<double> Get(const std::string& path, std::string* body) {
    const auto start = SteadyClock::now();
    httplib::Result res = client_.Get(path);
    const double ms = MsSince(start);
    if (!res) {
      return Status(ErrorReason::kUnavailable,
                    "GET " + path + ": no response (httplib error " +
                        std::to_string(static_cast<int>(res.error())) + ")");
    }
    if (res->status != 200) {
      return Status(ErrorReason::kInternal,
                    "GET " + path + ": HTTP " + std::to_string(res->status) +
                        ": " + res->body.substr(0, 200));
    }
    *body = std::move(res->body);
    return ms;
  }

 private:
  httplib::Client client_;
};

// Walks the group listing page by page, restarting after the last.
class PageWalker {
 public:
  std::string Path() const {
    std::string path = "/api/v1/groups?limit=" + std::to_string(kPageLimit);
    if (!cursor_.empty()) path += "&cursor=" + admin::PercentEncode(cursor_);
    return path;
  }
  const std::string& cursor() const { return cursor_; }
  // Reads next_cursor from a page's body.
  Status Advance(const std::string& body, size_t* groups) {
    const nlohmann::json page = nlohmann::json::parse(body, nullptr, false);
    if (!page.is_object() || !page.contains("groups") ||
        !page["next_cursor"].is_string()) {
      return Status(ErrorReason::kInternal, "a group page without groups");
    }
    *groups = page["groups"].size();
    Next(page["next_cursor"].get<std::string>());
    return Status::Ok();
  }
  void Next(std::string cursor) {
    cursor_ = std::move(cursor);
    if (cursor_.empty()) ++walks_;
  }
  uint64_t walks() const { return walks_; }

 private:
  std::string cursor_;
  uint64_t walks_ = 0;
};

// ---- Phase 1: route latency ----

struct RouteRun {
  std::string route;
  size_t requests = 0;
  // Builds the path of request i (after the previous one was checked).
  std::function<std::string(size_t)> path;
  // Looks at a body (untimed); may keep state for the next path.
  std::function<Status(const std::string&)> check;
  // The engine call behind request i, without HTTP and JSON.
  std::function<Status(size_t)> engine;
};

Status MeasureRoute(HttpProbe& http, RouteRun& run, ResultSink& sink,
                    double* worst_p99, std::string* worst_route) {
  std::vector<double> http_ms;
  std::vector<double> engine_ms;
  uint64_t bytes = 0;
  std::string body;
  for (size_t i = 0; i < kWarmupRequests + run.requests; ++i) {
    MT_ASSIGN_OR_RETURN(const double ms, http.Get(run.path(i), &body));
    if (run.check) MT_RETURN_IF_ERROR(run.check(body));
    if (i < kWarmupRequests) continue;
    http_ms.push_back(ms);
    bytes += body.size();
  }
  for (size_t i = 0; i < run.requests; ++i) {
    const auto start = SteadyClock::now();
    MT_RETURN_IF_ERROR(run.engine(i));
    engine_ms.push_back(MsSince(start));
  }
  const double p99 = Percentile(http_ms, 0.99);
  if (p99 > *worst_p99) {
    *worst_p99 = p99;
    *worst_route = run.route;
  }
  sink.Emit({{"scenario", "admin"},
             {"route", run.route},
             {"p50_ms", Percentile(http_ms, 0.50)},
             {"p99_ms", p99},
             {"max_ms", Percentile(http_ms, 1.0)},
             {"requests", run.requests},
             {"mean_response_bytes", Ratio(bytes, run.requests)},
             {"engine_p50_ms", Percentile(engine_ms, 0.50)},
             {"engine_p99_ms", Percentile(engine_ms, 0.99)}});
  return Status::Ok();
}

size_t Requests(size_t base, double scale) {
  return std::max<size_t>(20, std::llround(base * std::min(scale, 1.0)));
}

Status MeasureRoutes(Stack& stack, const Population& p, double scale,
                     ResultSink& sink, double* worst_p99,
                     std::string* worst_route) {
  HttpProbe http(stack.server->port());
  std::mt19937_64 rng(0xad3171);
  auto pick = [&rng](size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  };
  admin::MasterAdminFacade& facade = *stack.facade;
  const size_t full_walk = (p.group_ids.size() + kPageLimit - 1) / kPageLimit;

  // Keys and ids are drawn once per route, so the HTTP and engine loops
  // look up the same ones.
  std::vector<std::string> object_keys;
  std::vector<std::string> group_ids;
  for (size_t i = 0; i < kWarmupRequests + Requests(1000, scale); ++i) {
    object_keys.push_back(p.keys[pick(p.keys.size())]);
    group_ids.push_back(p.group_ids[pick(p.group_ids.size())]);
  }
  PageWalker http_pages;
  PageWalker engine_pages;
  size_t short_pages = 0;

  std::vector<RouteRun> runs;
  runs.push_back({"GET /api/v1/status", Requests(200, scale),
                  [](size_t) { return std::string("/api/v1/status"); },
                  nullptr, [&facade](size_t) {
                    (void)facade.Stats();
                    return Status::Ok();
                  }});
  // Every page of a full walk (and more, wrapping), so early and late
  // cursors both count.
  runs.push_back(
      {"GET /api/v1/groups?limit=1000",
       std::max(Requests(200, scale), full_walk),
       [&http_pages](size_t) { return http_pages.Path(); },
       [&http_pages, &short_pages](const std::string& body) {
         size_t groups = 0;
         MT_RETURN_IF_ERROR(http_pages.Advance(body, &groups));
         if (groups < kPageLimit && !http_pages.cursor().empty()) ++short_pages;
         return Status::Ok();
       },
       [&facade, &engine_pages](size_t) -> Status {
         MT_ASSIGN_OR_RETURN(
             GroupPage page,
             facade.ListGroups(std::nullopt, kPageLimit, engine_pages.cursor()));
         engine_pages.Next(std::move(page.next_cursor));
         return Status::Ok();
       }});
  runs.push_back(
      {"GET /api/v1/objects/{key}", Requests(1000, scale),
       [&object_keys](size_t i) {
         return "/api/v1/objects/" + admin::PercentEncode(object_keys[i]);
       },
       nullptr,
       [&facade, &object_keys](size_t i) {
         return facade.DescribeObject(object_keys[i + kWarmupRequests])
             .status();
       }});
  runs.push_back(
      {"GET /api/v1/groups/{id}", Requests(1000, scale),
       [&group_ids](size_t i) {
         return "/api/v1/groups/" + admin::PercentEncode(group_ids[i]);
       },
       nullptr,
       [&facade, &group_ids](size_t i) {
         return facade.DescribeGroup(group_ids[i + kWarmupRequests]).status();
       }});
  runs.push_back({"GET /metrics", Requests(100, scale),
                  [](size_t) { return std::string("/metrics"); }, nullptr,
                  [&stack](size_t) {
                    (void)stack.RenderMetrics();
                    return Status::Ok();
                  }});
  for (RouteRun& run : runs) {
    sink.Progress("admin: timing " + run.route);
    MT_RETURN_IF_ERROR(MeasureRoute(http, run, sink, worst_p99, worst_route));
  }
  if (short_pages != 0) {
    return Status(ErrorReason::kInternal,
                  std::to_string(short_pages) +
                      " group pages had fewer than 1000 groups and a cursor");
  }
  sink.Progress("admin: group listing walked " +
                std::to_string(http_pages.walks()) + " time(s) over " +
                std::to_string(full_walk) + " pages");
  return Status::Ok();
}

// ---- Phase 2: interference ----

// Reader threads Get random data-set objects in a loop and record each
// Get's latency under the window that is current when it starts (none
// between windows).
class Readers {
 public:
  Readers(Client& client, const DataSet& data, int windows)
      : client_(client), data_(data), windows_(windows) {}

  ~Readers() { Stop(); }

  Status Start() {
    for (int t = 0; t < kReaderThreads; ++t) {
      slots_.push_back(std::make_unique<Slot>());
      Slot& slot = *slots_.back();
      slot.buffer.resize(kDataObjectBytes);
      slot.latencies_us.resize(windows_);
      MT_RETURN_IF_ERROR(client_.RegisterBuffer(slot.buffer));
      slot.registered = true;
    }
    for (int t = 0; t < kReaderThreads; ++t) {
      threads_.emplace_back([this, t] { Run(*slots_[t], 0x5eed + t); });
    }
    return Status::Ok();
  }

  void SetWindow(int window) { window_.store(window); }

  void Stop() {
    stop_.store(true);
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    for (auto& slot : slots_) {
      if (slot->registered) {
        client_.UnregisterBuffer(slot->buffer).IgnoreError();
        slot->registered = false;
      }
    }
  }

  // After Stop.
  std::vector<double> Latencies(int window) const {
    std::vector<double> all;
    for (const auto& slot : slots_) {
      all.insert(all.end(), slot->latencies_us[window].begin(),
                 slot->latencies_us[window].end());
    }
    return all;
  }
  uint64_t errors() const {
    uint64_t n = 0;
    for (const auto& slot : slots_) n += slot->errors;
    return n;
  }

 private:
  struct Slot {
    std::vector<std::byte> buffer;
    bool registered = false;
    std::vector<std::vector<double>> latencies_us;  // by window
    uint64_t errors = 0;
  };

  void Run(Slot& slot, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<size_t> pick(0, data_.keys.size() - 1);
    while (!stop_.load(std::memory_order_relaxed)) {
      const int window = window_.load(std::memory_order_relaxed);
      const std::string& key = data_.keys[pick(rng)];
      const auto start = SteadyClock::now();
      const Result<uint64_t> got = client_.GetInto(key, slot.buffer);
      const double us = MsSince(start) * 1000;
      if (!got.ok() || *got != kDataObjectBytes) ++slot.errors;
      if (window >= 0) slot.latencies_us[window].push_back(us);
    }
  }

  Client& client_;
  const DataSet& data_;
  const int windows_;
  std::atomic<int> window_{-1};
  std::atomic<bool> stop_{false};
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::thread> threads_;
};

// A thread that fetches /metrics, /api/v1/status and the next group page
// every `period` (the first at once) between Start and Stop. The page
// cursor carries over from one Start to the next.
class Scraper {
 public:
  Scraper(uint16_t port, milliseconds period) : http_(port), period_(period) {}
  ~Scraper() { Stop(); }

  void Start() {
    {
      MutexLock lock(&mu_);
      stop_ = false;
    }
    thread_ = std::thread([this] { Run(); });
  }

  void Stop() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
      cv_.SignalAll();
    }
    if (thread_.joinable()) thread_.join();
  }

  // After Stop.
  const Status& error() const { return error_; }
  const std::vector<double>& scrape_ms() const { return scrape_ms_; }

 private:
  void Run() {
    auto next = SteadyClock::now();
    while (true) {
      {
        MutexLock lock(&mu_);
        while (!stop_ && SteadyClock::now() < next) {
          cv_.WaitFor(next - SteadyClock::now());
        }
        if (stop_) return;
      }
      const auto start = SteadyClock::now();
      if (Status s = ScrapeOnce(); !s.ok()) {
        error_ = std::move(s);
        return;
      }
      scrape_ms_.push_back(MsSince(start));
      next += period_;
      // A scrape longer than the period starts the next one at once,
      // without a backlog.
      next = std::max(next, SteadyClock::now());
    }
  }

  Status ScrapeOnce() {
    std::string body;
    MT_RETURN_IF_ERROR(http_.Get("/metrics", &body).status());
    MT_RETURN_IF_ERROR(http_.Get("/api/v1/status", &body).status());
    MT_RETURN_IF_ERROR(http_.Get(pages_.Path(), &body).status());
    size_t groups = 0;
    return pages_.Advance(body, &groups);
  }

  HttpProbe http_;
  PageWalker pages_;
  const milliseconds period_;
  std::thread thread_;
  Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  CondVar cv_{&mu_};
  // Written by the thread, read after Stop joined it.
  Status error_;
  std::vector<double> scrape_ms_;
};

Status MeasureInterference(Stack& stack, const DataSet& data,
                           double window_s, ResultSink& sink,
                           double* realistic_ratio) {
  constexpr int kWindowsPerCadence = 2 * kWindowPairs;
  const int windows = kWindowsPerCadence * static_cast<int>(std::size(kCadences));
  Readers readers(*stack.client, data, windows);
  MT_RETURN_IF_ERROR(readers.Start());
  std::this_thread::sleep_for(kReaderWarmup);
  const auto window = std::chrono::duration<double>(window_s);
  std::vector<std::unique_ptr<Scraper>> scrapers;
  for (size_t c = 0; c < std::size(kCadences); ++c) {
    sink.Progress(std::string("admin: interference, ") + kCadences[c].variant +
                  ", " + std::to_string(kWindowPairs) + " pairs of " +
                  std::to_string(window_s) + " s windows");
    scrapers.push_back(
        std::make_unique<Scraper>(stack.server->port(), kCadences[c].period));
    Scraper& scraper = *scrapers.back();
    for (int pair = 0; pair < kWindowPairs; ++pair) {
      for (int slot = 0; slot < 2; ++slot) {
        const bool scraped = (slot == 1) != (pair % 2 == 1);
        const int id = static_cast<int>(c) * kWindowsPerCadence + 2 * pair +
                       (scraped ? 1 : 0);
        if (scraped) scraper.Start();
        readers.SetWindow(id);
        std::this_thread::sleep_for(window);
        readers.SetWindow(-1);
        if (scraped) scraper.Stop();
        MT_RETURN_IF_ERROR(scraper.error());
      }
    }
  }
  readers.Stop();
  if (readers.errors() != 0) {
    return Status(ErrorReason::kInternal,
                  std::to_string(readers.errors()) + " data-path Gets failed");
  }
  for (size_t c = 0; c < std::size(kCadences); ++c) {
    std::vector<double> quiet;
    std::vector<double> scraped;
    std::vector<double> pair_ratios;
    for (int pair = 0; pair < kWindowPairs; ++pair) {
      const int base = static_cast<int>(c) * kWindowsPerCadence + 2 * pair;
      const std::vector<double> q = readers.Latencies(base);
      const std::vector<double> s = readers.Latencies(base + 1);
      pair_ratios.push_back(Ratio(Percentile(s, 0.99), Percentile(q, 0.99)));
      quiet.insert(quiet.end(), q.begin(), q.end());
      scraped.insert(scraped.end(), s.begin(), s.end());
    }
    const double p99_quiet = Percentile(quiet, 0.99);
    const double p99_scraped = Percentile(scraped, 0.99);
    const double ratio = Ratio(p99_scraped, p99_quiet);
    if (c == 0) *realistic_ratio = ratio;
    const std::vector<double>& scrapes = scrapers[c]->scrape_ms();
    sink.Emit({{"scenario", "admin_interference"},
               {"variant", kCadences[c].variant},
               {"get_p99_us_quiet", p99_quiet},
               {"get_p99_us_scraped", p99_scraped},
               {"ratio", ratio},
               {"pair_ratio_median", Percentile(pair_ratios, 0.5)},
               {"get_p50_us_quiet", Percentile(quiet, 0.50)},
               {"get_p50_us_scraped", Percentile(scraped, 0.50)},
               {"get_p999_us_quiet", Percentile(quiet, 0.999)},
               {"get_p999_us_scraped", Percentile(scraped, 0.999)},
               {"gets_per_s_quiet", Ratio(quiet.size(), kWindowPairs * window_s)},
               {"gets_per_s_scraped",
                Ratio(scraped.size(), kWindowPairs * window_s)},
               {"cadence_ms", kCadences[c].period.count()},
               {"scrapes", scrapes.size()},
               {"scrape_p50_ms", Percentile(scrapes, 0.50)},
               {"scrape_max_ms", Percentile(scrapes, 1.0)},
               {"reader_threads", kReaderThreads},
               {"object_bytes", kDataObjectBytes},
               {"window_s", window_s},
               {"window_pairs", kWindowPairs}});
  }
  return Status::Ok();
}

Status Run(const CommonOptions& options, ResultSink& sink) {
  const uint64_t objects = std::max<uint64_t>(
      kMinObjects, std::llround(kDefaultAdminObjects * options.scale));
  sink.Progress("admin: building " + std::to_string(objects) + " keys");
  const Population p = MakePopulation(objects);
  MT_ASSIGN_OR_RETURN(std::unique_ptr<Stack> stack, StartStack(objects));
  Master& master = stack->cluster->master();
  MT_RETURN_IF_ERROR(Load(master, p, sink));
  MT_ASSIGN_OR_RETURN(const DataSet data, PutDataSet(*stack->client));
  const MasterStats stats = master.GetStats();
  sink.Progress("admin: " + std::to_string(stats.objects) + " objects, " +
                std::to_string(stats.groups.complete) +
                " complete groups; admin server on 127.0.0.1:" +
                std::to_string(stack->server->port()));
  const uint64_t expected = objects + data.keys.size();
  if (stats.objects != expected ||
      stats.groups.complete != p.group_ids.size() + kDataGroups ||
      stats.evicted_memory_objects != 0) {
    return Status(ErrorReason::kInternal,
                  "load: expected " + std::to_string(expected) +
                      " objects and no eviction, found " +
                      std::to_string(stats.objects) + " and " +
                      std::to_string(stats.evicted_memory_objects) +
                      " evicted");
  }

  double worst_p99 = 0;
  std::string worst_route;
  MT_RETURN_IF_ERROR(
      MeasureRoutes(*stack, p, options.scale, sink, &worst_p99, &worst_route));
  sink.Emit({{"scenario", "admin"},
             {"check", "max_route_p99_ms"},
             {"route", worst_route},
             {"value", worst_p99},
             {"target", kRouteTargetMs},
             {"objects", objects},
             {"groups", p.group_ids.size()}});

  const double window_s = std::clamp(3.0 * options.scale, 1.0, 3.0);
  double ratio = 0;
  MT_RETURN_IF_ERROR(
      MeasureInterference(*stack, data, window_s, sink, &ratio));
  sink.Emit({{"scenario", "admin_interference"},
             {"check", "scraped_over_quiet_get_p99"},
             {"variant", kCadences[0].variant},
             {"value", ratio},
             {"target", kInterferenceTarget}});
  return Status::Ok();
}

}  // namespace

int RunAdminScenario(const CommonOptions& options, ResultSink& sink) {
  const Status s = Run(options, sink);
  if (!s.ok()) {
    sink.Progress("admin: failed: " + s.ToString());
    return 1;
  }
  return 0;
}

}  // namespace mooncake_tier::bench
