#include "rpc/rpc_server.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/server_interceptor.h"
#include "rpc/grpc_channel_options.h"

namespace mooncake_tier::rpc {

namespace {

// "host:port" with the port replaced by `port`.
std::string WithPort(const std::string& address, int port) {
  const size_t colon = address.rfind(':');
  const std::string host =
      colon == std::string::npos ? address : address.substr(0, colon);
  return host + ":" + std::to_string(port);
}

// gRPC answers a request body that does not parse as the method's message
// with INTERNAL, which says "the server is broken" to callers, retry loops
// and dashboards alike. The caller sent garbage: this turns that answer, and
// only that one, into INVALID_ARGUMENT. The handler never ran, so nothing
// changed.
class MalformedRequestInterceptor final
    : public grpc::experimental::Interceptor {
 public:
  explicit MalformedRequestInterceptor(const char* method)
      : method_(method ? method : "?") {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* batch) override {
    using grpc::experimental::InterceptionHookPoints;
    if (batch->QueryInterceptionHookPoint(
            InterceptionHookPoints::POST_RECV_MESSAGE) &&
        batch->GetRecvMessage() == nullptr) {
      unparsed_ = true;
    }
    if (unparsed_ && batch->QueryInterceptionHookPoint(
                         InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status sent = batch->GetSendStatus();
      if (sent.error_code() == grpc::StatusCode::INTERNAL) {
        batch->ModifySendStatus(grpc::Status(
            grpc::StatusCode::INVALID_ARGUMENT,
            std::string("the request is not a valid message for ") + method_ +
                (sent.error_message().empty()
                     ? ""
                     : " (" + sent.error_message() + ")")));
      }
    }
    batch->Proceed();
  }

 private:
  const char* const method_;
  bool unparsed_ = false;
};

class MalformedRequestInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MalformedRequestInterceptor(info->method());
  }
};

}  // namespace

Result<std::unique_ptr<RpcServer>> RpcServer::Start(
    const RpcServerOptions& options, std::vector<grpc::Service*> services) {
  if (options.address.empty()) {
    return Status(ErrorReason::kInvalidArgument, "RPC address is empty");
  }
  if (options.min_pollers < 1 || options.max_pollers < options.min_pollers) {
    return Status(ErrorReason::kInvalidArgument,
                  "RPC server needs 1 <= min_pollers <= max_pollers");
  }
  if (services.empty()) {
    return Status(ErrorReason::kInvalidArgument, "no services to serve");
  }
  // grpc.health.v1.Health on every server: what load balancers and
  // orchestrators probe, and the bare round trip a benchmark compares the
  // service's calls with (mooncake-tier-bench metadata). Process-wide; set
  // before the builder.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.address,
                           options.credentials
                               ? options.credentials
                               : grpc::InsecureServerCredentials(),
                           &port);
  if (options.credentials) {
    auto ms = [](Duration d) {
      return static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
    };
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                               ms(options.max_connection_age));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                               ms(options.max_connection_age_grace));
  }
  // A second server on a port in use is a mistake (two masters), not load
  // sharing: refuse it.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Stubs probe their connections (GrpcChannelOptions::keepalive), idle or
  // not; gRPC's server would otherwise take a probe more often than every
  // 5 minutes as abuse and close the connection.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                           kMinKeepalive / 2)
                           .count()));
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.SetSyncServerOption(
      grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, options.min_pollers);
  builder.SetSyncServerOption(
      grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, options.max_pollers);
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(
      std::make_unique<MalformedRequestInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  for (grpc::Service* service : services) builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    if (server) server->Shutdown();
    return Status(ErrorReason::kUnavailable,
                  "cannot serve RPC on '" + options.address +
                      "' (address in use or invalid)");
  }
  return std::unique_ptr<RpcServer>(
      new RpcServer(std::move(server), port, WithPort(options.address, port)));
}

RpcServer::RpcServer(std::unique_ptr<grpc::Server> server, int port,
                     std::string address)
    : port_(port), address_(std::move(address)), server_(std::move(server)) {}

RpcServer::~RpcServer() { Shutdown(); }

void RpcServer::Shutdown(Duration grace) {
  MutexLock lock(&mu_);
  if (!server_) return;
  server_->Shutdown(
      std::chrono::system_clock::now() +
      std::chrono::duration_cast<std::chrono::microseconds>(grace));
  server_->Wait();
  server_.reset();
}

}  // namespace mooncake_tier::rpc
