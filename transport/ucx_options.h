#pragma once

// Options of the UCX data plane: the client transport (UcxTransport) and
// the node side (UcxSegmentExporter). Plain values, copied at creation.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace mooncake_tier {

struct UcxTransportOptions {
  // UCX transports to use, as UCX_TLS spells them ("tcp", "shm,tcp",
  // "rc,ud"). Empty: whatever UCX_TLS in the environment says, else UCX's
  // default ("all"). Default: empty.
  std::string transports;

  // Longest any call (Write, Read, ReadSsd) waits for its operations. A
  // node that does not answer in time yields TIMEOUT, never a hang.
  // REQUIRES: > 0. Default: 5 s.
  std::chrono::milliseconds timeout{5000};

  // How long a node whose endpoint failed is answered UNAVAILABLE at once
  // before a fresh connection is tried. Default: 1 s.
  std::chrono::milliseconds failed_peer_retry{1000};

  // Copy with memcpy through a node's shared-memory segment when the node
  // is on this host and publishes one (docs/design/ucx-transport.md);
  // otherwise, or when mapping fails, UCX. Default: true.
  bool shared_memory = true;

  // Node segments kept mapped at most; the least recently used beyond it
  // is unmapped. REQUIRES: >= 1. Default: 64.
  size_t max_shared_mappings = 64;
};

struct UcxExporterOptions {
  // As UcxTransportOptions::transports. Default: empty.
  std::string transports;

  // Longest the node waits for its writes into a client's buffers and the
  // flush that follows. Default: 5 s.
  std::chrono::milliseconds timeout{5000};

  // Threads per exported segment that run SsdReadHandler::ServeSsdReads.
  // REQUIRES: >= 1. Default: 2.
  int ssd_threads = 2;

  // SSD read requests accepted but not yet being served, per segment. A
  // request beyond it is answered QUEUE_FULL. REQUIRES: >= 1. Default: 128.
  size_t ssd_queue_limit = 128;

  // Largest sum of buffer sizes one SSD read request may name: the node
  // stages the values in memory of this size. Default: 64 MiB.
  uint64_t max_ssd_request_bytes = uint64_t{64} << 20;

  // Offer a segment that lives in shared memory of this process
  // (SharedMemoryFile: a node's DRAM segment) to clients on this host, by
  // adding a locator to its remote key. Segments in other memory are
  // exported over UCX only, as are all segments when this is off.
  // Default: true.
  bool shared_memory = true;
};

}  // namespace mooncake_tier
