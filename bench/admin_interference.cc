#include "bench/admin_interference.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "bench/bench_util.h"

namespace mooncake_tier::bench::admin_bench {
namespace {

constexpr int kReaderThreads = 2;
// Quiet and scraped windows alternate in pairs, the order flipping every
// pair (quiet-scraped, scraped-quiet, ...), so a drift of the shared
// machine's load over the run weighs on both kinds alike.
constexpr int kWindowPairs = 4;
constexpr auto kReaderWarmup = milliseconds(500);

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

}  // namespace

Status MeasureInterference(Stack& stack, const DataSet& data, double window_s,
                           ResultSink& sink, double* realistic_ratio) {
  constexpr int kWindowsPerCadence = 2 * kWindowPairs;
  const int windows =
      kWindowsPerCadence * static_cast<int>(std::size(kCadences));
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
    sink.Emit(
        {{"scenario", "admin_interference"},
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
         {"gets_per_s_scraped", Ratio(scraped.size(), kWindowPairs * window_s)},
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

}  // namespace mooncake_tier::bench::admin_bench
