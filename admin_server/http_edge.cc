#include "admin_server/http_edge.h"

#include <strings.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <exception>
#include <future>
#include <list>
#include <thread>

#include "admin_server/worker_pool.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::admin {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

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

// Bytes read at a time while waiting for a request.
constexpr size_t kReadChunk = 4096;
// A refused request's connection: after the answer, what the client still
// sends is read and dropped for this long (at most kLingerBytes), so the
// kernel does not reset the connection before the client read the answer.
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr size_t kLingerBytes = 1 << 20;
// One log line per refusal reason at most this often.
constexpr auto kLogInterval = std::chrono::seconds(10);
// A failed accept (out of descriptors, say) is retried after this pause.
constexpr auto kAcceptRetry = std::chrono::milliseconds(50);

AdminResponse EdgeAnswer(HttpRefusal refusal) {
  switch (refusal) {
    case HttpRefusal::kHeadersTooLarge:
      return AdminResponse::Error(431, "RESOURCE_EXHAUSTED",
                                  "HEADERS_TOO_LARGE",
                                  "request headers are too large");
    case HttpRefusal::kBodyTooLarge:
      return AdminResponse::Error(413, "RESOURCE_EXHAUSTED",
                                  "PAYLOAD_TOO_LARGE",
                                  "the request body is too large");
    case HttpRefusal::kBusy:
      return AdminResponse::Error(
          503, "UNAVAILABLE", "BUSY",
          "too many requests are waiting; retry in a moment");
    case HttpRefusal::kBodyTimeout:
      return AdminResponse::Error(408, "DEADLINE_EXCEEDED", "REQUEST_TIMEOUT",
                                  "the request body did not arrive in time");
    default:
      return AdminResponse::BadRequest("malformed request", "BAD_REQUEST");
  }
}

}  // namespace

class Session;

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

 private:
  void Accept();
  void OnAccepted(tcp::socket socket);
  // Closes the session idle the longest; false when none is.
  bool EvictIdle();

  const HttpEdgeOptions options_;
  HttpEdgeHandler* const handler_;
  const std::string what_;
  uint16_t port_ = 0;

  // I/O thread only. Declared before the context: handlers the context
  // still holds when it goes may end sessions, which never touch this.
  std::list<std::weak_ptr<Session>> sessions_;
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

// One connection: reads a request, runs it, writes the answer, and again.
// Every member is used on the I/O thread only, except head_ and the body,
// which the lane's worker reads while no operation of the session is
// pending.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(HttpEdge::Impl* edge, tcp::socket socket)
      : edge_(edge),
        stream_(std::move(socket)),
        buffer_(edge->options().max_header_bytes + kReadChunk) {
    edge_->SessionOpened();
  }
  ~Session() { edge_->SessionGone(); }

  void Start() { WaitForRequest(); }
  bool idle() const { return idle_; }
  SteadyClock::time_point idle_since() const { return idle_since_; }
  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

 private:
  const HttpEdgeOptions& options() const { return edge_->options(); }
  void WaitForRequest();
  void ReadHeader();
  void OnHeader(beast::error_code ec);
  void ReadBody();
  void OnBody(beast::error_code ec);
  void Run();
  void Reply(AdminResponse response, bool close);
  // Answers and closes without reading the rest of the request.
  void Refuse(HttpRefusal refusal, std::string_view detail);
  void Linger(size_t drained);

  HttpEdge::Impl* const edge_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpHead head_;
  HttpLane lane_ = HttpLane::kApi;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool head_only_ = false;
  bool idle_ = false;
  SteadyClock::time_point idle_since_;
  std::array<char, 4096> drain_{};
};

void Session::WaitForRequest() {
  if (buffer_.size() > 0) return ReadHeader();  // pipelined
  idle_ = true;
  idle_since_ = SteadyClock::now();
  stream_.expires_after(options().idle_timeout);
  stream_.async_read_some(
      buffer_.prepare(kReadChunk),
      [self = shared_from_this()](beast::error_code ec, size_t bytes) {
        self->idle_ = false;
        if (ec) {
          if (ec == beast::error::timeout) self->edge_->CountIdleClosed();
          return self->Close();
        }
        self->buffer_.commit(bytes);
        self->ReadHeader();
      });
}

void Session::ReadHeader() {
  head_only_ = false;
  parser_.emplace();
  parser_->header_limit(static_cast<uint32_t>(options().max_header_bytes));
  parser_->body_limit(options().max_body_bytes);
  stream_.expires_after(options().header_timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) {
        self->OnHeader(ec);
      });
}

void Session::OnHeader(beast::error_code ec) {
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    return Refuse(HttpRefusal::kHeadersTooLarge, "");
  }
  if (ec == http::error::body_limit) {  // a Content-Length over the limit
    return Refuse(HttpRefusal::kBodyTooLarge, "");
  }
  if (ec == beast::error::timeout) {  // the stream closed the socket
    edge_->CountRefusal(HttpRefusal::kHeaderTimeout, "");
    return;
  }
  if (ec == http::error::end_of_stream || ec == asio::error::eof ||
      ec == asio::error::operation_aborted ||
      ec == asio::error::connection_reset) {
    return Close();
  }
  if (ec) return Refuse(HttpRefusal::kMalformed, ec.message());

  const auto& request = parser_->get();
  head_.method = std::string(request.method_string());
  // HEAD is GET without the body (what some load balancers probe with).
  head_only_ = request.method() == http::verb::head;
  if (head_only_) head_.method = "GET";
  head_.target = std::string(request.target());
  head_.headers.clear();
  for (const auto& field : request) {
    head_.headers.emplace_back(std::string(field.name_string()),
                               std::string(field.value()));
  }
  version_ = request.version();
  keep_alive_ = request.keep_alive();

  HttpAdmission admission = edge_->handler()->Admit(head_);
  if (admission.answer) {
    if (admission.refusal) {
      edge_->CountRefusal(
          *admission.refusal,
          head_.method + " " + head_.target.substr(0, head_.target.find('?')));
    }
    // A body announced and not read: the connection cannot serve another
    // request after this one.
    const bool unread = !parser_->is_done();
    Reply(std::move(*admission.answer), unread || !keep_alive_);
    return;
  }
  lane_ = admission.lane;
  if (parser_->is_done()) return Run();
  if (::strcasecmp(std::string(request[http::field::expect]).c_str(),
                   "100-continue") == 0) {
    static constexpr std::string_view kContinue =
        "HTTP/1.1 100 Continue\r\n\r\n";
    stream_.expires_after(options().write_timeout);
    asio::async_write(
        stream_, asio::buffer(kContinue.data(), kContinue.size()),
        [self = shared_from_this()](beast::error_code ec, size_t) {
          if (ec) return self->Close();
          self->ReadBody();
        });
    return;
  }
  ReadBody();
}

void Session::ReadBody() {
  stream_.expires_after(options().body_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) {
                     self->OnBody(ec);
                   });
}

void Session::OnBody(beast::error_code ec) {
  if (ec == http::error::body_limit || ec == http::error::buffer_overflow) {
    return Refuse(HttpRefusal::kBodyTooLarge,
                  head_.method + " " + head_.target);
  }
  if (ec == beast::error::timeout) {
    edge_->CountRefusal(HttpRefusal::kBodyTimeout, "");
    return;
  }
  if (ec == http::error::partial_message || ec == asio::error::eof ||
      ec == asio::error::operation_aborted ||
      ec == asio::error::connection_reset) {
    return Close();
  }
  if (ec) return Refuse(HttpRefusal::kMalformed, ec.message());
  Run();
}

void Session::Run() {
  stream_.expires_never();
  std::string body = std::move(parser_->get().body());
  HttpEdgeHandler* handler = edge_->handler();
  if (lane_ == HttpLane::kInline) {
    return Reply(handler->Handle(head_, std::move(body)), !keep_alive_);
  }
  auto job = [self = shared_from_this(), handler,
              body = std::move(body)]() mutable {
    AdminResponse response;
    try {
      response = handler->Handle(self->head_, std::move(body));
    } catch (const std::exception& e) {
      spdlog::error("admin: {} {} failed: {}", self->head_.method,
                    self->head_.target, e.what());
      response = AdminResponse::Error(500, "INTERNAL", "INTERNAL",
                                      "the handler failed");
    }
    Session* session = self.get();
    asio::post(
        session->stream_.get_executor(),
        [self = std::move(self), response = std::move(response)]() mutable {
          self->Reply(std::move(response), !self->keep_alive_);
        });
  };
  if (!edge_->pool(lane_).TryPost(std::move(job))) {
    edge_->CountRefusal(HttpRefusal::kBusy, head_.method + " " + head_.target);
    Reply(EdgeAnswer(HttpRefusal::kBusy), !keep_alive_);
  }
}

void Session::Reply(AdminResponse response, bool close) {
  auto message = std::make_shared<http::response<http::string_body>>();
  message->version(version_);
  message->result(static_cast<unsigned>(response.status));
  message->set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message->set(name, value);
  message->keep_alive(!close);
  if (head_only_) {
    message->content_length(response.body.size());
  } else {
    message->body() = std::move(response.body);
    message->prepare_payload();
  }
  stream_.expires_after(options().write_timeout);
  http::async_write(stream_, *message,
                    [self = shared_from_this(), message, close](
                        beast::error_code ec, size_t) {
                      if (ec) return self->Close();
                      if (close) {
                        beast::error_code ignored;
                        self->stream_.socket().shutdown(
                            tcp::socket::shutdown_send, ignored);
                        return self->Linger(0);
                      }
                      self->WaitForRequest();
                    });
}

void Session::Refuse(HttpRefusal refusal, std::string_view detail) {
  edge_->CountRefusal(refusal, detail);
  Reply(EdgeAnswer(refusal), /*close=*/true);
}

void Session::Linger(size_t drained) {
  if (drained >= kLingerBytes) return Close();
  if (drained == 0) stream_.expires_after(kLingerTime);
  stream_.async_read_some(
      asio::buffer(drain_),
      [self = shared_from_this(), drained](beast::error_code ec, size_t bytes) {
        if (ec) return self->Close();
        self->Linger(drained + bytes);
      });
}

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
      [](const std::weak_ptr<Session>& s) { return s.expired(); });
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
  auto session = std::make_shared<Session>(this, std::move(socket));
  sessions_.push_back(session);
  session->Start();
}

bool HttpEdge::Impl::EvictIdle() {
  std::shared_ptr<Session> oldest;
  for (const std::weak_ptr<Session>& weak : sessions_) {
    std::shared_ptr<Session> session = weak.lock();
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
  return stats;
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
      for (const std::weak_ptr<Session>& weak : sessions_) {
        if (std::shared_ptr<Session> session = weak.lock()) session->Close();
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
  MT_RETURN_IF_ERROR(impl->Listen());
  return std::unique_ptr<HttpEdge>(new HttpEdge(std::move(impl)));
}

HttpEdge::HttpEdge(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpEdge::~HttpEdge() { Shutdown(); }
uint16_t HttpEdge::port() const { return impl_->port(); }
HttpEdgeStats HttpEdge::stats() const { return impl_->stats(); }
void HttpEdge::Shutdown() {
  if (impl_) impl_->Shutdown();
}

}  // namespace mooncake_tier::admin
