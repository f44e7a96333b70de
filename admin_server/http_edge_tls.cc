#include "admin_server/http_edge_tls.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <string_view>

#include "spdlog/spdlog.h"

namespace mooncake_tier::admin {
namespace {

namespace ssl = boost::asio::ssl;

// A certificate chain or a key is a few KiB; anything this large is not one.
constexpr size_t kMaxPemBytes = 1 << 20;

Result<std::string> ReadPem(const std::string& path, std::string_view role,
                            const std::string& what) {
  const std::string named =
      "the TLS " + std::string(role) + " file '" + path + "' of " + what;
  if (path.empty()) {
    return Status::InvalidArgument("no TLS " + std::string(role) +
                                   " file given for " + what);
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::InvalidArgument("cannot read " + named + ": " +
                                   strerror(errno));
  std::string text;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return Status::InvalidArgument("cannot read " + named + ": " +
                                     strerror(error));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > kMaxPemBytes) {
      ::close(fd);
      return Status::InvalidArgument(named +
                                     " is larger than 1 MiB: not a PEM file");
    }
  }
  ::close(fd);
  return text;
}

// The reason OpenSSL gives for its latest error ("no start line"), or
// `fallback`. Clears this thread's error queue.
std::string OpenSslReason(std::string_view fallback) {
  const unsigned long error = ::ERR_peek_last_error();
  const char* reason = error != 0 ? ::ERR_reason_error_string(error) : nullptr;
  ::ERR_clear_error();
  return reason != nullptr ? std::string(reason) : std::string(fallback);
}

// A key is never asked a passphrase for: an encrypted one fails to load.
int NoPassphrase(char*, int, int, void*) { return 0; }

struct BioFree {
  void operator()(BIO* bio) const { ::BIO_free(bio); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* key) const { ::EVP_PKEY_free(key); }
};

// Seconds since the epoch of an ASN.1 time, or nullopt.
std::optional<int64_t> EpochSeconds(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ::ASN1_TIME_to_tm(time, &tm) != 1) {
    return std::nullopt;
  }
  return static_cast<int64_t>(::timegm(&tm));
}

std::string IsoTime(int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// "CN=master,O=mooncake-tier, serial 1F2E..."
std::string Describe(X509* leaf) {
  std::string text;
  std::unique_ptr<BIO, BioFree> bio(::BIO_new(::BIO_s_mem()));
  if (bio != nullptr &&
      ::X509_NAME_print_ex(bio.get(), ::X509_get_subject_name(leaf), 0,
                           XN_FLAG_RFC2253) >= 0) {
    char* data = nullptr;
    const long size = ::BIO_get_mem_data(bio.get(), &data);
    if (size > 0) text.assign(data, static_cast<size_t>(size));
  }
  if (BIGNUM* serial =
          ::ASN1_INTEGER_to_BN(::X509_get0_serialNumber(leaf), nullptr)) {
    if (char* hex = ::BN_bn2hex(serial)) {
      text += std::string(", serial ") + hex;
      ::OPENSSL_free(hex);
    }
    ::BN_free(serial);
  }
  return text;
}

}  // namespace

Result<HttpEdgeTlsContext> LoadHttpEdgeTls(const HttpEdgeTls& tls,
                                           const std::string& what) {
  MT_ASSIGN_OR_RETURN(std::string cert_pem,
                      ReadPem(tls.cert_file, "certificate", what));
  MT_ASSIGN_OR_RETURN(std::string key_pem, ReadPem(tls.key_file, "key", what));
  ::ERR_clear_error();

  HttpEdgeTlsContext loaded;
  loaded.context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = loaded.context->native_handle();
  boost::system::error_code ec;
  // TLS 1.2 and 1.3 only; no compression (CRIME); no renegotiation (a
  // client could make the I/O thread do a handshake per request).
  loaded.context->set_options(
      ssl::context::default_workarounds | ssl::context::no_sslv2 |
          ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
          ssl::context::no_tlsv1_1 | ssl::context::no_compression |
          ssl::context::single_dh_use,
      ec);
  if (ec || ::SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return Status(ErrorReason::kInternal,
                  "cannot restrict the TLS versions of " + what + ": " +
                      OpenSslReason(ec.message()));
  }
  ::SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION);

  if (loaded.context->use_certificate_chain(
          boost::asio::buffer(cert_pem.data(), cert_pem.size()), ec)) {
    return Status::InvalidArgument(
        "the TLS certificate file '" + tls.cert_file + "' of " + what +
        " holds no usable PEM certificate: " + OpenSslReason(ec.message()));
  }
  X509* leaf = ::SSL_CTX_get0_certificate(native);

  if (key_pem.find("-----BEGIN ENCRYPTED") != std::string::npos ||
      key_pem.find("Proc-Type: 4,ENCRYPTED") != std::string::npos) {
    return Status::InvalidArgument(
        "the TLS key file '" + tls.key_file + "' of " + what +
        " holds an encrypted key: give the key unencrypted (and "
        "readable by this user only)");
  }
  std::unique_ptr<BIO, BioFree> key_bio(
      ::BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      key_bio == nullptr ? nullptr
                         : ::PEM_read_bio_PrivateKey(key_bio.get(), nullptr,
                                                     NoPassphrase, nullptr));
  if (key == nullptr) {
    return Status::InvalidArgument("the TLS key file '" + tls.key_file +
                                   "' of " + what +
                                   " holds no usable PEM private key: " +
                                   OpenSslReason("not a private key"));
  }
  if (leaf == nullptr || ::X509_check_private_key(leaf, key.get()) != 1 ||
      ::SSL_CTX_use_PrivateKey(native, key.get()) != 1 ||
      ::SSL_CTX_check_private_key(native) != 1) {
    ::ERR_clear_error();
    return Status::InvalidArgument(
        "the TLS key file '" + tls.key_file + "' of " + what +
        " does not hold the key of the certificate in '" + tls.cert_file + "'");
  }

  const std::optional<int64_t> not_before =
      EpochSeconds(::X509_get0_notBefore(leaf));
  const std::optional<int64_t> not_after =
      EpochSeconds(::X509_get0_notAfter(leaf));
  if (!not_before || !not_after) {
    ::ERR_clear_error();
    return Status::InvalidArgument("the TLS certificate in '" + tls.cert_file +
                                   "' of " + what +
                                   " has an unreadable validity period");
  }
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  if (now > *not_after) {
    return Status::InvalidArgument("the TLS certificate in '" + tls.cert_file +
                                   "' of " + what + " expired at " +
                                   IsoTime(*not_after) + " (now " +
                                   IsoTime(now) + "): renew it");
  }
  if (now < *not_before) {
    spdlog::warn(
        "admin: the TLS certificate in '{}' of {} is not valid before {} "
        "(now {}): clients refuse it until then; is this host's clock "
        "behind?",
        tls.cert_file, what, IsoTime(*not_before), IsoTime(now));
  }
  loaded.not_after = *not_after;
  loaded.description = Describe(leaf) + ", valid until " + IsoTime(*not_after);
  ::ERR_clear_error();
  return loaded;
}

}  // namespace mooncake_tier::admin
