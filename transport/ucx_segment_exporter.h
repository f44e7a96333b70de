#pragma once

// The node side of the UCX data plane: SegmentExporter over UCX.
//
// Each exported segment gets its own UCP worker (UcxSegmentServer), so its
// transport address is that worker's address and Withdraw tears the worker
// down: clients' endpoints to it fail and later transfers get UNAVAILABLE
// or TIMEOUT, never a silent read of memory the node no longer offers. The
// SegmentEndpoint published is {worker address, segment base, size, packed
// remote key}.
//
// Thread safety: thread-safe. Export and Withdraw may run concurrently; a
// Withdraw waits for SSD reads of that segment already being served.

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "transport/transport.h"
#include "transport/ucx_context.h"
#include "transport/ucx_options.h"
#include "transport/ucx_segment_server.h"

namespace mooncake_tier {

class UcxSegmentExporter final : public SegmentExporter {
 public:
  static Result<std::unique_ptr<UcxSegmentExporter>> Create(
      UcxExporterOptions options = {});
  // Withdraws every segment still exported.
  ~UcxSegmentExporter() override;

  // INVALID_ARGUMENT for an empty segment or one the staging area fills,
  // OBJECT_EXISTS for a name already exported. The segment and handler
  // must stay valid until Withdraw. The staging tail serves staged SSD
  // reads of same-host clients when the segment is shared
  // (UcxSegmentServer).
  Result<SegmentEndpoint> Export(std::string_view name, std::byte* base,
                                 uint64_t size, SsdReadHandler* ssd,
                                 uint64_t staging_bytes = 0) override;
  // Stops serving the segment published as `endpoint`; unknown endpoints
  // are ignored.
  void Withdraw(const SegmentEndpoint& endpoint) override;

  // Counters of the segment exported under `name`; NODE_NOT_FOUND if none.
  Result<UcxSegmentServerStats> StatsFor(std::string_view name) const;

 private:
  UcxSegmentExporter(UcxExporterOptions options,
                     std::unique_ptr<UcxContext> context);

  const UcxExporterOptions options_;
  // Outlives every server (destroyed last).
  const std::unique_ptr<UcxContext> context_;
  mutable Mutex mu_;
  std::vector<std::unique_ptr<UcxSegmentServer>> servers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier
