// One connection of the edge, plain HTTP or HTTPS: handshake, requests
// under limits and deadlines, lanes, answers, and the end of the
// connection (see http_edge.h for the guarantees).

#include <strings.h>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <exception>
#include <optional>
#include <type_traits>

#include "admin_server/http_edge_impl.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::admin {

namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// Bytes read at a time while waiting for a request.
constexpr size_t kReadChunk = 4096;
// A refused request's connection: after the answer, what the client still
// sends is read and dropped for this long (at most kLingerBytes), so the
// kernel does not reset the connection before the client read the answer.
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr size_t kLingerBytes = 1 << 20;

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
    case HttpRefusal::kTlsHandshake:
      return AdminResponse::BadRequest(
          "this port speaks HTTPS only: use https://", "TLS_REQUIRED");
    default:
      return AdminResponse::BadRequest("malformed request", "BAD_REQUEST");
  }
}

using ResponseMessage = http::response<http::string_body>;

// The message of `response`; for a HEAD request (`head_only`) without the
// body but with its length.
std::shared_ptr<ResponseMessage> MakeMessage(AdminResponse response,
                                             unsigned version, bool close,
                                             bool head_only) {
  auto message = std::make_shared<ResponseMessage>();
  message->version(version);
  message->result(static_cast<unsigned>(response.status));
  message->set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message->set(name, value);
  message->keep_alive(!close);
  if (head_only) {
    message->content_length(response.body.size());
  } else {
    message->body() = std::move(response.body);
    message->prepare_payload();
  }
  return message;
}

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One connection: over TLS the handshake first, then it reads a request,
// runs it, writes the answer, and again. One implementation for both
// streams: every deadline and socket call goes to the TCP layer (tcp()),
// every read and write of HTTP to the stream. Every member is used on the
// I/O thread only, except head_ and the body, which the lane's worker reads
// while no operation of the session is pending.
template <class Stream>
class Session : public SessionBase,
                public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // `tls`: the context of an HTTPS port (null for plain HTTP), held for
  // the connection's life whatever a reload serves to new ones.
  Session(HttpEdge::Impl* edge, tcp::socket socket,
          std::shared_ptr<asio::ssl::context> tls)
      : edge_(edge),
        tls_(std::move(tls)),
        stream_(MakeStream(std::move(socket), tls_.get())),
        buffer_(edge->options().max_header_bytes + kReadChunk) {
    edge_->SessionOpened();
  }
  ~Session() override { edge_->SessionGone(); }

  void Start() {
    if constexpr (kTls) {
      AwaitHandshake();
    } else {
      WaitForRequest();
    }
  }
  void Close() override {
    beast::error_code ignored;
    tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    tcp().close();
  }

 private:
  static Stream MakeStream(tcp::socket socket, asio::ssl::context* tls) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *tls);
    } else {
      return Stream(std::move(socket));
    }
  }
  std::shared_ptr<Session> Self() { return this->shared_from_this(); }
  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream_); }
  const HttpEdgeOptions& options() const { return edge_->options(); }

  // TLS: the client's first bytes (idle until then), then the handshake
  // they start, both within header_timeout of the accept.
  void AwaitHandshake();
  void OnFirstBytes(beast::error_code ec, size_t bytes);
  void OnHandshake(beast::error_code ec, size_t used);
  // TLS: plain HTTP sent to the port is answered in plain HTTP (400
  // TLS_REQUIRED) and the connection closed.
  void RefusePlainHttp();

  void WaitForRequest();
  void ReadHeader();
  void OnHeader(beast::error_code ec);
  void ReadBody();
  void OnBody(beast::error_code ec);
  void Run();
  void Reply(AdminResponse response, bool close);
  // Answers and closes without reading the rest of the request.
  void Refuse(HttpRefusal refusal, std::string_view detail);
  // After the last answer: over TLS a close_notify (not waiting for the
  // client's), then a half-close and Linger.
  void EndAfterReply();
  void HalfCloseAndLinger();
  void Linger(size_t drained);

  HttpEdge::Impl* const edge_;
  // Before the stream, which uses it.
  const std::shared_ptr<asio::ssl::context> tls_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpHead head_;
  HttpLane lane_ = HttpLane::kApi;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool head_only_ = false;
  std::array<char, 4096> drain_{};
};

template <class Stream>
void Session<Stream>::AwaitHandshake() {
  SetIdle();
  tcp().expires_after(options().header_timeout);  // for the handshake too
  tcp().async_read_some(buffer_.prepare(kReadChunk),
                        [self = Self()](beast::error_code ec, size_t bytes) {
                          self->OnFirstBytes(ec, bytes);
                        });
}

template <class Stream>
void Session<Stream>::OnFirstBytes(beast::error_code ec, size_t bytes) {
  idle_ = false;
  if (ec) {
    if (ec == beast::error::timeout) edge_->CountIdleClosed();
    return Close();
  }
  buffer_.commit(bytes);
  // A TLS record starts with its type (22 for a handshake), plain HTTP with
  // a method in capitals.
  const char first = *static_cast<const char*>(buffer_.data().data());
  if (first >= 'A' && first <= 'Z') return RefusePlainHttp();
  // The bytes already read start the handshake. The client waits for the
  // server's answer before it sends more, so the engine takes them all.
  stream_.async_handshake(asio::ssl::stream_base::server, buffer_.data(),
                          [self = Self()](beast::error_code ec, size_t used) {
                            self->OnHandshake(ec, used);
                          });
}

template <class Stream>
void Session<Stream>::OnHandshake(beast::error_code ec, size_t used) {
  buffer_.consume(used);
  if (!ec && buffer_.size() == 0) return WaitForRequest();
  if (ec == asio::error::operation_aborted || ec == asio::error::eof ||
      ec == asio::error::connection_reset ||
      ec == asio::ssl::error::stream_truncated) {
    return Close();  // gone (a TCP probe, say), or closed to make room
  }
  std::string detail = "data sent before the handshake ended";
  if (ec == beast::error::timeout) {
    detail = "not done within the header timeout";
  } else if (ec) {
    detail = ec.message();  // "wrong version number", "unknown ca", ...
  }
  edge_->CountRefusal(HttpRefusal::kTlsHandshake, detail);
  Close();
}

template <class Stream>
void Session<Stream>::RefusePlainHttp() {
  edge_->CountRefusal(HttpRefusal::kTlsHandshake,
                      "plain HTTP sent to an HTTPS port");
  auto message = MakeMessage(EdgeAnswer(HttpRefusal::kTlsHandshake), 11,
                             /*close=*/true, /*head_only=*/false);
  tcp().expires_after(options().write_timeout);
  http::async_write(tcp(), *message,
                    [self = Self(), message](beast::error_code ec, size_t) {
                      if (ec) return self->Close();
                      self->HalfCloseAndLinger();
                    });
}

template <class Stream>
void Session<Stream>::WaitForRequest() {
  if (buffer_.size() > 0) return ReadHeader();  // pipelined
  SetIdle();
  tcp().expires_after(options().idle_timeout);
  stream_.async_read_some(buffer_.prepare(kReadChunk),
                          [self = Self()](beast::error_code ec, size_t bytes) {
                            self->idle_ = false;
                            if (ec) {
                              if (ec == beast::error::timeout)
                                self->edge_->CountIdleClosed();
                              return self->Close();
                            }
                            self->buffer_.commit(bytes);
                            self->ReadHeader();
                          });
}

template <class Stream>
void Session<Stream>::ReadHeader() {
  head_only_ = false;
  parser_.emplace();
  parser_->header_limit(static_cast<uint32_t>(options().max_header_bytes));
  parser_->body_limit(options().max_body_bytes);
  tcp().expires_after(options().header_timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = Self()](beast::error_code ec, size_t) { self->OnHeader(ec); });
}

template <class Stream>
void Session<Stream>::OnHeader(beast::error_code ec) {
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
      ec == asio::error::connection_reset ||
      ec == asio::ssl::error::stream_truncated) {
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
    tcp().expires_after(options().write_timeout);
    asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                      [self = Self()](beast::error_code ec, size_t) {
                        if (ec) return self->Close();
                        self->ReadBody();
                      });
    return;
  }
  ReadBody();
}

template <class Stream>
void Session<Stream>::ReadBody() {
  tcp().expires_after(options().body_timeout);
  http::async_read(
      stream_, buffer_, *parser_,
      [self = Self()](beast::error_code ec, size_t) { self->OnBody(ec); });
}

template <class Stream>
void Session<Stream>::OnBody(beast::error_code ec) {
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
      ec == asio::error::connection_reset ||
      ec == asio::ssl::error::stream_truncated) {
    return Close();
  }
  if (ec) return Refuse(HttpRefusal::kMalformed, ec.message());
  Run();
}

template <class Stream>
void Session<Stream>::Run() {
  tcp().expires_never();
  std::string body = std::move(parser_->get().body());
  HttpEdgeHandler* handler = edge_->handler();
  if (lane_ == HttpLane::kInline) {
    return Reply(handler->Handle(head_, std::move(body)), !keep_alive_);
  }
  auto job = [self = Self(), handler, body = std::move(body)]() mutable {
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

template <class Stream>
void Session<Stream>::Reply(AdminResponse response, bool close) {
  auto message = MakeMessage(std::move(response), version_, close, head_only_);
  tcp().expires_after(options().write_timeout);
  http::async_write(
      stream_, *message,
      [self = Self(), message, close](beast::error_code ec, size_t) {
        if (ec) return self->Close();
        if (close) return self->EndAfterReply();
        self->WaitForRequest();
      });
}

template <class Stream>
void Session<Stream>::Refuse(HttpRefusal refusal, std::string_view detail) {
  edge_->CountRefusal(refusal, detail);
  Reply(EdgeAnswer(refusal), /*close=*/true);
}

template <class Stream>
void Session<Stream>::EndAfterReply() {
  if constexpr (kTls) {
    // As if the client's close_notify had come: SSL_shutdown sends ours
    // and is done, instead of waiting for one a client may never send.
    ::SSL_set_shutdown(stream_.native_handle(), SSL_RECEIVED_SHUTDOWN);
    tcp().expires_after(options().write_timeout);
    stream_.async_shutdown([self = Self()](beast::error_code ec) {
      if (ec) return self->Close();
      self->HalfCloseAndLinger();
    });
  } else {
    HalfCloseAndLinger();
  }
}

template <class Stream>
void Session<Stream>::HalfCloseAndLinger() {
  beast::error_code ignored;
  tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
  Linger(0);
}

// Reads the TCP layer: what is left over TLS is records nobody decrypts.
template <class Stream>
void Session<Stream>::Linger(size_t drained) {
  if (drained >= kLingerBytes) return Close();
  if (drained == 0) tcp().expires_after(kLingerTime);
  tcp().async_read_some(
      asio::buffer(drain_),
      [self = Self(), drained](beast::error_code ec, size_t bytes) {
        if (ec) return self->Close();
        self->Linger(drained + bytes);
      });
}

}  // namespace

std::shared_ptr<SessionBase> StartSession(
    HttpEdge::Impl* edge, tcp::socket socket,
    std::shared_ptr<asio::ssl::context> tls) {
  std::shared_ptr<SessionBase> started;
  if (tls != nullptr) {
    auto session = std::make_shared<Session<TlsStream>>(edge, std::move(socket),
                                                        std::move(tls));
    session->Start();
    started = std::move(session);
  } else {
    auto session = std::make_shared<Session<PlainStream>>(
        edge, std::move(socket), nullptr);
    session->Start();
    started = std::move(session);
  }
  return started;
}

}  // namespace mooncake_tier::admin
