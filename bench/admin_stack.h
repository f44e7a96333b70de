#pragma once

// What the two phases of the "admin" scenario (admin_scenario.h) share: the
// store's shape, the population of keys put through the master, the DRAM
// data set the data path reads, the Stack (an in-process store with an
// AdminServer and MasterMetrics in front of it and a data-path client), and
// the HTTP helpers (one keep-alive connection; a walker over the group
// listing's pages).
//
// Thread safety: plain values and functions; an HttpProbe or a PageWalker
// is used by one thread at a time. The Stack's members are as thread-safe
// as their own classes.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "admin_server/admin_server.h"
#include "admin_server/master_admin_facade.h"
#include "bench/result_sink.h"
#include "client/embedded_cluster.h"
#include "core/master.h"
#include "httplib.h"
#include "metrics/master_metrics.h"
#include "metrics/text_exposition.h"
#include "mooncake_tier/client.h"
#include "rpc/call_recorder.h"

namespace mooncake_tier::bench::admin_bench {

using SteadyClock = std::chrono::steady_clock;

// ---- Shape of the store ----

constexpr uint32_t kGroupSize = 8;
// Share of the loaded objects that are group members; the rest stand alone.
constexpr double kGroupedShare = 0.8;
constexpr uint64_t kMinObjects = 1000;
// The loaded objects are metadata only: their bytes are never written, so
// the node's DRAM segment (mapped without reserve) stays untouched.
constexpr uint64_t kLoadObjectBytes = 4096;
constexpr uint64_t kLoadKeysPerCall = 64;  // 8 groups, or 64 loose keys

// DRAM objects the data path reads: 128 groups of 8 x 64 KiB (64 MiB).
constexpr uint64_t kDataObjectBytes = 64 << 10;
constexpr uint64_t kDataGroups = 128;

// Groups per page of the group listing the routes and the scraper read.
constexpr size_t kPageLimit = 1000;

// Milliseconds since `start`.
double MsSince(SteadyClock::time_point start);

// ---- The store ----

struct Population {
  std::vector<std::string> group_ids;
  // Member i of group g at g * kGroupSize + i, then the loose objects.
  std::vector<std::string> keys;
  uint64_t grouped() const { return group_ids.size() * kGroupSize; }
};

// `objects` keys: 80% of them (rounded to whole groups) in groups of
// kGroupSize, the rest loose.
Population MakePopulation(uint64_t objects);

// Puts every object of `p` through the master's API (PutStart + PutEnd, a
// batch per call, each group whole within one call).
Status Load(Master& master, const Population& p, ResultSink& sink);

// The DRAM objects the data path reads, put through the client in groups.
struct DataSet {
  std::vector<std::string> keys;
};

Result<DataSet> PutDataSet(Client& client);

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

// A store sized for `objects` loaded objects and the data set, with the
// admin server on 127.0.0.1 (port 0), ready.
Result<std::unique_ptr<Stack>> StartStack(uint64_t objects);

// ---- HTTP ----

// One keep-alive connection to the admin server; a GET that does not
// answer 200 is an error.
class HttpProbe {
 public:
  explicit HttpProbe(uint16_t port);

  // Milliseconds from sending the request to holding the whole body.
  Result<double> Get(const std::string& path, std::string* body);

 private:
  httplib::Client client_;
};

// Walks the group listing page by page, restarting after the last.
class PageWalker {
 public:
  std::string Path() const;
  const std::string& cursor() const { return cursor_; }
  // Reads next_cursor from a page's body.
  Status Advance(const std::string& body, size_t* groups);
  void Next(std::string cursor);
  uint64_t walks() const { return walks_; }

 private:
  std::string cursor_;
  uint64_t walks_ = 0;
};

}  // namespace mooncake_tier::bench::admin_bench
