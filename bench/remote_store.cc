#include "bench/remote_store.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>

#include "absl/container/flat_hash_set.h"
#include "mooncake_tier/remote_client.h"

namespace mooncake_tier::bench {

RemoteClientOptions BenchClientOptions(const RemoteOptions& remote,
                                       const std::string& master) {
  RemoteClientOptions options;
  options.master = master;
  options.rpc_timeout = std::chrono::seconds(10);
  options.transfer_timeout = std::chrono::seconds(10);
  options.location_cache = remote.location_cache;
  options.shared_memory = remote.shared_memory;
  options.control_lane = remote.control_lane;
  options.tls_ca = remote.tls_ca;
  options.tls_cert = remote.tls_cert;
  options.tls_key = remote.tls_key;
  return options;
}

Result<RemoteStore> OpenRemoteStore(const CommonOptions& common,
                                    const RemoteOptions& remote,
                                    std::vector<std::string> spawn_flags,
                                    ResultSink& sink) {
  RemoteStore store;
  store.master = remote.master;
  if (remote.spawn) {
    if (!remote.shared_memory) spawn_flags.push_back("--no-shared-memory");
    spawn_flags.insert(spawn_flags.end(), remote.tls_spawn_flags.begin(),
                       remote.tls_spawn_flags.end());
    std::string line = "starting " + remote.tierd_path + " standalone";
    for (const std::string& flag : spawn_flags) line += " " + flag;
    sink.Progress(line);
    SpawnOptions spawn{remote.tierd_path, common.scratch_dir,
                       std::move(spawn_flags)};
    Result<std::unique_ptr<SpawnedStore>> started = SpawnedStore::Start(spawn);
    if (!started.ok()) {
      return Status(started.status().reason(),
                    "could not start the store: " + started.status().message());
    }
    store.spawned = std::move(started).value();
    store.master = store.spawned->master();
  }
  Result<std::unique_ptr<Client>> client =
      ConnectRemote(BenchClientOptions(remote, store.master));
  if (!client.ok()) {
    return Status(client.status().reason(),
                  "could not connect to the master at " + store.master + ": " +
                      client.status().message());
  }
  store.client = std::move(client).value();
  rpc::GrpcChannelOptions channel;
  channel.target = store.master;
  if (!remote.tls_ca.empty()) {
    MT_ASSIGN_OR_RETURN(
        store.tls,
        rpc::TlsIdentity::Create(
            {.cert = remote.tls_cert,
             .key = remote.tls_key,
             .ca = remote.tls_ca},
            rpc::kTlsClient, {rpc::TlsRole::kClient, rpc::TlsRole::kAdmin}));
    channel.tls = store.tls;
  }
  MT_ASSIGN_OR_RETURN(store.api, rpc::GrpcMasterApi::Create(channel));
  rpc::ControlLaneOptions lane;
  lane.enabled = remote.control_lane;
  MT_ASSIGN_OR_RETURN(store.lane_api,
                      rpc::GrpcMasterApi::Create(channel, lane));
  return store;
}

Result<uint64_t> ProbeStoreDram(Client& client, rpc::GrpcMasterApi& api,
                                const std::string& prefix) {
  constexpr int kProbes = 32;
  const std::vector<std::byte> value(4096, std::byte{0x5A});
  std::vector<std::string> keys;
  for (int i = 0; i < kProbes; ++i) {
    keys.push_back(prefix + "/probe-" + std::to_string(i));
  }
  std::vector<PutItem> items;
  for (const std::string& key : keys) items.push_back({key, value, {}});
  Status failure;
  for (Status& put : client.PutBatch(items)) {
    if (!put.ok() && failure.ok()) failure = std::move(put);
  }
  absl::flat_hash_set<NodeId> nodes;
  for (Result<ObjectReplicas>& list : api.GetReplicaList(keys)) {
    if (!list.ok()) continue;
    for (const ReplicaDescriptor& r : list->replicas) nodes.insert(r.node);
  }
  client.RemoveBatch(keys, RemoveOptions{true});
  if (nodes.empty()) {
    return Status(
        ErrorReason::kUnavailable,
        "no probe object landed on a node" +
            (failure.ok() ? std::string(" (does the store have one?)")
                          : "; the first put said: " + failure.ToString()));
  }
  uint64_t total = 0;
  for (const NodeId id : nodes) {
    MT_ASSIGN_OR_RETURN(const NodeView node, api.GetNode(id));
    total += node.spec.dram_size;
  }
  return total;
}

std::string UniqueKeyPrefix(std::string_view scenario) {
  std::random_device device;
  const uint64_t random = (uint64_t{device()} << 32) | device();
  char hex[20];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(random));
  return std::string(scenario) + "-" + std::to_string(getpid()) + "-" + hex;
}

double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double one_minute = 0;
  return (in >> one_minute) ? one_minute : 0;
}

}  // namespace mooncake_tier::bench
