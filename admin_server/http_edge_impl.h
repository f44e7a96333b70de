#pragma once

// The edge's internals, shared by http_edge.cc (accepting, connection
// accounting, refusal counts, TLS contexts, life cycle) and
// http_edge_session.cc (what one connection does). Private to the edge: it
// includes Boost, which no other header of the project does.

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "admin_server/http_edge.h"
#include "admin_server/worker_pool.h"
#include "base/mutex.h"

namespace mooncake_tier::admin {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

// What the edge's connection accounting sees of a session, whatever its
// stream. I/O thread only.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void Close() = 0;
  // Waiting for the first byte of a request (or, over TLS, of the
  // handshake): a connection that may be closed to make room.
  bool idle() const { return idle_; }
  SteadyClock::time_point idle_since() const { return idle_since_; }

 protected:
  void SetIdle() {
    idle_ = true;
    idle_since_ = SteadyClock::now();
  }

  bool idle_ = false;
  SteadyClock::time_point idle_since_;
};

// Serves an accepted connection (http_edge_session.cc): HTTPS with `tls`,
// which the connection holds for its life, plain HTTP without.
std::shared_ptr<SessionBase> StartSession(
    HttpEdge::Impl* edge, tcp::socket socket,
    std::shared_ptr<asio::ssl::context> tls);

class HttpEdge::Impl {
 public:
  Impl(HttpEdgeOptions options, HttpEdgeHandler* handler, std::string what)
      : options_(std::move(options)),
        handler_(handler),
        what_(std::move(what)),
        api_(options_.api_threads, options_.api_queue),
        observe_(options_.observe_threads, options_.observe_queue) {}
  ~Impl() { Shutdown(); }

  Status Listen();
  void Shutdown();
  HttpEdgeStats stats() const;
  uint16_t port() const { return port_; }

  // For sessions, on the I/O thread.
  const HttpEdgeOptions& options() const { return options_; }
  HttpEdgeHandler* handler() const { return handler_; }
  WorkerPool& pool(HttpLane lane) {
    return lane == HttpLane::kApi ? api_ : observe_;
  }
  void CountRefusal(HttpRefusal refusal, std::string_view detail);
  void CountIdleClosed() { idle_closed_.fetch_add(1); }
  void SessionOpened() {
    open_.fetch_add(1);
    accepted_.fetch_add(1);
  }
  void SessionGone() { open_.fetch_sub(1); }

  // An HTTPS port: (re)reads the certificate and key; on success new
  // connections get the new context. Any thread but the I/O thread.
  Status LoadTls(bool reload);

 private:
  void Accept();
  void OnAccepted(tcp::socket socket);
  std::shared_ptr<asio::ssl::context> TlsContext() const {
    MutexLock lock(&tls_mu_);
    return tls_context_;
  }
  // Closes the session idle the longest; false when none is.
  bool EvictIdle();

  const HttpEdgeOptions options_;
  HttpEdgeHandler* const handler_;
  const std::string what_;
  uint16_t port_ = 0;

  // Serializes reloads, so the context served is the last one loaded.
  Mutex reload_mu_ ABSL_ACQUIRED_BEFORE(tls_mu_);
  mutable Mutex tls_mu_;
  // An HTTPS port's context for new connections; each session holds the
  // one it was accepted with.
  std::shared_ptr<asio::ssl::context> tls_context_ ABSL_GUARDED_BY(tls_mu_);
  std::atomic<int64_t> tls_not_after_{0};

  // I/O thread only. Declared before the context: handlers the context
  // still holds when it goes may end sessions, which never touch this.
  std::list<std::weak_ptr<SessionBase>> sessions_;
  std::array<SteadyClock::time_point, kHttpRefusalCount> last_logged_{};
  std::array<uint64_t, kHttpRefusalCount> unlogged_{};

  std::atomic<uint64_t> open_{0};
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> idle_closed_{0};
  std::atomic<uint64_t> idle_evicted_{0};
  std::array<std::atomic<uint64_t>, kHttpRefusalCount> refused_{};

  asio::io_context ioc_{1};
  tcp::acceptor acceptor_{ioc_};
  asio::steady_timer accept_retry_{ioc_};
  WorkerPool api_;
  WorkerPool observe_;
  std::thread io_thread_;
  bool stopped_ = false;
};

}  // namespace mooncake_tier::admin
