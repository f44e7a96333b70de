#include "bench/admin_routes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "admin_server/route_table.h"
#include "bench/bench_util.h"

namespace mooncake_tier::bench::admin_bench {
namespace {

constexpr size_t kWarmupRequests = 5;

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

}  // namespace

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
                  [](size_t) { return std::string("/api/v1/status"); }, nullptr,
                  [&facade](size_t) {
                    (void)facade.Stats();
                    return Status::Ok();
                  }});
  // Every page of a full walk (and more, wrapping), so early and late
  // cursors both count.
  runs.push_back({"GET /api/v1/groups?limit=1000",
                  std::max(Requests(200, scale), full_walk),
                  [&http_pages](size_t) { return http_pages.Path(); },
                  [&http_pages, &short_pages](const std::string& body) {
                    size_t groups = 0;
                    MT_RETURN_IF_ERROR(http_pages.Advance(body, &groups));
                    if (groups < kPageLimit && !http_pages.cursor().empty())
                      ++short_pages;
                    return Status::Ok();
                  },
                  [&facade, &engine_pages](size_t) -> Status {
                    MT_ASSIGN_OR_RETURN(
                        GroupPage page,
                        facade.ListGroups(std::nullopt, kPageLimit,
                                          engine_pages.cursor()));
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

}  // namespace mooncake_tier::bench::admin_bench
