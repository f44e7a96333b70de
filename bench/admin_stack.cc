#include "bench/admin_stack.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <span>
#include <utility>

#include "admin_server/route_table.h"
#include "base/clock.h"
#include "bench/bench_util.h"

namespace mooncake_tier::bench::admin_bench {
namespace {

const ClientId kLoader = "bench-admin-loader";

}  // namespace

double MsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start)
      .count();
}

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
    const uint64_t end = first < p.grouped()
                             ? std::min(first + kLoadKeysPerCall, p.grouped())
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
  MT_ASSIGN_OR_RETURN(stack->cluster,
                      EmbeddedCluster::Start(std::move(options)));
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
  MT_ASSIGN_OR_RETURN(stack->server, admin::AdminServer::Start(
                                         server_options, stack->facade.get(),
                                         [s] { return s->RenderMetrics(); },
                                         stack->requests.get()));
  stack->server->SetReady(true);
  return stack;
}

HttpProbe::HttpProbe(uint16_t port) : client_("127.0.0.1", port) {
  client_.set_url_encode(false);  // paths are encoded here
  client_.set_keep_alive(true);
  client_.set_read_timeout(60, 0);
  // As Prometheus' and curl's clients do; it cannot help a server that
  // sends one response in two small writes with Nagle on.
  client_.set_tcp_nodelay(true);
}

Result<double> HttpProbe::Get(const std::string& path, std::string* body) {
  const auto start = SteadyClock::now();
  httplib::Result res = client_.Get(path);
  const double ms = MsSince(start);
  if (!res) {
    return Status(ErrorReason::kUnavailable,
                  "GET " + path + ": no response (httplib error " +
                      std::to_string(static_cast<int>(res.error())) + ")");
  }
  if (res->status != 200) {
    return Status(ErrorReason::kInternal, "GET " + path + ": HTTP " +
                                              std::to_string(res->status) +
                                              ": " + res->body.substr(0, 200));
  }
  *body = std::move(res->body);
  return ms;
}

std::string PageWalker::Path() const {
  std::string path = "/api/v1/groups?limit=" + std::to_string(kPageLimit);
  if (!cursor_.empty()) path += "&cursor=" + admin::PercentEncode(cursor_);
  return path;
}

Status PageWalker::Advance(const std::string& body, size_t* groups) {
  const nlohmann::json page = nlohmann::json::parse(body, nullptr, false);
  if (!page.is_object() || !page.contains("groups") ||
      !page["next_cursor"].is_string()) {
    return Status(ErrorReason::kInternal, "a group page without groups");
  }
  *groups = page["groups"].size();
  Next(page["next_cursor"].get<std::string>());
  return Status::Ok();
}

void PageWalker::Next(std::string cursor) {
  cursor_ = std::move(cursor);
  if (cursor_.empty()) ++walks_;
}

}  // namespace mooncake_tier::bench::admin_bench
