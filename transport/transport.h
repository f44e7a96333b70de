#pragma once

// The data plane: how a client moves bytes to and from the nodes. DRAM
// replicas are written and read one-sided (RDMA put/get on a fabric, memcpy
// in process); SSD replicas are read by asking the holding node, which
// writes the value into the client's buffer (or, on the same host, stages
// it in its segment for the client to copy).
//
// Implementations: InProcessTransport (standalone mode, tests); a UCX
// transport for the distributed store.
//
// Thread safety: implementations are safe to call from many threads.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mooncake_tier/status.h"

namespace mooncake_tier {

// How to reach a node's DRAM segment, as the node published it.
struct SegmentEndpoint {
  std::string transport_address;  // opaque: a worker address on a fabric
  uint64_t base = 0;              // segment address on the node
  uint64_t size = 0;
  std::string remote_key;  // opaque: packed remote key on a fabric
};

// One transfer between `local` and [offset, offset + local.size()) of a
// node's segment.
struct SegmentTransfer {
  const SegmentEndpoint* segment = nullptr;
  uint64_t offset = 0;
  std::span<std::byte> local;
};

// One SSD-tier read: the node writes the value of `key` into `buffer`.
struct SsdReadTransfer {
  std::string_view key;
  std::span<std::byte> buffer;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // local -> remote, one status per transfer.
  virtual std::vector<Status> Write(std::span<const SegmentTransfer> ops) = 0;
  // remote -> local, one status per transfer.
  virtual std::vector<Status> Read(std::span<const SegmentTransfer> ops) = 0;
  // SSD-tier reads from the node that published `node` (its segment
  // endpoint: the transport address says where to ask, the rest lets a
  // same-host transport reach the node's segment); each result is the
  // value size.
  virtual std::vector<Result<uint64_t>> ReadSsd(
      const SegmentEndpoint& node, std::span<const SsdReadTransfer> ops) = 0;

  // Registers caller memory once for many transfers (Client::RegisterBuffer).
  // Transports that need no registration accept any non-empty buffer.
  // INVALID_ARGUMENT for an empty buffer (or, where registration is real,
  // one overlapping a registered buffer).
  virtual Status RegisterBuffer(std::span<std::byte> buffer);
  // INVALID_ARGUMENT where registration is real and `buffer` is not exactly
  // a registered buffer.
  virtual Status UnregisterBuffer(std::span<std::byte> buffer);
};

// What a node serves to the data plane besides its DRAM: SSD-tier reads.
class SsdReadHandler {
 public:
  virtual ~SsdReadHandler() = default;
  virtual std::vector<Result<uint64_t>> ServeSsdReads(
      std::span<const SsdReadTransfer> ops) = 0;
};

// The node side of a transport: makes a segment and its SSD reads
// reachable and says how clients find them.
class SegmentExporter {
 public:
  virtual ~SegmentExporter() = default;
  // Publishes [base, base + size) under `name`. The last `staging_bytes`
  // of it are the node's own SSD-read staging area, not part of the
  // published segment: the endpoint's size is size - staging_bytes, and
  // clients never address that tail (a transport may stage same-host SSD
  // reads there; others ignore it). The handler and the whole range must
  // stay valid until Withdraw. INVALID_ARGUMENT when staging_bytes leaves
  // no published segment.
  virtual Result<SegmentEndpoint> Export(std::string_view name, std::byte* base,
                                         uint64_t size, SsdReadHandler* ssd,
                                         uint64_t staging_bytes = 0) = 0;
  virtual void Withdraw(const SegmentEndpoint& endpoint) = 0;
};

}  // namespace mooncake_tier
