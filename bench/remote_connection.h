#pragma once

// A client scenario's way into a store: the store (spawned or at
// --master), its client and metadata stub, the DRAM it has, and the key
// prefix this process writes under.
//
// Thread safety: Connect runs on the calling thread; the client and stub
// it returns are thread-safe.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/remote_scenarios.h"
#include "bench/remote_store.h"
#include "bench/result_sink.h"

namespace mooncake_tier::bench {

// A store and the ways into it.
struct Connection {
  RemoteStore store;
  Client* client = nullptr;           // store.client
  rpc::GrpcMasterApi* api = nullptr;  // store.api
  uint64_t dram_bytes = 0;            // of all nodes
  std::string prefix;    // unique to this process: every key starts with it
  RemoteOptions remote;  // how it was reached
};

// Opens the store (OpenRemoteStore, with `spawn_flags` for a spawned one),
// finds its DRAM and picks the key prefix; progress lines go to `sink`.
Result<Connection> Connect(const CommonOptions& common,
                           const RemoteOptions& remote,
                           std::vector<std::string> spawn_flags,
                           std::string_view scenario, ResultSink& sink);

}  // namespace mooncake_tier::bench
