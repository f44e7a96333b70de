#pragma once

// How a stub (GrpcMasterApi, GrpcMasterLink) reaches the master.

#include <chrono>
#include <string>

#include "base/clock.h"
#include "rpc/call_recorder.h"

namespace mooncake_tier::rpc {

struct GrpcChannelOptions {
  // The master's "host:port", or the masters' of a high-availability
  // cluster, comma-separated ("a:50051,b:50051,c:50051"): calls follow the
  // leader (rpc/master_stub.h). REQUIRES: 1-16 non-empty entries.
  std::string target;
  // Every call fails with TIMEOUT (or UNAVAILABLE, if the master is known
  // to be down) when it has not completed within this time; a call never
  // blocks longer. REQUIRES: > 0. Default: 5 s.
  Duration deadline = std::chrono::seconds(5);
  // Longest wait between attempts to reconnect to a master that is down.
  // gRPC's own default (120 s) would keep a node from reaching a restarted
  // master for longer than node_ttl. Default: 1 s.
  Duration max_reconnect_backoff = std::chrono::seconds(1);
  // Largest message sent or received, in bytes. Default: 128 MiB.
  int max_message_bytes = 128 << 20;
  // Records every call. Null: the stub keeps its own (see recorder()).
  // Must outlive the stub. Default: null.
  CallRecorder* recorder = nullptr;
};

}  // namespace mooncake_tier::rpc
