#include "metrics/edge_metrics.h"

#include "metrics/family_set.h"

namespace mooncake_tier::metrics {

std::vector<prometheus::MetricFamily> EdgeMetrics::Collect() const {
  FamilySet families(MetricScope::kEdge);
  const EdgeSample sample = source_ ? source_() : EdgeSample{};
  using M = MetricId;
  families.Add(M::kAdminConnections,
               static_cast<double>(sample.connections_open));
  families.Add(M::kAdminConnectionsTotal,
               static_cast<double>(sample.connections_accepted));
  families.Add(M::kAdminConnectionsClosedTotal,
               static_cast<double>(sample.idle_timeouts), {"idle_timeout"});
  families.Add(M::kAdminConnectionsClosedTotal,
               static_cast<double>(sample.idle_evicted), {"evicted"});
  for (const auto& [reason, count] : sample.refused) {
    families.Add(M::kAdminRefusedTotal, static_cast<double>(count), {reason});
  }
  for (const EdgeSample::Tls& tls : sample.tls) {
    families.Add(M::kTlsCertificateExpiry, static_cast<double>(tls.not_after),
                 {tls.plane});
    families.Add(M::kTlsReloadFailuresTotal,
                 static_cast<double>(tls.reload_failures), {tls.plane});
  }
  return std::move(families).Take();
}

}  // namespace mooncake_tier::metrics
