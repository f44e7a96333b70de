#pragma once

// What the client-side scenarios (datapath, metadata, groups_remote,
// sustained, trace) share to reach a store: start one (--spawn) or use the
// one at --master, connect the remote client and a metadata stub, find how
// much DRAM the store has, and name keys so that several benchmark
// processes against one store never collide.
//
// Thread safety: OpenRemoteStore and ProbeStoreDram run on the calling
// thread; the returned client and stub are thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/remote_scenarios.h"
#include "bench/result_sink.h"
#include "bench/spawned_store.h"
#include "mooncake_tier/client.h"
#include "mooncake_tier/remote_client.h"
#include "rpc/grpc_master_api.h"
#include "rpc/tls_credentials.h"

namespace mooncake_tier::bench {

// A store and the ways into it.
struct RemoteStore {
  std::unique_ptr<SpawnedStore> spawned;  // with --spawn only
  std::string master;                     // the master's host:port
  std::unique_ptr<Client> client;
  std::unique_ptr<rpc::GrpcMasterApi> api;  // metadata calls, gRPC only
  // The same calls, the hot ones over the master's control lane (when
  // --no-control-lane is not given).
  std::unique_ptr<rpc::GrpcMasterApi> lane_api;
  // What the stubs dial with over TLS; null: plaintext.
  std::shared_ptr<const rpc::TlsIdentity> tls;
};

// With remote.spawn, starts `mooncake-tierd standalone <spawn_flags>`
// (progress on `sink`); then connects a client (calls and transfers with
// a 10 s deadline, above the master's put wait) and a metadata stub.
// The error says which step failed.
Result<RemoteStore> OpenRemoteStore(const CommonOptions& common,
                                    const RemoteOptions& remote,
                                    std::vector<std::string> spawn_flags,
                                    ResultSink& sink);

// The client options the scenarios' clients share: `master`, calls and
// transfers with a 10 s deadline, and the cache and shared memory as
// `remote` says.
RemoteClientOptions BenchClientOptions(const RemoteOptions& remote,
                                       const std::string& master);

// The DRAM of the nodes that take a few small probe objects (put under
// `prefix`, removed again): the master places them on the emptier of two
// random nodes, so a handful finds every node of a small cluster.
// UNAVAILABLE, with the first put's error, when none landed.
Result<uint64_t> ProbeStoreDram(Client& client, rpc::GrpcMasterApi& api,
                                const std::string& prefix);

// "<scenario>-<pid>-<16 random hex digits>": a key prefix no other process
// (nor an earlier run of this one) uses.
std::string UniqueKeyPrefix(std::string_view scenario);

// The 1-minute load average, or 0 when /proc/loadavg cannot be read.
double LoadAverage();

}  // namespace mooncake_tier::bench
