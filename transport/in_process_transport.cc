#include "transport/in_process_transport.h"

#include <cstring>

namespace mooncake_tier {

template <bool kWrite>
std::vector<Status> InProcessTransport::Transfer(
    std::span<const SegmentTransfer> ops) {
  std::vector<Status> out;
  out.reserve(ops.size());
  ReaderMutexLock lock(&mu_);
  for (const SegmentTransfer& op : ops) {
    auto it = op.segment == nullptr
                  ? nodes_.end()
                  : nodes_.find(op.segment->transport_address);
    if (it == nodes_.end()) {
      out.emplace_back(ErrorReason::kUnavailable,
                       "node segment is not reachable (node gone?)");
      continue;
    }
    const Attached& node = it->second;
    const uint64_t len = op.local.size();
    if (op.offset > node.size || len > node.size - op.offset) {
      out.emplace_back(ErrorReason::kInvalidArgument,
                       "transfer outside the node's segment");
      continue;
    }
    if constexpr (kWrite) {
      std::memcpy(node.base + op.offset, op.local.data(), len);
    } else {
      std::memcpy(op.local.data(), node.base + op.offset, len);
    }
    out.emplace_back();
  }
  return out;
}

std::vector<Status> InProcessTransport::Write(
    std::span<const SegmentTransfer> ops) {
  return Transfer<true>(ops);
}

std::vector<Status> InProcessTransport::Read(
    std::span<const SegmentTransfer> ops) {
  return Transfer<false>(ops);
}

std::vector<Result<uint64_t>> InProcessTransport::ReadSsd(
    const SegmentEndpoint& node, std::span<const SsdReadTransfer> ops) {
  ReaderMutexLock lock(&mu_);
  auto it = nodes_.find(node.transport_address);
  if (it == nodes_.end() || it->second.ssd == nullptr) {
    return std::vector<Result<uint64_t>>(
        ops.size(), Status(ErrorReason::kUnavailable,
                           "node does not serve SSD reads (node gone?)"));
  }
  return it->second.ssd->ServeSsdReads(ops);
}

Result<SegmentEndpoint> InProcessTransport::Export(std::string_view name,
                                                   std::byte* base,
                                                   uint64_t size,
                                                   SsdReadHandler* ssd,
                                                   uint64_t staging_bytes) {
  if (staging_bytes >= size) {
    return Status(ErrorReason::kInvalidArgument,
                  "the staging area leaves no segment to export");
  }
  SegmentEndpoint endpoint;
  endpoint.transport_address = "inproc://" + std::string(name);
  endpoint.base = reinterpret_cast<uint64_t>(base);
  endpoint.size = size - staging_bytes;
  WriterMutexLock lock(&mu_);
  if (!nodes_
           .try_emplace(endpoint.transport_address,
                        Attached{base, endpoint.size, ssd})
           .second) {
    return Status(
        ErrorReason::kObjectExists,
        "a segment is already exported as " + endpoint.transport_address);
  }
  return endpoint;
}

void InProcessTransport::Withdraw(const SegmentEndpoint& endpoint) {
  WriterMutexLock lock(&mu_);
  nodes_.erase(endpoint.transport_address);
}

}  // namespace mooncake_tier
