#include "transport/ucx_segment_exporter.h"

#include <algorithm>
#include <utility>

namespace mooncake_tier {

Result<std::unique_ptr<UcxSegmentExporter>> UcxSegmentExporter::Create(
    UcxExporterOptions options) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<UcxContext> context,
                      UcxContext::Create(options.transports));
  return std::unique_ptr<UcxSegmentExporter>(
      new UcxSegmentExporter(std::move(options), std::move(context)));
}

UcxSegmentExporter::UcxSegmentExporter(UcxExporterOptions options,
                                       std::unique_ptr<UcxContext> context)
    : options_(std::move(options)), context_(std::move(context)) {}

UcxSegmentExporter::~UcxSegmentExporter() {
  std::vector<std::unique_ptr<UcxSegmentServer>> servers;
  {
    MutexLock lock(&mu_);
    servers = std::move(servers_);
    servers_.clear();
  }
  servers.clear();  // before context_ goes
}

Result<SegmentEndpoint> UcxSegmentExporter::Export(std::string_view name,
                                                   std::byte* base,
                                                   uint64_t size,
                                                   SsdReadHandler* ssd,
                                                   uint64_t staging_bytes) {
  if (base == nullptr || size == 0 || staging_bytes >= size) {
    return Status(ErrorReason::kInvalidArgument,
                  "cannot export an empty segment");
  }
  {
    MutexLock lock(&mu_);
    for (const auto& server : servers_) {
      if (server->name() == name) {
        return Status(
            ErrorReason::kObjectExists,
            "a segment is already exported as '" + std::string(name) + "'");
      }
    }
  }
  // Built outside the lock: it starts threads and registers memory.
  MT_ASSIGN_OR_RETURN(
      std::unique_ptr<UcxSegmentServer> server,
      UcxSegmentServer::Create(context_->handle(), options_, std::string(name),
                               base, size, ssd, staging_bytes));
  SegmentEndpoint endpoint = server->endpoint();
  MutexLock lock(&mu_);
  for (const auto& other : servers_) {
    if (other->name() == name) {  // lost a race with the same name
      return Status(
          ErrorReason::kObjectExists,
          "a segment is already exported as '" + std::string(name) + "'");
    }
  }
  servers_.push_back(std::move(server));
  return endpoint;
}

void UcxSegmentExporter::Withdraw(const SegmentEndpoint& endpoint) {
  std::unique_ptr<UcxSegmentServer> server;
  {
    MutexLock lock(&mu_);
    auto it =
        std::find_if(servers_.begin(), servers_.end(), [&](const auto& s) {
          return s->endpoint().transport_address == endpoint.transport_address;
        });
    if (it == servers_.end()) return;
    server = std::move(*it);
    servers_.erase(it);
  }
  server.reset();  // tears down outside the lock
}

Result<UcxSegmentServerStats> UcxSegmentExporter::StatsFor(
    std::string_view name) const {
  MutexLock lock(&mu_);
  for (const auto& server : servers_) {
    if (server->name() == name) return server->stats();
  }
  return Status(ErrorReason::kNodeNotFound,
                "no segment exported as '" + std::string(name) + "'");
}

}  // namespace mooncake_tier
