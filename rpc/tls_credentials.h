#pragma once

// TLS for the gRPC plane (docs/design/security.md): who a certificate says
// its holder is, the checks a certificate, its key and the CA bundle pass
// before gRPC is given them, a reloadable identity, and the credentials of
// the master's server and of the stubs that dial it.
//
// A role is one URI SAN, spiffe://mooncake-tier/<role>, with role master,
// node, client or admin (scripts/make-test-ca.sh makes such certificates).
// The master serves with a master certificate; nodes dial it with a node
// certificate (a standalone daemon's node with the master's own), clients
// with a client or admin certificate, or with none (server-side TLS, the
// caller then proves its role with a token). A stub accepts a server only
// if its certificate names the master role, so that no other certificate
// of the same CA can pose as the master.
//
// gRPC 1.51 reads certificates from files and checks nothing in them, so a
// TlsIdentity checks the operator's files with OpenSSL first and hands
// gRPC checked copies, held in memory-only files (memfd) of this process:
// a bad file on reload keeps the identity in use, and no copy of a key is
// ever written to disk.
//
// Thread safety: TlsIdentity is thread-safe; the functions are.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "mooncake_tier/status.h"

namespace grpc {
class ChannelCredentials;
class ServerCredentials;
namespace experimental {
class CertificateProviderInterface;
}  // namespace experimental
}  // namespace grpc

namespace mooncake_tier::rpc {

enum class TlsRole : uint8_t { kMaster, kNode, kClient, kAdmin };
// "master", "node", "client", "admin".
std::string_view TlsRoleName(TlsRole role);
// "spiffe://mooncake-tier/<role>".
std::string TlsRoleUri(TlsRole role);
// The role `uri` names; nullopt for any other URI.
std::optional<TlsRole> TlsRoleFromUri(std::string_view uri);

// Whether a master asks callers for a certificate.
enum class TlsClientAuth {
  kRequire,   // every caller presents one from the CA
  kOptional,  // callers without one prove their role with a token
  kNone,      // never asked: tokens only
};
// "require", "optional", "none"; INVALID_ARGUMENT naming them otherwise.
Result<TlsClientAuth> ParseTlsClientAuth(std::string_view text);
std::string_view TlsClientAuthName(TlsClientAuth auth);

struct TlsFiles {
  // PEM certificate chain, leaf first. Empty on a client that shows no
  // certificate (then `key` is empty too).
  std::string cert;
  // PEM private key of the leaf (unencrypted).
  std::string key;
  // PEM bundle of the CA certificates peers' chains must lead to.
  // REQUIRES: non-empty.
  std::string ca;

  bool has_identity() const { return !cert.empty(); }
};

// What a certificate must be fit for (OpenSSL's purposes), as bits.
enum TlsUse : uint8_t {
  kTlsServer = 1 << 0,
  kTlsClient = 1 << 1,
};

// Checked material, ready for gRPC.
struct TlsMaterial {
  std::string identity_pem;  // the key, then the chain; empty: none
  std::string ca_pem;
  // Of the leaf (unset without an identity).
  std::optional<TlsRole> role;
  std::chrono::system_clock::time_point not_after;
};

// Reads and checks `files`: the chain and key parse and match; the leaf
// chains to the bundle, is fit for every use in `uses` and is valid now;
// its one URI SAN names a role in `roles`. INVALID_ARGUMENT naming the
// file and the reason otherwise. Files over 1 MiB are refused.
Result<TlsMaterial> LoadTlsMaterial(const TlsFiles& files, uint8_t uses,
                                    const std::vector<TlsRole>& roles);

// The material a process serves or dials with, re-read on Reload. Hands
// gRPC a certificate provider that picks up a reload within a second.
class TlsIdentity {
 public:
  // LoadTlsMaterial's errors; INTERNAL when the in-memory files cannot be
  // made.
  static Result<std::unique_ptr<TlsIdentity>> Create(
      TlsFiles files, uint8_t uses, std::vector<TlsRole> roles);
  ~TlsIdentity();
  TlsIdentity(const TlsIdentity&) = delete;
  TlsIdentity& operator=(const TlsIdentity&) = delete;

  // Reads the files again. On any error nothing changes (the identity in
  // use stays) and the error names the file. New handshakes use new
  // material within about a second; connections open keep theirs.
  Status Reload();

  // For gRPC's TLS options; valid for the identity's life.
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider()
      const {
    return provider_;
  }
  const TlsFiles& files() const { return files_; }
  bool has_identity() const { return files_.has_identity(); }
  // The role and expiry of the certificate in use.
  std::optional<TlsRole> role() const;
  std::chrono::system_clock::time_point not_after() const;
  // Reloads that failed so far.
  uint64_t reload_failures() const;

 private:
  TlsIdentity(TlsFiles files, uint8_t uses, std::vector<TlsRole> roles);
  Status Publish(const TlsMaterial& material)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const TlsFiles files_;
  const uint8_t uses_;
  const std::vector<TlsRole> roles_;
  mutable Mutex mu_;
  // Descriptors whose /proc/self/fd paths gRPC reads: -1 when unused.
  int identity_fd_ ABSL_GUARDED_BY(mu_) = -1;
  int ca_fd_ ABSL_GUARDED_BY(mu_) = -1;
  std::optional<TlsRole> role_ ABSL_GUARDED_BY(mu_);
  std::chrono::system_clock::time_point not_after_ ABSL_GUARDED_BY(mu_);
  uint64_t reload_failures_ ABSL_GUARDED_BY(mu_) = 0;
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider_;
};

// The master's server credentials: its identity, and client certificates
// asked for as `auth` says, checked against the identity's CA bundle.
// REQUIRES: identity.has_identity().
std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(
    const TlsIdentity& identity, TlsClientAuth auth);

// A stub's channel credentials: the server's chain must lead to the
// identity's CA bundle, name the address dialed (or the target name
// override, GRPC_SSL_TARGET_NAME_OVERRIDE_ARG) and carry the master role;
// the identity's certificate, if any, is shown to the server.
std::shared_ptr<grpc::ChannelCredentials> MakeChannelCredentials(
    const TlsIdentity& identity);

}  // namespace mooncake_tier::rpc
