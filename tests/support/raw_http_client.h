#pragma once

// A raw HTTP/1.1 client for tests of the admin ports' edge: it writes
// exactly the bytes a test gives it (partial headers, pipelined requests,
// chunked bodies, garbage) and reads what comes back, so a test can check
// what the server did with a connection, not only what it answered. Over
// TLS too (OpenSSL), verifying the server's certificate as a careful
// client does, so the same kind of test runs against an HTTPS port.
// Test-only.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct ssl_st;
struct ssl_ctx_st;

namespace mooncake_tier::testing {

// How a RawHttpClient speaks TLS (1.2 or later).
struct RawTlsOptions {
  // PEM: the CA(s) the server's chain must verify against.
  std::string ca_file;
  // The name the server's certificate must hold (a DNS name, sent as SNI,
  // or an IP address).
  std::string host = "localhost";
};

class RawHttpClient {
 public:
  // Connects to 127.0.0.1:port (check connected()).
  explicit RawHttpClient(uint16_t port);
  // Connects and completes a TLS handshake within `timeout`; connected()
  // only once it did, else tls_error() says why.
  RawHttpClient(uint16_t port, const RawTlsOptions& tls,
                std::chrono::milliseconds timeout = std::chrono::seconds(5));
  ~RawHttpClient();
  RawHttpClient(const RawHttpClient&) = delete;
  RawHttpClient& operator=(const RawHttpClient&) = delete;

  bool connected() const { return connected_; }
  // False once the server closed or reset the connection.
  bool Send(std::string_view data);
  // Reads until `count` complete responses arrived (interim 100 answers
  // not counted), the server closes, or `timeout` passes; returns all the
  // bytes read so far.
  std::string ReadResponses(size_t count, std::chrono::milliseconds timeout);
  // Reads until the bytes read so far contain `marker`.
  std::string ReadUntilText(std::string_view marker,
                            std::chrono::milliseconds timeout);
  // True when the server closes the connection within `timeout` (what it
  // sends meanwhile is kept). Over TLS a close_notify counts as closed.
  bool ClosedWithin(std::chrono::milliseconds timeout);

  // TLS: why the handshake failed; "" when it did not.
  const std::string& tls_error() const { return tls_error_; }
  // TLS: the serial of the certificate the server presented, as
  // CertificateSerial() gives it; "" without TLS.
  std::string PeerCertificateSerial() const;

 private:
  // Reads what is there within `timeout`; false on close or timeout.
  bool ReadSome(std::chrono::steady_clock::time_point deadline);
  bool TlsHandshake(const RawTlsOptions& tls,
                    std::chrono::steady_clock::time_point deadline);
  // Waits until the socket is readable (or writable); false past deadline.
  bool Wait(bool write, std::chrono::steady_clock::time_point deadline);

  const int fd_;
  ssl_ctx_st* tls_context_ = nullptr;
  ssl_st* tls_ = nullptr;
  std::string tls_error_;
  bool connected_ = false;
  bool closed_ = false;
  std::string text_;
};

struct RawHttpResponse {
  int status = 0;
  std::string head;  // status line and header fields
  std::string body;
};

// The complete final responses at the start of `text` (bodies by
// Content-Length; interim 1xx answers skipped).
std::vector<RawHttpResponse> ParseHttpResponses(const std::string& text);

// "GET <target> HTTP/1.1" with a Host field and nothing else.
std::string HttpGet(const std::string& target);

// The serial of the first certificate in a PEM file, in upper-case hex
// ("1F0A..."); "" when there is none.
std::string CertificateSerial(const std::string& pem_file);

}  // namespace mooncake_tier::testing
