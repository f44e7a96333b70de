#include "rpc/tls_credentials.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <utility>

#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_certificate_verifier.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::rpc {
namespace {

constexpr std::string_view kTrustDomain = "spiffe://mooncake-tier/";
constexpr size_t kMaxFileBytes = 1 << 20;
// How often gRPC looks at the in-memory files for new material.
constexpr unsigned kRefreshSeconds = 1;
constexpr auto kExpiryWarning = std::chrono::hours(24 * 7);

// OpenSSL objects owned the usual way.
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct StoreCtxFree {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};
struct StackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
struct NamesFree {
  void operator()(GENERAL_NAMES* n) const { GENERAL_NAMES_free(n); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;

Status Invalid(const std::string& what, const std::string& path,
               const std::string& reason) {
  return Status(ErrorReason::kInvalidArgument,
                what + " '" + path + "': " + reason);
}

// The oldest error OpenSSL queued, as text; clears the queue.
std::string OpenSslReason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "not PEM";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

Result<std::string> ReadPem(const std::string& what, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Invalid(what, path, std::strerror(errno));
  std::string content;
  content.assign(std::istreambuf_iterator<char>(in),
                 std::istreambuf_iterator<char>());
  if (in.bad()) return Invalid(what, path, "read failed");
  if (content.size() > kMaxFileBytes) {
    return Invalid(what, path, "larger than 1 MiB");
  }
  return content;
}

Bio MemoryBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Every certificate in `pem`, in order.
std::vector<Cert> ParseCerts(const std::string& pem) {
  std::vector<Cert> certs;
  Bio bio = MemoryBio(pem);
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  ERR_clear_error();  // the end of the input reads as an error
  return certs;
}

// The URI SANs of `cert`.
std::vector<std::string> UriNames(X509* cert) {
  std::vector<std::string> uris;
  std::unique_ptr<GENERAL_NAMES, NamesFree> names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return uris;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type != GEN_URI) continue;
    const ASN1_IA5STRING* uri = name->d.uniformResourceIdentifier;
    uris.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(uri)),
                      ASN1_STRING_length(uri));
  }
  return uris;
}

std::chrono::system_clock::time_point NotAfter(X509* cert) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) != 1) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

// Checks that `leaf` (with `chain` after it) leads to `store` for `purpose`
// and is valid now; "" or the reason.
std::string Verify(X509_STORE* store, X509* leaf, STACK_OF(X509) * chain,
                   int purpose) {
  std::unique_ptr<X509_STORE_CTX, StoreCtxFree> ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store, leaf, chain) != 1) {
    return "cannot set up the check: " + OpenSslReason();
  }
  X509_STORE_CTX_set_purpose(ctx.get(), purpose);
  if (X509_verify_cert(ctx.get()) == 1) return "";
  const int error = X509_STORE_CTX_get_error(ctx.get());
  ERR_clear_error();
  return X509_verify_cert_error_string(error);
}

// A memory-only file holding `content`; -1 and errno on failure.
int MemoryFile(const std::string& content) {
  const int fd = memfd_create("mooncake-tier-tls", MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  return fd;
}

std::string FdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// Puts a new memory file holding `content` at descriptor `*fd` (made on
// first use): a reader opening FdPath(*fd) sees the old content or the new,
// never a mix.
Status Replace(int* fd, const std::string& content) {
  const int fresh = MemoryFile(content);
  if (fresh < 0) {
    return Status(ErrorReason::kInternal,
                  std::string("cannot hold TLS material in memory: ") +
                      std::strerror(errno));
  }
  if (*fd < 0) {
    *fd = fresh;
    return Status::Ok();
  }
  const int moved = ::dup3(fresh, *fd, O_CLOEXEC);
  const int saved = errno;
  ::close(fresh);
  if (moved < 0) {
    return Status(
        ErrorReason::kInternal,
        std::string("cannot replace TLS material: ") + std::strerror(saved));
  }
  return Status::Ok();
}

// The stub's check of the master's certificate: the address dialed (by
// gRPC's own host name check), then the master role.
class MasterVerifier : public grpc::experimental::ExternalCertificateVerifier {
 public:
  bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> callback,
              grpc::Status* sync_status) override {
    bool master = false;
    for (const grpc::string_ref& uri : request->uri_names()) {
      if (TlsRoleFromUri(std::string_view(uri.data(), uri.size())) ==
          TlsRole::kMaster) {
        master = true;
      }
    }
    if (!master) {
      *sync_status = grpc::Status(
          grpc::StatusCode::UNAUTHENTICATED,
          "the server's certificate does not name the master role (" +
              TlsRoleUri(TlsRole::kMaster) + ")");
      return true;
    }
    return host_names_.Verify(request, std::move(callback), sync_status);
  }
  void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest*) override {
  }

 private:
  grpc::experimental::HostNameCertificateVerifier host_names_;
};

}  // namespace

std::string_view TlsRoleName(TlsRole role) {
  switch (role) {
    case TlsRole::kMaster:
      return "master";
    case TlsRole::kNode:
      return "node";
    case TlsRole::kClient:
      return "client";
    case TlsRole::kAdmin:
      return "admin";
  }
  return "unknown";
}

std::string TlsRoleUri(TlsRole role) {
  return std::string(kTrustDomain) + std::string(TlsRoleName(role));
}

std::optional<TlsRole> TlsRoleFromUri(std::string_view uri) {
  if (uri.substr(0, kTrustDomain.size()) != kTrustDomain) return std::nullopt;
  const std::string_view name = uri.substr(kTrustDomain.size());
  for (TlsRole role :
       {TlsRole::kMaster, TlsRole::kNode, TlsRole::kClient, TlsRole::kAdmin}) {
    if (name == TlsRoleName(role)) return role;
  }
  return std::nullopt;
}

Result<TlsClientAuth> ParseTlsClientAuth(std::string_view text) {
  for (TlsClientAuth auth : {TlsClientAuth::kRequire, TlsClientAuth::kOptional,
                             TlsClientAuth::kNone}) {
    if (text == TlsClientAuthName(auth)) return auth;
  }
  return Status(ErrorReason::kInvalidArgument,
                "client certificates: '" + std::string(text) +
                    "' is not one of require, optional, none");
}

std::string_view TlsClientAuthName(TlsClientAuth auth) {
  switch (auth) {
    case TlsClientAuth::kRequire:
      return "require";
    case TlsClientAuth::kOptional:
      return "optional";
    case TlsClientAuth::kNone:
      return "none";
  }
  return "unknown";
}

Result<TlsMaterial> LoadTlsMaterial(const TlsFiles& files, uint8_t uses,
                                    const std::vector<TlsRole>& roles) {
  if (files.ca.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "TLS needs a CA bundle (--tls-ca)");
  }
  if (files.cert.empty() != files.key.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "a TLS certificate needs its key and a key its certificate "
                  "(--tls-cert with --tls-key)");
  }
  TlsMaterial material;
  MT_ASSIGN_OR_RETURN(material.ca_pem, ReadPem("CA bundle", files.ca));
  std::vector<Cert> cas = ParseCerts(material.ca_pem);
  if (cas.empty()) {
    return Invalid("CA bundle", files.ca, "holds no PEM certificate");
  }
  if (!files.has_identity()) return material;

  MT_ASSIGN_OR_RETURN(std::string chain_pem,
                      ReadPem("certificate", files.cert));
  std::vector<Cert> chain = ParseCerts(chain_pem);
  if (chain.empty()) {
    return Invalid("certificate", files.cert, "holds no PEM certificate");
  }
  MT_ASSIGN_OR_RETURN(std::string key_pem, ReadPem("key", files.key));
  Bio key_bio = MemoryBio(key_pem);
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    return Invalid(
        "key", files.key,
        "holds no unencrypted PEM private key (" + OpenSslReason() + ")");
  }
  X509* leaf = chain.front().get();
  if (X509_check_private_key(leaf, key.get()) != 1) {
    ERR_clear_error();
    return Invalid("key", files.key,
                   "does not match the certificate in '" + files.cert + "'");
  }

  std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
  for (const Cert& ca : cas) X509_STORE_add_cert(store.get(), ca.get());
  std::unique_ptr<STACK_OF(X509), StackFree> intermediates(sk_X509_new_null());
  for (size_t i = 1; i < chain.size(); ++i) {
    X509_up_ref(chain[i].get());
    sk_X509_push(intermediates.get(), chain[i].get());
  }
  const std::pair<uint8_t, int> purposes[] = {
      {kTlsServer, X509_PURPOSE_SSL_SERVER},
      {kTlsClient, X509_PURPOSE_SSL_CLIENT}};
  for (const auto& [use, purpose] : purposes) {
    if ((uses & use) == 0) continue;
    const std::string reason =
        Verify(store.get(), leaf, intermediates.get(), purpose);
    if (!reason.empty()) {
      return Invalid(
          "certificate", files.cert,
          std::string(use == kTlsServer ? "as a server" : "as a client") +
              ", against the CA bundle '" + files.ca + "': " + reason);
    }
  }

  const std::vector<std::string> uris = UriNames(leaf);
  std::string wanted;
  for (TlsRole role : roles) {
    wanted += (wanted.empty() ? "" : " or ") + TlsRoleUri(role);
  }
  if (uris.size() != 1) {
    return Invalid("certificate", files.cert,
                   "needs exactly one URI name (" + wanted + "), has " +
                       std::to_string(uris.size()));
  }
  const std::optional<TlsRole> role = TlsRoleFromUri(uris.front());
  bool allowed = false;
  for (TlsRole r : roles) allowed = allowed || role == r;
  if (!allowed) {
    return Invalid("certificate", files.cert,
                   "names '" + uris.front() + "', not " + wanted);
  }
  material.role = role;
  material.not_after = NotAfter(leaf);
  material.identity_pem = key_pem + "\n" + chain_pem;
  return material;
}

TlsIdentity::TlsIdentity(TlsFiles files, uint8_t uses,
                         std::vector<TlsRole> roles)
    : files_(std::move(files)), uses_(uses), roles_(std::move(roles)) {}

TlsIdentity::~TlsIdentity() {
  provider_.reset();  // stops gRPC's reader before its files go
  MutexLock lock(&mu_);
  if (identity_fd_ >= 0) ::close(identity_fd_);
  if (ca_fd_ >= 0) ::close(ca_fd_);
}

Result<std::unique_ptr<TlsIdentity>> TlsIdentity::Create(
    TlsFiles files, uint8_t uses, std::vector<TlsRole> roles) {
  MT_ASSIGN_OR_RETURN(TlsMaterial material,
                      LoadTlsMaterial(files, uses, roles));
  std::unique_ptr<TlsIdentity> identity(
      new TlsIdentity(std::move(files), uses, std::move(roles)));
  std::string identity_path, ca_path;
  {
    MutexLock lock(&identity->mu_);
    MT_RETURN_IF_ERROR(identity->Publish(material));
    if (identity->identity_fd_ >= 0) {
      identity_path = FdPath(identity->identity_fd_);
    }
    ca_path = FdPath(identity->ca_fd_);
  }
  // The key and the chain come from one file, so gRPC can never pair a
  // new key with an old certificate (OpenSSL's PEM readers skip blocks of
  // the other kind).
  identity->provider_ =
      std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          identity_path, identity_path, ca_path, kRefreshSeconds);
  return identity;
}

Status TlsIdentity::Publish(const TlsMaterial& material) {
  if (!material.identity_pem.empty()) {
    MT_RETURN_IF_ERROR(Replace(&identity_fd_, material.identity_pem));
  }
  MT_RETURN_IF_ERROR(Replace(&ca_fd_, material.ca_pem));
  role_ = material.role;
  not_after_ = material.not_after;
  if (material.role.has_value() &&
      material.not_after - std::chrono::system_clock::now() < kExpiryWarning) {
    spdlog::warn("TLS: the certificate '{}' expires in less than 7 days",
                 files_.cert);
  }
  return Status::Ok();
}

Status TlsIdentity::Reload() {
  Result<TlsMaterial> material = LoadTlsMaterial(files_, uses_, roles_);
  MutexLock lock(&mu_);
  Status published = material.ok() ? Publish(*material) : material.status();
  if (!published.ok()) ++reload_failures_;
  return published;
}

std::optional<TlsRole> TlsIdentity::role() const {
  MutexLock lock(&mu_);
  return role_;
}

std::chrono::system_clock::time_point TlsIdentity::not_after() const {
  MutexLock lock(&mu_);
  return not_after_;
}

uint64_t TlsIdentity::reload_failures() const {
  MutexLock lock(&mu_);
  return reload_failures_;
}

std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(
    const TlsIdentity& identity, TlsClientAuth auth) {
  grpc::experimental::TlsServerCredentialsOptions options(identity.provider());
  options.watch_identity_key_cert_pairs();
  options.watch_root_certs();
  switch (auth) {
    case TlsClientAuth::kRequire:
      options.set_cert_request_type(
          GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
      break;
    case TlsClientAuth::kOptional:
      options.set_cert_request_type(
          GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
      break;
    case TlsClientAuth::kNone:
      options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
      break;
  }
  return grpc::experimental::TlsServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> MakeChannelCredentials(
    const TlsIdentity& identity) {
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(identity.provider());
  options.watch_root_certs();
  if (identity.has_identity()) options.watch_identity_key_cert_pairs();
  options.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<
          MasterVerifier>());
  return grpc::experimental::TlsCredentials(options);
}

}  // namespace mooncake_tier::rpc
