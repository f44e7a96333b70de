#pragma once

// The data plane inside one process: segments are plain memory, transfers
// are memcpy, SSD reads are direct calls into the node. Standalone mode and
// tests use it; it follows the same contract as the fabric transports,
// including bounds checks and clear errors for a withdrawn node.
//
// Thread safety: thread-safe. Export/Withdraw take the registry lock
// exclusively; transfers share it, so a node cannot be withdrawn while a
// transfer into its segment runs.

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"
#include "transport/transport.h"

namespace mooncake_tier {

class InProcessTransport final : public Transport, public SegmentExporter {
 public:
  // Transport
  std::vector<Status> Write(std::span<const SegmentTransfer> ops) override;
  std::vector<Status> Read(std::span<const SegmentTransfer> ops) override;
  std::vector<Result<uint64_t>> ReadSsd(
      const SegmentEndpoint& node,
      std::span<const SsdReadTransfer> ops) override;

  // SegmentExporter: the transport address is "inproc://<name>". SSD reads
  // are direct calls into the handler, so the staging tail stays unused.
  Result<SegmentEndpoint> Export(std::string_view name, std::byte* base,
                                 uint64_t size, SsdReadHandler* ssd,
                                 uint64_t staging_bytes = 0) override;
  void Withdraw(const SegmentEndpoint& endpoint) override;

 private:
  struct Attached {
    std::byte* base;
    uint64_t size;
    SsdReadHandler* ssd;
  };
  template <bool kWrite>
  std::vector<Status> Transfer(std::span<const SegmentTransfer> ops);

  SharedMutex mu_;
  absl::flat_hash_map<std::string, Attached> nodes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier
