#include "rpc/master_stub.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "rpc/batch_util.h"
#include "rpc/convert.h"
#include "rpc/master_source.h"
#include "rpc/tls_credentials.h"

namespace mooncake_tier::rpc {

namespace {

std::vector<std::string> SplitTargets(const std::string& target) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (true) {
    const size_t comma = target.find(',', begin);
    out.push_back(target.substr(begin, comma - begin));
    if (comma == std::string::npos) return out;
    begin = comma + 1;
  }
}

std::string Trimmed(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  size_t first = 0;
  while (first < text.size() && text[first] == ' ') ++first;
  return text.substr(first);
}

}  // namespace

Result<std::unique_ptr<MasterStub>> MasterStub::Create(
    GrpcChannelOptions options) {
  if (options.target.empty()) {
    return Status(ErrorReason::kInvalidArgument, "master address is empty");
  }
  const std::vector<std::string> targets = SplitTargets(options.target);
  if (targets.size() > kMaxMasterAddresses) {
    return Status(ErrorReason::kInvalidArgument,
                  std::to_string(targets.size()) +
                      " master addresses; the limit is " +
                      std::to_string(kMaxMasterAddresses));
  }
  for (const std::string& target : targets) {
    if (Trimmed(target).empty()) {
      return Status(
          ErrorReason::kInvalidArgument,
          "empty entry in the master addresses '" + options.target + "'");
    }
  }
  if (options.deadline <= Duration::zero()) {
    return Status(ErrorReason::kInvalidArgument,
                  "RPC deadline must be positive");
  }
  if (options.keepalive < kMinKeepalive) {
    return Status(ErrorReason::kInvalidArgument,
                  "keepalive must be at least " +
                      std::to_string(
                          std::chrono::duration_cast<std::chrono::milliseconds>(
                              kMinKeepalive)
                              .count()) +
                      " ms");
  }
  return std::unique_ptr<MasterStub>(new MasterStub(std::move(options)));
}

MasterStub::MasterStub(GrpcChannelOptions options)
    : options_(std::move(options)),
      authorization_(options_.token.empty() ? std::string()
                                            : "Bearer " + options_.token),
      credentials_(options_.tls ? MakeChannelCredentials(*options_.tls)
                                : grpc::InsecureChannelCredentials()) {
  if (options_.recorder == nullptr) {
    owned_recorder_ = std::make_unique<CallRecorder>(MasterMethodNames());
  }
  recorder_ = options_.recorder ? options_.recorder : owned_recorder_.get();
  const std::vector<std::string> targets = SplitTargets(options_.target);
  probe_ = targets.size() > 1;
  MutexLock lock(&mu_);
  for (const std::string& target : targets) {
    AddEndpointLocked(Trimmed(target));
  }
}

MasterStub::~MasterStub() = default;

MasterStub::Endpoint& MasterStub::AddEndpointLocked(const std::string& target) {
  for (const auto& endpoint : endpoints_) {
    if (endpoint->target == target) return *endpoint;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  const int backoff_ms =
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                           options_.max_reconnect_backoff)
                           .count());
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, std::max(backoff_ms, 1));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              std::clamp(backoff_ms / 10, 1, 100));
  // Without this a channel whose master went away waits far longer than
  // the backoff before it dials again: re-resolving the target is
  // rate-limited to once per 30 s by default.
  args.SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS,
              std::max(backoff_ms, 1));
  if (probe_) {
    // Probes find a master that stopped answering without closing the
    // connection (paused, or its host gone): a probe unanswered for twice
    // `keepalive` fails the connection's calls UNAVAILABLE, which Redirect
    // turns into another address. They go on while a call waits for its
    // answer (a long poll sends nothing) and while the connection is idle.
    const int keepalive_ms =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                             options_.keepalive)
                             .count());
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive_ms);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2 * keepalive_ms);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  }
  // The longest one connection attempt may take (gRPC calls it the minimum
  // reconnect backoff). gRPC's default, 20 s, is how long a call, and every
  // call queued behind it, waits on an attempt that never completes: a
  // paused master's kernel accepts the connection but no handshake follows;
  // and a node's connection attempt made just as its restarted master
  // began to listen was seen completing only 5 s later, its heartbeat
  // waiting out the deadline meanwhile. Given up, the next attempt gets
  // through at once. With probes, as long as a probe may go unanswered.
  const Duration connect_timeout =
      probe_ ? 2 * options_.keepalive : kConnectTimeout;
  args.SetInt(
      GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
      static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(connect_timeout)
              .count()));
  if (options_.tls && !options_.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options_.tls_server_name);
  }
  auto endpoint = std::make_unique<Endpoint>();
  endpoint->target = target;
  endpoint->stub = proto::MasterService::NewStub(
      grpc::CreateCustomChannel(target, credentials_, args));
  endpoints_.push_back(std::move(endpoint));
  return *endpoints_.back();
}

MasterStub::Endpoint& MasterStub::Current() {
  MutexLock lock(&mu_);
  return *endpoints_[current_];
}

std::string MasterStub::target() const {
  MutexLock lock(&mu_);
  return endpoints_[current_]->target;
}

bool MasterStub::Redirect(const Endpoint& endpoint, const grpc::Status& status,
                          const grpc::ClientContext& context,
                          std::chrono::system_clock::time_point deadline,
                          Attempts* attempts) {
  // Only a master that refused the call (a standby) or could not be
  // reached is worth another try; any other failure is the answer.
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return false;
  std::string leader;
  const auto& trailers = context.GetServerTrailingMetadata();
  if (auto it = trailers.find(kLeaderMetadataKey); it != trailers.end()) {
    leader.assign(it->second.data(), it->second.size());
  }
  const bool refused =
      FromGrpcStatus(status, "", "").reason() == ErrorReason::kNotLeader;
  bool pause = true;
  {
    MutexLock lock(&mu_);
    if (&endpoint != endpoints_[current_].get()) {
      // Another call moved on already: follow it at once.
      pause = false;
    } else if (!leader.empty() && leader != endpoint.target &&
               (endpoints_.size() < kMaxMasterAddresses ||
                std::any_of(
                    endpoints_.begin(), endpoints_.end(),
                    [&](const auto& e) { return e->target == leader; }))) {
      Endpoint& next = AddEndpointLocked(leader);
      for (size_t i = 0; i < endpoints_.size(); ++i) {
        if (endpoints_[i].get() == &next) current_ = i;
      }
      pause = false;
    } else if (endpoints_.size() > 1) {
      current_ = (current_ + 1) % endpoints_.size();
    } else if (!refused) {
      // One master, and it is not there: the caller's error, as before.
      return false;
    }
  }
  if (!pause) return std::chrono::system_clock::now() < deadline;
  const auto resume = std::chrono::system_clock::now() + attempts->pause;
  if (resume >= deadline) return false;
  std::this_thread::sleep_for(attempts->pause);
  attempts->pause = std::min<Duration>(attempts->pause * 2, kMaxRedirectPause);
  return true;
}

Result<NodeView> GetNodeOver(MasterStub& stub, NodeId node) {
  proto::GetNodeRequest req;
  req.add_node_ids(node);
  proto::GetNodeResponse resp;
  const Status call =
      stub.Call(MasterMethod::kGetNode, 1,
                [&](proto::MasterService::Stub& s, grpc::ClientContext* c) {
                  return s.GetNode(c, req, &resp);
                });
  const TimePoint now = stub.Now();
  return std::move(ItemResults<NodeView>(
      call, 1, resp.results(),
      [now](const proto::GetNodeResult& r) -> Result<NodeView> {
        if (!r.has_node()) {
          return Status(ErrorReason::kInvalidArgument,
                        "node missing from an OK result");
        }
        return FromProto(r.node(), now);
      })[0]);
}

}  // namespace mooncake_tier::rpc
