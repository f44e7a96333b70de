#pragma once

// Who may make which MasterService call: the check that runs first in
// every handler (MasterService's Serve), before the call reaches a master.
// A caller proves its role with a verified client certificate naming it
// (mutual TLS, rpc/tls_credentials.h) or, without one, with a bearer token
// in the call's metadata ("authorization: Bearer <token>"): a node's for
// the node calls (RegisterNode, Heartbeat, DeregisterNode, task reports,
// ...), a client's for the client calls (puts, gets, removes, ...);
// GetNode takes either. A call without a known token or certificate is
// UNAUTHENTICATED; one of the other role is UNAUTHENTICATED too, with a
// message naming both roles (the store's Status has no separate permission
// reason).
//
// Tokens are kept as SHA-256 digests and compared in constant time; a set
// may hold several tokens per role, so one can be replaced without a gap
// (add the new one, move the callers, drop the old one). SetTokens swaps
// the sets at once (the daemon does it on SIGHUP). docs/design/security.md
// has the design.
//
// Thread safety: thread-safe.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "mooncake_tier/status.h"
#include "rpc/tls_credentials.h"

namespace grpc {
class ServerContext;
class string_ref;
}  // namespace grpc

namespace mooncake_tier::rpc {

// The roles a call may be made in, as a bit set.
enum PeerRole : uint8_t {
  kNodeRole = 1 << 0,
  kClientRole = 1 << 1,
};

struct CallTokens {
  // Tokens a node may present (one per entry). REQUIRES: each at least
  // kMinTokenBytes long; at least one token in all.
  std::vector<std::string> node;
  // Tokens a client may present.
  std::vector<std::string> client;
};

class CallAuthorizer {
 public:
  // Shorter tokens are refused: they could be guessed.
  static constexpr size_t kMinTokenBytes = 32;

  // With `certificates`, a caller that presents a verified client
  // certificate (TLS, rpc/tls_credentials.h) has the role its certificate
  // names (RolesOfCertificate) and its token is not looked at; callers
  // without one need a token as before.
  //
  // INVALID_ARGUMENT for a short token, a token given to both roles, or no
  // token at all without `certificates`.
  static Result<std::unique_ptr<CallAuthorizer>> Create(
      CallTokens tokens, bool certificates = false);

  // OK when the call's metadata carries a token of one of `allowed`'s roles;
  // else UNAUTHENTICATED saying what was missing. `method` names the call
  // in the message. Refusals are counted and logged at most once per 10 s.
  Status Authorize(const grpc::ServerContext& context, uint8_t allowed,
                   std::string_view method) const;
  // The same from the metadata's value ("Bearer <token>"; empty: none).
  Status AuthorizeBearer(std::string_view authorization, uint8_t allowed,
                         std::string_view method) const;
  // The same from a verified certificate's SPIFFE ids (gRPC's
  // "peer_spiffe_id" property: one for a certificate with one URI name).
  Status AuthorizeCertificate(const std::vector<grpc::string_ref>& spiffe_ids,
                              uint8_t allowed, std::string_view method) const;

  // Replaces both sets. Errors as Create; on error nothing changes.
  Status SetTokens(CallTokens tokens);

  // Calls refused so far.
  uint64_t refused() const { return refused_.load(); }

 private:
  using Digest = std::array<unsigned char, 32>;
  struct Sets {
    std::vector<Digest> node;
    std::vector<Digest> client;
  };

  CallAuthorizer(std::shared_ptr<const Sets> sets, bool certificates);
  static Result<std::shared_ptr<const Sets>> Digests(const CallTokens& tokens,
                                                     bool certificates);
  std::shared_ptr<const Sets> sets() const;
  Status Refuse(std::string message) const;

  const bool certificates_;
  mutable Mutex mu_;
  std::shared_ptr<const Sets> sets_ ABSL_GUARDED_BY(mu_);
  mutable std::atomic<uint64_t> refused_{0};
  // Steady-clock nanoseconds of the last refusal logged.
  mutable std::atomic<int64_t> last_logged_ns_{0};
};

// The call roles a certificate of `role` gives: node calls for node and
// master certificates (a standalone daemon's node dials its master with the
// master's certificate), client calls for client and admin certificates.
uint8_t RolesOfCertificate(TlsRole role);

// Reads a token file: one token per line; blank lines and lines starting
// with '#' are skipped, surrounding whitespace trimmed. INVALID_ARGUMENT
// naming the file when it cannot be read or holds no token.
Result<std::vector<std::string>> ReadTokenLines(const std::string& path);

}  // namespace mooncake_tier::rpc
