#pragma once

// An admin port's own metrics (the catalog's kEdge scope): connections open
// and accepted, idle connections closed, refusals by reason; and the
// process's TLS certificates (expiry, failed reloads). On every
// Collect() it reads plain figures from a callback, so this library does
// not depend on the HTTP edge: the daemon adapts admin::HttpEdgeStats with
// a lambda.
//
// Thread safety: Collect() is const and thread-safe if the source is.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace mooncake_tier::metrics {

struct EdgeSample {
  uint64_t connections_open = 0;
  uint64_t connections_accepted = 0;
  uint64_t idle_timeouts = 0;  // closed past the idle timeout
  uint64_t idle_evicted = 0;   // closed to make room at the limit
  // Refusals by reason ("unauthenticated", "body_too_large", ...).
  std::vector<std::pair<std::string, uint64_t>> refused;
  // The certificates the process serves or dials with, by plane ("admin",
  // "grpc", "grpc_client").
  struct Tls {
    std::string plane;
    int64_t not_after = 0;  // seconds since the epoch
    uint64_t reload_failures = 0;
  };
  std::vector<Tls> tls;
};

class EdgeMetrics final : public prometheus::Collectable {
 public:
  explicit EdgeMetrics(std::function<EdgeSample()> source)
      : source_(std::move(source)) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::function<EdgeSample()> source_;
};

}  // namespace mooncake_tier::metrics
