#pragma once

// A gRPC server on one address hosting one or more services (the master
// service; later the node service). Binds "host:0" to a free port and
// reports it, and shuts down within a deadline.
//
// Thread safety: thread-safe. Shutdown may race with itself and with the
// destructor's implicit shutdown only if the caller owns the object until
// both return.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "mooncake_tier/status.h"

namespace grpc {
class Server;
class ServerCredentials;
class Service;
}  // namespace grpc

namespace mooncake_tier::rpc {

struct RpcServerOptions {
  // "host:port"; port 0 picks a free port. Default: "127.0.0.1:0".
  std::string address = "127.0.0.1:0";
  // Largest message received or sent, in bytes. A node's whole SSD
  // inventory travels in one RegisterNode, hence the size. Default: 128 MiB.
  int max_message_bytes = 128 << 20;
  // Threads of the synchronous server kept waiting for calls: at least
  // min_pollers, and a thread that finishes a call stays while fewer than
  // max_pollers wait. gRPC's own defaults (1 and 2) made it start and end
  // a thread for nearly every call once more than two were in flight (a
  // node's long-polling pull holds one): about 260 threads a second while
  // a client read from the SSD tier. Defaults: 2 and 16.
  int min_pollers = 2;
  int max_pollers = 16;
  // TLS (rpc/tls_credentials.h: MakeServerCredentials). Null: plaintext.
  // With TLS a connection is closed after max_connection_age (calls in
  // flight get max_connection_age_grace), so that a reloaded certificate
  // or CA reaches every caller within that time. Defaults: null, 1 h, 30 s.
  std::shared_ptr<grpc::ServerCredentials> credentials;
  Duration max_connection_age = std::chrono::hours(1);
  Duration max_connection_age_grace = std::chrono::seconds(30);
};

class RpcServer {
 public:
  // Starts serving `services` (not owned; they must outlive the server).
  // UNAVAILABLE when the address cannot be bound; INVALID_ARGUMENT for an
  // empty address or no services.
  static Result<std::unique_ptr<RpcServer>> Start(
      const RpcServerOptions& options, std::vector<grpc::Service*> services);
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;
  // Shuts down with kDefaultGrace if not done yet.
  ~RpcServer();

  // The port actually bound.
  int port() const { return port_; }
  // "host:port" with the port actually bound: what clients dial.
  const std::string& address() const { return address_; }

  // Stops accepting calls, lets calls in flight finish for up to `grace`,
  // cancels the rest, and returns once every handler has returned.
  // Idempotent.
  void Shutdown(Duration grace = kDefaultGrace);
  static constexpr Duration kDefaultGrace = std::chrono::seconds(1);

 private:
  RpcServer(std::unique_ptr<grpc::Server> server, int port,
            std::string address);

  const int port_;
  const std::string address_;
  Mutex mu_;
  std::unique_ptr<grpc::Server> server_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mooncake_tier::rpc
