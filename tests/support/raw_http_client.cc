#include "tests/support/raw_http_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ctime>

namespace mooncake_tier::testing {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// A TLS write blocked this long is a server that stopped reading.
constexpr auto kTlsWriteTimeout = std::chrono::seconds(10);

std::string SerialOf(X509* certificate) {
  std::string text;
  if (certificate == nullptr) return text;
  if (BIGNUM* serial =
          ASN1_INTEGER_to_BN(X509_get0_serialNumber(certificate), nullptr)) {
    if (char* hex = BN_bn2hex(serial)) {
      text = hex;
      OPENSSL_free(hex);
    }
    BN_free(serial);
  }
  return text;
}

// OpenSSL writes with write(2): on a connection the server closed that
// raises SIGPIPE, which would end the test (the plain path sends with
// MSG_NOSIGNAL). Blocked on this thread while an SSL call runs; one raised
// meanwhile is taken before the mask is restored.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{0, 0};
      sigtimedwait(&pipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
};

// OpenSSL's latest error as text; clears the queue.
std::string OpenSslError() {
  char text[256] = "no OpenSSL error";
  if (const unsigned long error = ERR_peek_last_error()) {
    ERR_error_string_n(error, text, sizeof(text));
  }
  ERR_clear_error();
  return text;
}

}  // namespace

RawHttpClient::RawHttpClient(uint16_t port)
    : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address),
                         sizeof(address)) == 0;
}

RawHttpClient::RawHttpClient(uint16_t port, const RawTlsOptions& tls,
                             milliseconds timeout)
    : RawHttpClient(port) {
  if (!connected_) return;
  connected_ = TlsHandshake(tls, SteadyClock::now() + timeout);
}

RawHttpClient::~RawHttpClient() {
  if (tls_ != nullptr) SSL_free(tls_);
  if (tls_context_ != nullptr) SSL_CTX_free(tls_context_);
  ::close(fd_);
}

bool RawHttpClient::Wait(bool write, SteadyClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd_, static_cast<short>(write ? POLLOUT : POLLIN), 0};
  return ::poll(&p, 1, static_cast<int>(left.count())) > 0;
}

bool RawHttpClient::TlsHandshake(const RawTlsOptions& tls,
                                 SteadyClock::time_point deadline) {
  ERR_clear_error();
  tls_context_ = SSL_CTX_new(TLS_client_method());
  if (tls_context_ == nullptr ||
      SSL_CTX_set_min_proto_version(tls_context_, TLS1_2_VERSION) != 1 ||
      SSL_CTX_load_verify_locations(tls_context_, tls.ca_file.c_str(),
                                    nullptr) != 1) {
    tls_error_ =
        "cannot load the CA file '" + tls.ca_file + "': " + OpenSslError();
    return false;
  }
  SSL_CTX_set_verify(tls_context_, SSL_VERIFY_PEER, nullptr);
  tls_ = SSL_new(tls_context_);
  if (tls_ == nullptr || SSL_set_fd(tls_, fd_) != 1) {
    tls_error_ = "cannot set up TLS: " + OpenSslError();
    return false;
  }
  in6_addr ignored{};
  const bool ip = inet_pton(AF_INET, tls.host.c_str(), &ignored) == 1 ||
                  inet_pton(AF_INET6, tls.host.c_str(), &ignored) == 1;
  X509_VERIFY_PARAM* verify = SSL_get0_param(tls_);
  const bool named =
      ip ? X509_VERIFY_PARAM_set1_ip_asc(verify, tls.host.c_str()) == 1
         : SSL_set_tlsext_host_name(tls_, tls.host.c_str()) == 1 &&
               X509_VERIFY_PARAM_set1_host(verify, tls.host.c_str(), 0) == 1;
  if (!named) {
    tls_error_ = "cannot check the name '" + tls.host + "': " + OpenSslError();
    return false;
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  for (;;) {
    int result;
    {
      SigpipeBlock no_sigpipe;
      result = SSL_connect(tls_);
    }
    if (result == 1) return true;
    const int error = SSL_get_error(tls_, result);
    if ((error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) &&
        Wait(error == SSL_ERROR_WANT_WRITE, deadline)) {
      continue;
    }
    const long verified = SSL_get_verify_result(tls_);
    tls_error_ =
        error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE
            ? "the handshake did not finish in time"
            : "the handshake failed: " + OpenSslError() +
                  (verified == X509_V_OK
                       ? ""
                       : std::string(" (certificate: ") +
                             X509_verify_cert_error_string(verified) + ")");
    return false;
  }
}

std::string RawHttpClient::PeerCertificateSerial() const {
  if (tls_ == nullptr) return "";
  X509* peer = SSL_get1_peer_certificate(tls_);
  std::string serial = SerialOf(peer);
  X509_free(peer);
  return serial;
}

bool RawHttpClient::Send(std::string_view data) {
  if (tls_ != nullptr) {
    const auto deadline = SteadyClock::now() + kTlsWriteTimeout;
    while (!data.empty()) {
      int n;
      {
        SigpipeBlock no_sigpipe;
        n = SSL_write(tls_, data.data(), static_cast<int>(data.size()));
      }
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      const int error = SSL_get_error(tls_, n);
      if ((error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) ||
          !Wait(error == SSL_ERROR_WANT_WRITE, deadline)) {
        ERR_clear_error();
        return false;
      }
    }
    return true;
  }
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool RawHttpClient::ReadSome(SteadyClock::time_point deadline) {
  if (closed_) return false;
  char buffer[65536];
  if (tls_ != nullptr) {
    if (SSL_pending(tls_) == 0 && !Wait(false, deadline)) return false;
    int n;
    {
      SigpipeBlock no_sigpipe;  // a TLS 1.3 read may answer a key update
      n = SSL_read(tls_, buffer, sizeof(buffer));
    }
    if (n > 0) {
      text_.append(buffer, static_cast<size_t>(n));
      return true;
    }
    const int error = SSL_get_error(tls_, n);
    // Nothing whole yet (or a session ticket): not closed.
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      return true;
    }
    ERR_clear_error();  // close_notify, end of stream or a reset
    closed_ = true;
    return false;
  }
  const auto left =
      std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
  const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
  if (n <= 0) {
    closed_ = true;
    return false;
  }
  text_.append(buffer, static_cast<size_t>(n));
  return true;
}

std::string RawHttpClient::ReadResponses(size_t count, milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (ParseHttpResponses(text_).size() < count && ReadSome(deadline)) {
  }
  return text_;
}

std::string RawHttpClient::ReadUntilText(std::string_view marker,
                                         milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (text_.find(marker) == std::string::npos && ReadSome(deadline)) {
  }
  return text_;
}

bool RawHttpClient::ClosedWithin(milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (ReadSome(deadline)) {
  }
  return closed_;
}

std::vector<RawHttpResponse> ParseHttpResponses(const std::string& text) {
  std::vector<RawHttpResponse> responses;
  size_t at = 0;
  while (true) {
    const size_t end = text.find("\r\n\r\n", at);
    if (end == std::string::npos) break;
    RawHttpResponse r;
    r.head = text.substr(at, end - at);
    if (r.head.rfind("HTTP/1.", 0) != 0 || r.head.size() < 12) break;
    r.status = std::stoi(r.head.substr(9, 3));
    size_t length = 0;
    const size_t field = r.head.find("Content-Length: ");
    if (field != std::string::npos)
      length = std::stoul(r.head.substr(field + 16));
    if (text.size() < end + 4 + length) break;
    r.body = text.substr(end + 4, length);
    if (r.status >= 200) responses.push_back(std::move(r));
    at = end + 4 + length;
  }
  return responses;
}

std::string HttpGet(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: t\r\n\r\n";
}

std::string CertificateSerial(const std::string& pem_file) {
  BIO* bio = BIO_new_file(pem_file.c_str(), "r");
  if (bio == nullptr) {
    ERR_clear_error();
    return "";
  }
  X509* certificate = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  std::string serial = SerialOf(certificate);
  X509_free(certificate);
  ERR_clear_error();
  return serial;
}

}  // namespace mooncake_tier::testing
