#include "bench/admin_scenario.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "bench/admin_interference.h"
#include "bench/admin_routes.h"
#include "bench/admin_siege.h"
#include "bench/admin_stack.h"
#include "core/master.h"

namespace mooncake_tier::bench {
namespace {

using namespace admin_bench;  // NOLINT(build/namespaces): the phases

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
  MT_RETURN_IF_ERROR(MeasureInterference(*stack, data, window_s, sink, &ratio));
  sink.Emit({{"scenario", "admin_interference"},
             {"check", "scraped_over_quiet_get_p99"},
             {"variant", kCadences[0].variant},
             {"value", ratio},
             {"target", kInterferenceTarget}});

  SiegeOptions siege;
  siege.requests =
      std::max<size_t>(50, std::llround(400 * std::min(options.scale, 1.0)));
  double siege_p99 = 0;
  MT_RETURN_IF_ERROR(
      MeasureSiege(stack->server->port(), siege, sink, &siege_p99));
  sink.Emit({{"scenario", "admin_siege"},
             {"check", "besieged_health_metrics_p99_ms"},
             {"value", siege_p99},
             {"target", kSiegeTargetMs}});
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
