#pragma once

// How a stub (GrpcMasterApi, GrpcMasterLink) reaches the master.

#include <chrono>
#include <memory>
#include <string>

#include "base/clock.h"
#include "rpc/call_recorder.h"

namespace mooncake_tier::rpc {

class TlsIdentity;

// The shortest probe interval a stub may use; masters (RpcServer) accept
// probes down to half of it and close a connection that probes faster.
inline constexpr Duration kMinKeepalive = std::chrono::milliseconds(500);

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
  // With several master addresses: how often the connection to a master is
  // probed (an HTTP/2 ping), during calls and between them. A master that
  // leaves a probe unanswered for twice this is taken as gone: the calls on
  // that connection fail UNAVAILABLE at once and follow the leader to
  // another address, and a new connection attempt gets as long. This is
  // what finds a master that is paused, stalled or cut off without closing
  // its connections (a killed one closes them, which calls see at once);
  // without it each call to it would wait out its deadline and the next
  // would go to it again. A single address is not probed: there is nowhere
  // else to go, and its calls end at their deadlines as before.
  // REQUIRES: >= kMinKeepalive (masters accept probes that often).
  // Default: 1 s.
  Duration keepalive = std::chrono::seconds(1);
  // Largest message sent or received, in bytes. Default: 128 MiB.
  int max_message_bytes = 128 << 20;
  // Sent with every call as "authorization: Bearer <token>": a node's or a
  // client's token when the master authenticates calls
  // (rpc/call_authorizer.h). Empty: none. Default: empty.
  std::string token;
  // TLS (rpc/tls_credentials.h): the CA bundle the master's certificate
  // must lead to, and the certificate shown, if any. The stub shares it, so
  // that it lives as long as the channels that read it. Null: plaintext.
  // Default: null.
  std::shared_ptr<const TlsIdentity> tls;
  // With TLS: the name the master's certificate must carry, when it is not
  // the host dialed (an HA leader's advertised address, a load balancer).
  // Empty: the host of each address. Default: empty.
  std::string tls_server_name;
  // Records every call. Null: the stub keeps its own (see recorder()).
  // Must outlive the stub. Default: null.
  CallRecorder* recorder = nullptr;
};

}  // namespace mooncake_tier::rpc
