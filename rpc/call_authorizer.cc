#include "rpc/call_authorizer.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

#include "grpcpp/security/auth_context.h"
#include "grpcpp/server_context.h"
#include "rpc/tls_credentials.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::rpc {
namespace {

constexpr std::string_view kBearer = "Bearer ";
constexpr auto kLogInterval = std::chrono::seconds(10);

std::string RoleNames(uint8_t roles) {
  if (roles == (kNodeRole | kClientRole)) return "a node's or a client's";
  return roles == kNodeRole ? "a node's" : "a client's";
}

std::string_view Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

}  // namespace

Result<std::vector<std::string>> ReadTokenLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Status(ErrorReason::kInvalidArgument,
                  "cannot read the token file '" + path + "'");
  }
  std::vector<std::string> tokens;
  std::string line;
  while (std::getline(in, line)) {
    const std::string_view token = Trim(line);
    if (token.empty() || token.front() == '#') continue;
    tokens.emplace_back(token);
  }
  if (tokens.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "the token file '" + path + "' holds no token");
  }
  return tokens;
}

Result<std::shared_ptr<const CallAuthorizer::Sets>> CallAuthorizer::Digests(
    const CallTokens& tokens, bool certificates) {
  auto sets = std::make_shared<Sets>();
  auto add = [](const std::vector<std::string>& from,
                std::vector<Digest>* to) -> Status {
    for (const std::string& token : from) {
      if (token.size() < kMinTokenBytes) {
        return Status(ErrorReason::kInvalidArgument,
                      "a token must be at least " +
                          std::to_string(kMinTokenBytes) +
                          " characters long (e.g. `openssl rand -hex 32`)");
      }
      Digest digest;
      SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(),
             digest.data());
      to->push_back(digest);
    }
    return Status::Ok();
  };
  MT_RETURN_IF_ERROR(add(tokens.node, &sets->node));
  MT_RETURN_IF_ERROR(add(tokens.client, &sets->client));
  if (sets->node.empty() && sets->client.empty() && !certificates) {
    return Status(ErrorReason::kInvalidArgument, "no token given");
  }
  for (const Digest& node : sets->node) {
    for (const Digest& client : sets->client) {
      if (node == client) {
        return Status(ErrorReason::kInvalidArgument,
                      "the same token is given to nodes and clients");
      }
    }
  }
  return std::shared_ptr<const Sets>(std::move(sets));
}

Result<std::unique_ptr<CallAuthorizer>> CallAuthorizer::Create(
    CallTokens tokens, bool certificates) {
  MT_ASSIGN_OR_RETURN(std::shared_ptr<const Sets> sets,
                      Digests(tokens, certificates));
  return std::unique_ptr<CallAuthorizer>(
      new CallAuthorizer(std::move(sets), certificates));
}

CallAuthorizer::CallAuthorizer(std::shared_ptr<const Sets> sets,
                               bool certificates)
    : certificates_(certificates), sets_(std::move(sets)) {}

Status CallAuthorizer::SetTokens(CallTokens tokens) {
  MT_ASSIGN_OR_RETURN(std::shared_ptr<const Sets> sets,
                      Digests(tokens, certificates_));
  MutexLock lock(&mu_);
  sets_ = std::move(sets);
  return Status::Ok();
}

std::shared_ptr<const CallAuthorizer::Sets> CallAuthorizer::sets() const {
  MutexLock lock(&mu_);
  return sets_;
}

Status CallAuthorizer::Authorize(const grpc::ServerContext& context,
                                 uint8_t allowed,
                                 std::string_view method) const {
  if (certificates_) {
    // A verified client certificate settles the role; a caller without
    // one (optional client certificates) goes on to the token check.
    const std::shared_ptr<const grpc::AuthContext> auth =
        context.auth_context();
    if (auth != nullptr && auth->IsPeerAuthenticated()) {
      return AuthorizeCertificate(auth->FindPropertyValues("peer_spiffe_id"),
                                  allowed, method);
    }
  }
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  const std::string_view value =
      it == metadata.end()
          ? std::string_view()
          : std::string_view(it->second.data(), it->second.size());
  return AuthorizeBearer(value, allowed, method);
}

Status CallAuthorizer::AuthorizeBearer(std::string_view authorization,
                                       uint8_t allowed,
                                       std::string_view method) const {
  const std::string needs =
      std::string(method) + " needs " + RoleNames(allowed) + " token";
  if (authorization.empty()) {
    return Refuse(needs +
                  " ('authorization: Bearer <token>'); the call "
                  "carried none");
  }
  if (authorization.substr(0, kBearer.size()) != kBearer) {
    return Refuse(needs +
                  "; the authorization metadata is not "
                  "'Bearer <token>'");
  }
  const std::string_view token = authorization.substr(kBearer.size());
  Digest digest;
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(),
         digest.data());
  // Every digest is compared (no early exit), so the time taken does not
  // tell which role, if any, a guess came close to.
  auto matches = [&digest](const std::vector<Digest>& set) {
    bool found = false;
    for (const Digest& known : set) {
      found |= CRYPTO_memcmp(known.data(), digest.data(), digest.size()) == 0;
    }
    return found;
  };
  const std::shared_ptr<const Sets> sets = this->sets();
  const bool node = matches(sets->node);
  const bool client = matches(sets->client);
  if ((node && (allowed & kNodeRole)) || (client && (allowed & kClientRole))) {
    return Status::Ok();
  }
  if (node || client) {
    return Refuse(needs + "; the caller presented " +
                  RoleNames(node ? kNodeRole : kClientRole) + " token");
  }
  return Refuse(needs + "; the token presented is not known");
}

Status CallAuthorizer::AuthorizeCertificate(
    const std::vector<grpc::string_ref>& spiffe_ids, uint8_t allowed,
    std::string_view method) const {
  const std::string needs =
      std::string(method) + " needs " + RoleNames(allowed) + " certificate";
  if (spiffe_ids.size() != 1) {
    return Refuse(needs + "; the caller's certificate has no single URI name");
  }
  const std::string_view uri(spiffe_ids.front().data(),
                             spiffe_ids.front().size());
  const std::optional<TlsRole> role = TlsRoleFromUri(uri);
  if (!role.has_value()) {
    return Refuse(needs + "; the caller's certificate names '" +
                  std::string(uri) + "', no role of this store");
  }
  if ((RolesOfCertificate(*role) & allowed) != 0) return Status::Ok();
  return Refuse(needs + "; the caller's certificate is " +
                std::string(TlsRoleName(*role)) + "'s");
}

uint8_t RolesOfCertificate(TlsRole role) {
  switch (role) {
    case TlsRole::kMaster:  // a standalone daemon's node dials with it
    case TlsRole::kNode:
      return kNodeRole;
    case TlsRole::kClient:
    case TlsRole::kAdmin:
      return kClientRole;
  }
  return 0;
}

Status CallAuthorizer::Refuse(std::string message) const {
  refused_.fetch_add(1);
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_logged_ns_.load();
  if (now - last >= std::chrono::nanoseconds(kLogInterval).count() &&
      last_logged_ns_.compare_exchange_strong(last, now)) {
    spdlog::warn("rpc: refused a call: {} ({} refused so far)", message,
                 refused_.load());
  }
  return Status(ErrorReason::kUnauthenticated, std::move(message));
}

}  // namespace mooncake_tier::rpc
