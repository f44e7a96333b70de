#pragma once

// The server side of an HTTPS admin port: reads and checks a certificate
// and its key into a new asio TLS context (TLS 1.2 and later, no
// compression, no renegotiation, OpenSSL's default ciphers). Private to the
// edge (http_edge.cc), like everything that includes Boost.
//
// Thread safety: LoadHttpEdgeTls may run on any thread; a loaded context is
// shared read-only by the sessions that use it.

#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "admin_server/http_edge.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier::admin {

struct HttpEdgeTlsContext {
  std::shared_ptr<boost::asio::ssl::context> context;
  // The leaf's notAfter, in seconds since the epoch.
  int64_t not_after = 0;
  // "CN=master,O=mooncake-tier, serial 1F2E..., valid until
  // 2026-01-31T12:00:00Z": for the log.
  std::string description;
};

// Reads `tls.cert_file` (PEM chain, leaf first) and `tls.key_file` (PEM,
// unencrypted). INVALID_ARGUMENT naming the file and the reason when one
// cannot be read or parsed, the key is encrypted or is not the
// certificate's, or the leaf's notAfter has passed; a leaf whose notBefore
// is still ahead (a clock behind its issuer's) is logged as a warning and
// loaded. `what` names the port in the messages.
Result<HttpEdgeTlsContext> LoadHttpEdgeTls(const HttpEdgeTls& tls,
                                           const std::string& what);

}  // namespace mooncake_tier::admin
