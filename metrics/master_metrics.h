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

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/master_admin.h"
#include "core/master_stats.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "rpc/call_recorder.h"

namespace mooncake_tier::metrics {

// This master's place in a high-availability cluster.
struct MasterRoleSample {
  bool leader = true;
  uint64_t term = 0;
  uint64_t failovers = 0;
  bool in_sync = true;
  bool recovering = false;
};

class MasterMetrics final : public prometheus::Collectable {
 public:
  // The master serving now; null when none does (a standby).
  using MasterSource = std::function<std::shared_ptr<const MasterAdmin>()>;

  // `master`, `clock` (the master's, for heartbeat ages), `rpc` (the
  // master service's calls) and `admin` (the admin API's requests, see
  // admin::AdminServer) must outlive this; the recorders may be null (no
  // samples).
  MasterMetrics(const MasterAdmin* master, const Clock* clock,
                const rpc::CallRecorder* rpc,
                const rpc::CallRecorder* admin = nullptr);
  // A master of a high-availability cluster: the engine's families come
  // from whichever master `master` gives at each scrape (none on a
  // standby), the role families from `role`.
  MasterMetrics(MasterSource master, std::function<MasterRoleSample()> role,
                const Clock* clock, const rpc::CallRecorder* rpc,
                const rpc::CallRecorder* admin = nullptr);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const MasterSource master_;
  const std::function<MasterRoleSample()> role_;
  const Clock* const clock_;
  const rpc::CallRecorder* const rpc_;
  const rpc::CallRecorder* const admin_;
};

}  // namespace mooncake_tier::metrics
