#pragma once

// The HTTP/1.1 edge of an admin port (Boost.Beast over asio): accepts
// connections, reads requests under limits and deadlines, and hands each
// one to an HttpEdgeHandler. It knows nothing of routes or tokens; it
// guarantees that no client, however slow, idle, large or numerous, can
// take the port from the others (docs/design/admin-edge.md):
//
//   - a request's headers are read whole before anything else, within
//     max_header_bytes (431) and header_timeout from their first byte;
//   - the handler admits a request from its headers alone (Admit), before
//     a byte of its body is read: a refused request's body is never read
//     and its connection is closed after the answer;
//   - a body, Content-Length or chunked, is read only up to max_body_bytes
//     (413, the rest unread) and within body_timeout;
//   - a connection waiting for its next request is closed after
//     idle_timeout, and when max_connections are open the one idle the
//     longest makes room for a new one; only when none is idle is a new
//     connection refused;
//   - requests run on one of three lanes: kInline on the I/O thread (what
//     answers at once from memory: health and readiness), kObserve and kApi
//     on pools of their own with bounded queues, so a saturated API (503
//     BUSY) leaves health and metrics answerable;
//   - pipelined requests are answered in order, one at a time; there is no
//     Range support (a Range header is ignored: the whole body, 200);
//   - refusals are counted by reason (stats()) and logged at most once per
//     reason every 10 s;
//   - with `tls` set the port speaks HTTPS only (TLS 1.2 or later): the
//     handshake counts against max_connections and must finish within
//     header_timeout of the connection's accept (a connection that has not
//     sent its first byte is idle, and may be closed to make room); a
//     failed one is refused (kTlsHandshake). Everything above then holds
//     over TLS unchanged. ReloadTls() swaps the certificate for new
//     connections.
//
// Thread safety: Start/Shutdown from one thread; stats() and ReloadTls()
// from any thread.
// The handler's Admit runs on the I/O thread and must not block; Handle
// runs on the request's lane and may be called concurrently.

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "admin_server/admin_route.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier::admin {

// The server certificate and key of an HTTPS port, read from files at
// Start and again at each ReloadTls.
struct HttpEdgeTls {
  // PEM: the leaf certificate first, then any intermediates up to (not
  // necessarily including) the root the clients trust.
  std::string cert_file;
  // PEM: the private key of the leaf, not encrypted.
  std::string key_file;
};

struct HttpEdgeOptions {
  // Default: loopback only.
  std::string bind_address = "127.0.0.1";
  // 0 picks a free port. Default: 0.
  uint16_t port = 0;
  // Request line and headers. Default: 16 KiB.
  size_t max_header_bytes = 16 << 10;
  // Request body, after chunked decoding. Default: 64 KiB.
  size_t max_body_bytes = 64 << 10;
  // Connections open at once. Default: 512.
  size_t max_connections = 512;
  // From a request's first byte to the end of its headers. Default: 10 s.
  std::chrono::milliseconds header_timeout{10000};
  // From the end of the headers to the end of the body. Default: 10 s.
  std::chrono::milliseconds body_timeout{10000};
  // A connection waiting for its next request. Default: 5 s.
  std::chrono::milliseconds idle_timeout{5000};
  // Writing one response. Default: 10 s.
  std::chrono::milliseconds write_timeout{10000};
  // Workers and waiting requests of the kApi lane. Defaults: 8 and 64.
  size_t api_threads = 8;
  size_t api_queue = 64;
  // Workers and waiting requests of the kObserve lane. Defaults: 2 and 16.
  size_t observe_threads = 2;
  size_t observe_queue = 16;
  // Connections the kernel queues before accept. Default: 1024.
  int listen_backlog = 1024;
  // Set: HTTPS only, with this certificate. Default: unset (plain HTTP).
  std::optional<HttpEdgeTls> tls;
};

// Where a request runs (see the header comment).
enum class HttpLane { kInline, kObserve, kApi };

// Why the edge or its handler refused a request or a connection.
enum class HttpRefusal : size_t {
  kUnauthenticated,  // the handler's Admit, with its own answer
  kHeadersTooLarge,  // 431
  kBodyTooLarge,     // 413
  kMalformed,        // 400: not HTTP/1.x the parser accepts
  kHeaderTimeout,    // 408: headers not in within header_timeout
  kBodyTimeout,      // 408: body not in within body_timeout
  kBusy,             // 503: the lane's queue is full
  kConnectionLimit,  // closed at accept: max_connections, none idle
  kTlsHandshake,     // an HTTPS port: the handshake failed or timed out
};
inline constexpr size_t kHttpRefusalCount = 9;
// "unauthenticated", "headers_too_large", ... (metric label values).
std::string_view HttpRefusalName(HttpRefusal refusal);

// A request as the handler sees it before its body is read.
struct HttpHead {
  std::string method;  // "GET", ...
  std::string target;  // as received: path and query, still encoded
  // Header fields as received (names in their case; repeated ones kept).
  std::vector<std::pair<std::string, std::string>> headers;
  // The value of the first field named `name` (any case), or "".
  std::string_view Header(std::string_view name) const;
};

struct HttpAdmission {
  // Set: answer this and do not read the body (the connection closes if a
  // body was announced). `refusal` names it in the stats when set too.
  std::optional<AdminResponse> answer;
  std::optional<HttpRefusal> refusal;
  HttpLane lane = HttpLane::kApi;
};

class HttpEdgeHandler {
 public:
  virtual ~HttpEdgeHandler() = default;
  // On the I/O thread, with the headers only. Must not block.
  virtual HttpAdmission Admit(const HttpHead& head) = 0;
  // On the admitted lane, with the whole body.
  virtual AdminResponse Handle(const HttpHead& head, std::string body) = 0;
};

struct HttpEdgeStats {
  uint64_t connections_open = 0;
  uint64_t connections_accepted = 0;
  // Closed after idle_timeout, or to make room for a new connection.
  uint64_t idle_closed = 0;
  uint64_t idle_evicted = 0;
  std::array<uint64_t, kHttpRefusalCount> refused{};
  // An HTTPS port: the notAfter of the certificate new connections get,
  // in seconds since the epoch (UTC). 0 for a plain HTTP port.
  int64_t tls_not_after = 0;
};

class HttpEdge {
 public:
  // Binds and starts serving on threads of its own. `handler` must outlive
  // the edge. INVALID_ARGUMENT for a zero limit, timeout, thread count or
  // queue, and, with `tls`, for a certificate or key file that cannot be
  // read or parsed, a key that is not the certificate's or a certificate
  // past its notAfter (naming the file and why); UNAVAILABLE when the
  // address cannot be bound (naming `what`).
  static Result<std::unique_ptr<HttpEdge>> Start(HttpEdgeOptions options,
                                                 HttpEdgeHandler* handler,
                                                 std::string what);
  ~HttpEdge();  // Shutdown()
  HttpEdge(const HttpEdge&) = delete;
  HttpEdge& operator=(const HttpEdge&) = delete;

  uint16_t port() const;
  HttpEdgeStats stats() const;
  // Reads options.tls's files again into a new TLS context and serves it
  // to connections accepted from now on; open connections keep theirs.
  // On any error (as Start's, INVALID_ARGUMENT naming the file) nothing
  // changes and the old certificate stays served. NOT_APPLICABLE for a
  // plain HTTP port. The files are read on the calling thread, so the port
  // keeps serving meanwhile; concurrent calls run one after another.
  Status ReloadTls();
  // Stops accepting, closes every connection, lets requests in progress on
  // the lanes finish (their answers are dropped) and joins the threads.
  // Idempotent.
  void Shutdown();

  class Impl;

 private:
  explicit HttpEdge(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mooncake_tier::admin
