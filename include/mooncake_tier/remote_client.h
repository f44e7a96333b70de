#pragma once

// The client of the distributed store: metadata over gRPC to the master,
// bytes over UCX straight into and out of the storage nodes' DRAM segments
// (one-sided put/get; RDMA on a fabric, TCP otherwise; on the node's own
// host, a memcpy through the node's shared-memory segment).
// SSD-tier reads go through the node holding the copy, which writes the
// value into the caller's buffer. Node endpoints and remote keys are cached;
// a batch is issued per node and waited for once.
//
//   mooncake_tier::RemoteClientOptions options;
//   options.master = "10.0.0.5:50051";
//   auto client = mooncake_tier::ConnectRemote(options);
//   if (!client.ok()) { /* client.status().ToString() says why */ }
//   (*client)->Put("layer0/block42", bytes);
//
// Every call has a deadline: an unreachable master or node yields
// UNAVAILABLE or TIMEOUT within it, never a hang.
//
// Thread safety: the client may be used from many threads at once.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "mooncake_tier/client.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

struct RemoteClientOptions {
  // The master's gRPC address, "host:port". Default: "127.0.0.1:50051".
  std::string master = "127.0.0.1:50051";
  // Deadline of every call to the master. A put into a full store may wait
  // at the master for room (its put_wait_timeout, 5 s by default) and is
  // answered NO_SPACE a little before this deadline: set it above the wait
  // you accept. REQUIRES: > 0. Default: 5 s.
  std::chrono::milliseconds rpc_timeout{5000};
  // Deadline of every data transfer with a node. REQUIRES: > 0.
  // Default: 5 s.
  std::chrono::milliseconds transfer_timeout{5000};
  // UCX transports, as UCX_TLS spells them ("rc,ud", "shm,tcp"). Empty: the
  // UCX_TLS environment variable, else UCX's choice. Default: empty.
  std::string ucx_transports;
  // Check at Connect that the master answers. Default: true.
  bool probe_master = true;
  // Copy with memcpy through the DRAM segments of nodes on this host that
  // offer them as shared memory, instead of UCX (which uses TCP between
  // processes of one host). Falls back to UCX whenever a segment cannot be
  // mapped. Default: true.
  bool shared_memory = true;
  // Read an object again from the DRAM location the master gave for it, with
  // no call to the master, while the master vouches for that location (its
  // location grant, 2 s by default): a repeated read of a hot object costs
  // only its copy. Never returns another object's bytes; after another
  // client removes or rewrites a key, this one may read the earlier value
  // until its grant ends (docs/design/location-cache.md). Default: true.
  bool location_cache = true;
  // Locations the cache holds, at most. REQUIRES: > 0. Default: 65536.
  size_t location_cache_entries = 65536;
  // Send exists, replica-list and prefix-probe calls over
  // the master's UCX control lane (on ucx_transports) when it offers one,
  // instead of gRPC: tens of microseconds instead of about a hundred.
  // Falls back to gRPC whenever the lane is missing or fails
  // (docs/design/control-path.md). Default: true.
  bool control_lane = true;
  // The client token of a master that authenticates calls (mooncake-tierd
  // --client-token-file), sent with every call; a master that does not
  // ignores it. Empty: none. Default: empty.
  std::string token;
  // A file whose first token (blank lines and '#' comments skipped) is
  // `token`, when `token` is empty. Default: empty.
  std::string token_file;
  // TLS to a master that serves it (mooncake-tierd --tls-cert): the PEM
  // bundle of the CA certificates the master's certificate must lead to;
  // the master's certificate must also name the master role and the host
  // dialed (or tls_server_name). Empty: plaintext. Default: empty.
  std::string tls_ca;
  // This client's PEM certificate chain and key (URI name
  // spiffe://mooncake-tier/client or .../admin), for a master that asks
  // for client certificates; without them the token proves the role.
  // Default: empty.
  std::string tls_cert;
  std::string tls_key;
  // The name the master's certificate must carry when it is not the host
  // of `master`. Default: empty.
  std::string tls_server_name;
};

// A client of the store whose master is at options.master.
// INVALID_ARGUMENT for bad options; UNAVAILABLE or TIMEOUT (naming the
// address) when probe_master is set and the master does not answer within
// rpc_timeout; the UCX error when the data plane cannot start.
Result<std::unique_ptr<Client>> ConnectRemote(
    const RemoteClientOptions& options);

}  // namespace mooncake_tier
