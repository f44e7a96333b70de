// The remote client: a StoreClient owning a GrpcMasterApi and a
// UcxTransport.

#include "mooncake_tier/remote_client.h"

#include <utility>

#include "client/store_client.h"
#include "rpc/call_authorizer.h"
#include "rpc/grpc_master_api.h"
#include "rpc/tls_credentials.h"
#include "transport/ucx_transport.h"

namespace mooncake_tier {
namespace {

// A master that answers NODE_NOT_FOUND for the node id nobody has is up.
Status ProbeMaster(rpc::GrpcMasterApi& api, const std::string& address) {
  Result<NodeView> probe = api.GetNode(kNoNode);
  if (probe.ok() || probe.status().reason() == ErrorReason::kNodeNotFound) {
    return Status();
  }
  if (probe.status().reason() == ErrorReason::kUnauthenticated) {
    return Status(ErrorReason::kUnauthenticated,
                  "the master at " + address +
                      " authenticates its callers and refused this client "
                      "(give it the client token or certificate): " +
                      probe.status().message());
  }
  return Status(probe.status().reason(), "cannot reach the master at " +
                                             address + ": " +
                                             probe.status().message());
}

}  // namespace

Result<std::unique_ptr<Client>> ConnectRemote(
    const RemoteClientOptions& options) {
  if (options.master.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "the master address is empty (expected host:port)");
  }
  if (options.rpc_timeout.count() <= 0 ||
      options.transfer_timeout.count() <= 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "rpc_timeout and transfer_timeout must be positive");
  }
  if (options.location_cache && options.location_cache_entries == 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "location_cache_entries must be positive (or turn "
                  "location_cache off)");
  }
  rpc::GrpcChannelOptions channel;
  channel.target = options.master;
  channel.deadline = options.rpc_timeout;
  channel.token = options.token;
  if (channel.token.empty() && !options.token_file.empty()) {
    MT_ASSIGN_OR_RETURN(std::vector<std::string> tokens,
                        rpc::ReadTokenLines(options.token_file));
    channel.token = tokens.front();
  }
  if (!options.tls_ca.empty()) {
    MT_ASSIGN_OR_RETURN(
        channel.tls,
        rpc::TlsIdentity::Create(
            {.cert = options.tls_cert,
             .key = options.tls_key,
             .ca = options.tls_ca},
            rpc::kTlsClient, {rpc::TlsRole::kClient, rpc::TlsRole::kAdmin}));
    channel.tls_server_name = options.tls_server_name;
  } else if (!options.tls_cert.empty() || !options.tls_key.empty() ||
             !options.tls_server_name.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "tls_cert, tls_key and tls_server_name need tls_ca");
  }
  rpc::ControlLaneOptions lane;
  lane.enabled = options.control_lane;
  lane.transports = options.ucx_transports;
  MT_ASSIGN_OR_RETURN(std::unique_ptr<rpc::GrpcMasterApi> api,
                      rpc::GrpcMasterApi::Create(channel, lane));
  if (options.probe_master) {
    MT_RETURN_IF_ERROR(ProbeMaster(*api, options.master));
  }
  UcxTransportOptions transport_options;
  transport_options.transports = options.ucx_transports;
  transport_options.timeout = options.transfer_timeout;
  transport_options.shared_memory = options.shared_memory;
  MT_ASSIGN_OR_RETURN(std::unique_ptr<UcxTransport> transport,
                      UcxTransport::Create(transport_options));
  StoreClientOptions client_options;
  client_options.location_cache = options.location_cache;
  client_options.location_cache_entries = options.location_cache_entries;
  return std::unique_ptr<Client>(
      new StoreClient(std::move(api), std::move(transport), client_options));
}

}  // namespace mooncake_tier
