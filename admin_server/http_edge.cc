#include "admin_server/http_edge.h"

#include <strings.h>

#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <future>

#include "admin_server/http_edge_impl.h"
#include "admin_server/http_edge_tls.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::admin {

namespace beast = boost::beast;

std::string_view HttpRefusalName(HttpRefusal refusal) {
  switch (refusal) {
    case HttpRefusal::kUnauthenticated:
      return "unauthenticated";
    case HttpRefusal::kHeadersTooLarge:
      return "headers_too_large";
    case HttpRefusal::kBodyTooLarge:
      return "body_too_large";
    case HttpRefusal::kMalformed:
      return "malformed";
    case HttpRefusal::kHeaderTimeout:
      return "header_timeout";
    case HttpRefusal::kBodyTimeout:
      return "body_timeout";
    case HttpRefusal::kBusy:
      return "busy";
    case HttpRefusal::kConnectionLimit:
      return "connection_limit";
    case HttpRefusal::kTlsHandshake:
      return "tls_handshake";
  }
  return "unknown";
}

std::string_view HttpHead::Header(std::string_view name) const {
  for (const auto& [field, value] : headers) {
    if (field.size() == name.size() &&
        ::strncasecmp(field.data(), name.data(), name.size()) == 0) {
      return value;
    }
  }
  return {};
}

namespace {

// One log line per refusal reason at most this often.
constexpr auto kLogInterval = std::chrono::seconds(10);
// A failed accept (out of descriptors, say) is retried after this pause.
constexpr auto kAcceptRetry = std::chrono::milliseconds(50);

}  // namespace

Status HttpEdge::Impl::Listen() {
  beast::error_code ec;
  const std::string host = options_.bind_address == "localhost"
                               ? "127.0.0.1"
                               : options_.bind_address;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  auto unavailable = [&](const beast::error_code& error) {
    return Status(ErrorReason::kUnavailable,
                  "cannot bind " + what_ + " to " + options_.bind_address +
                      ":" + std::to_string(options_.port) +
                      ": address in use or not an address of this host (" +
                      error.message() + ")");
  };
  if (ec) return unavailable(ec);
  const tcp::endpoint endpoint(address, options_.port);
  // No SO_REUSEPORT: a second process must not share a port already served.
  if (acceptor_.open(endpoint.protocol(), ec) ||
      acceptor_.set_option(tcp::acceptor::reuse_address(true), ec) ||
      acceptor_.bind(endpoint, ec) ||
      acceptor_.listen(options_.listen_backlog, ec)) {
    return unavailable(ec);
  }
  port_ = acceptor_.local_endpoint().port();
  Accept();
  io_thread_ = std::thread([this] { ioc_.run(); });
  return Status::Ok();
}

void HttpEdge::Impl::Accept() {
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of descriptors, say: the connection stays in the backlog.
      spdlog::warn("admin: accepting a connection to {} failed: {}", what_,
                   ec.message());
      accept_retry_.expires_after(kAcceptRetry);
      accept_retry_.async_wait([this](beast::error_code wait) {
        if (!wait) Accept();
      });
      return;
    }
    OnAccepted(std::move(socket));
    Accept();
  });
}

void HttpEdge::Impl::OnAccepted(tcp::socket socket) {
  sessions_.remove_if(
      [](const std::weak_ptr<SessionBase>& s) { return s.expired(); });
  if (open_.load() >= options_.max_connections && !EvictIdle()) {
    CountRefusal(HttpRefusal::kConnectionLimit, "");
    beast::error_code ignored;
    socket.close(ignored);
    return;
  }
  beast::error_code ignored;
  // Headers and body go out in one write, but a client's next request
  // should not wait for a delayed ACK either.
  socket.set_option(tcp::no_delay(true), ignored);
  sessions_.push_back(StartSession(this, std::move(socket),
                                   options_.tls ? TlsContext() : nullptr));
}

bool HttpEdge::Impl::EvictIdle() {
  std::shared_ptr<SessionBase> oldest;
  for (const std::weak_ptr<SessionBase>& weak : sessions_) {
    std::shared_ptr<SessionBase> session = weak.lock();
    if (session && session->idle() &&
        (!oldest || session->idle_since() < oldest->idle_since())) {
      oldest = std::move(session);
    }
  }
  if (!oldest) return false;
  idle_evicted_.fetch_add(1);
  oldest->Close();
  return true;
}

void HttpEdge::Impl::CountRefusal(HttpRefusal refusal,
                                  std::string_view detail) {
  const auto i = static_cast<size_t>(refusal);
  refused_[i].fetch_add(1);
  const SteadyClock::time_point now = SteadyClock::now();
  if (last_logged_[i] != SteadyClock::time_point{} &&
      now - last_logged_[i] < kLogInterval) {
    ++unlogged_[i];
    return;
  }
  spdlog::warn("admin: {} refused a request ({}){}{}", what_,
               HttpRefusalName(refusal), detail.empty() ? "" : ": ", detail);
  if (unlogged_[i] > 0) {
    spdlog::warn("admin: {} more refused for {} since the last such line",
                 unlogged_[i], HttpRefusalName(refusal));
  }
  last_logged_[i] = now;
  unlogged_[i] = 0;
}

HttpEdgeStats HttpEdge::Impl::stats() const {
  HttpEdgeStats stats;
  stats.connections_open = open_.load();
  stats.connections_accepted = accepted_.load();
  stats.idle_closed = idle_closed_.load();
  stats.idle_evicted = idle_evicted_.load();
  for (size_t i = 0; i < kHttpRefusalCount; ++i) {
    stats.refused[i] = refused_[i].load();
  }
  stats.tls_not_after = tls_not_after_.load();
  return stats;
}

Status HttpEdge::Impl::LoadTls(bool reload) {
  if (!options_.tls) {
    return Status(ErrorReason::kNotApplicable,
                  what_ + " serves plain HTTP: it has no TLS certificate");
  }
  MutexLock reloading(&reload_mu_);
  Result<HttpEdgeTlsContext> loaded = LoadHttpEdgeTls(*options_.tls, what_);
  if (!loaded.ok()) {
    if (reload) {
      spdlog::warn(
          "admin: reloading the TLS certificate of {} failed; still serving "
          "the one loaded before: {}",
          what_, loaded.status().message());
    }
    return loaded.status();
  }
  {
    MutexLock lock(&tls_mu_);
    tls_context_ = std::move(loaded->context);
  }
  tls_not_after_.store(loaded->not_after);
  spdlog::info("admin: {} {} the TLS certificate {}", what_,
               reload ? "now serves" : "serves", loaded->description);
  return Status::Ok();
}

void HttpEdge::Impl::Shutdown() {
  if (stopped_) return;
  stopped_ = true;
  if (io_thread_.joinable()) {
    std::promise<void> closed;
    asio::post(ioc_, [this, &closed] {
      beast::error_code ignored;
      acceptor_.close(ignored);
      accept_retry_.cancel();
      for (const std::weak_ptr<SessionBase>& weak : sessions_) {
        if (std::shared_ptr<SessionBase> session = weak.lock()) {
          session->Close();
        }
      }
      closed.set_value();
    });
    closed.get_future().wait();
  }
  api_.Shutdown();
  observe_.Shutdown();
  ioc_.stop();
  if (io_thread_.joinable()) io_thread_.join();
}

Result<std::unique_ptr<HttpEdge>> HttpEdge::Start(HttpEdgeOptions options,
                                                  HttpEdgeHandler* handler,
                                                  std::string what) {
  using std::chrono::milliseconds;
  if (handler == nullptr || options.max_header_bytes == 0 ||
      options.max_body_bytes == 0 || options.max_connections == 0 ||
      options.api_threads == 0 || options.api_queue == 0 ||
      options.observe_threads == 0 || options.observe_queue == 0 ||
      options.listen_backlog <= 0 ||
      options.header_timeout <= milliseconds(0) ||
      options.body_timeout <= milliseconds(0) ||
      options.idle_timeout <= milliseconds(0) ||
      options.write_timeout <= milliseconds(0)) {
    return Status(ErrorReason::kInvalidArgument,
                  "the limits, timeouts, threads and queues of " + what +
                      " must be positive");
  }
  auto impl =
      std::make_unique<Impl>(std::move(options), handler, std::move(what));
  if (impl->options().tls) MT_RETURN_IF_ERROR(impl->LoadTls(/*reload=*/false));
  MT_RETURN_IF_ERROR(impl->Listen());
  return std::unique_ptr<HttpEdge>(new HttpEdge(std::move(impl)));
}

HttpEdge::HttpEdge(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpEdge::~HttpEdge() { Shutdown(); }
uint16_t HttpEdge::port() const { return impl_->port(); }
HttpEdgeStats HttpEdge::stats() const { return impl_->stats(); }
Status HttpEdge::ReloadTls() { return impl_->LoadTls(/*reload=*/true); }
void HttpEdge::Shutdown() {
  if (impl_) impl_->Shutdown();
}

}  // namespace mooncake_tier::admin
