#pragma once

// The master's metrics: on every Collect() it reads the master's stats,
// nodes and DRAM by node (core/master_admin.h) and, when given, the master
// service's CallRecorder, and builds the families of the catalog's kMaster
// scope. Nothing is cached between scrapes: counters are the engine's own
// monotonic counters, read and reported as they are (docs/design/metrics.md
// says why).
//
// Thread safety: Collect() is const and thread-safe (the sources are);
// concurrent scrapes are independent.

#include <string>
#include <vector>

#include "core/master_admin.h"
#include "core/master_stats.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "rpc/call_recorder.h"


namespace mooncake_tier::metrics {

class MasterMetrics final : public prometheus::Collectable {
 public:
  // `master`, `clock` (the master's, for heartbeat ages), `rpc` (the
  // master service's calls) and `admin` (the admin API's requests, see
  // admin::AdminServer) must outlive this; the recorders may be null (no
  // samples).
  MasterMetrics(const MasterAdmin* master, const Clock* clock,
                const rpc::CallRecorder* rpc,
                const rpc::CallRecorder* admin = nullptr);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const MasterAdmin* const master_;
  const Clock* const clock_;
  const rpc::CallRecorder* const rpc_;
  const rpc::CallRecorder* const admin_;
};

}  // namespace mooncake_tier::metrics
