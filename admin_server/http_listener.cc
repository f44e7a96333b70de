#include "admin_server/http_listener.h"

#include <sys/socket.h>

#include <chrono>
#include <string>

#include "httplib.h"

namespace mooncake_tier::admin {

Status CheckListenerOptions(const AdminServerOptions& options,
                            std::string_view what) {
  if (options.token.empty() && !IsLoopbackAddress(options.bind_address)) {
    return Status(ErrorReason::kInvalidArgument,
                  "refusing to serve " + std::string(what) + " on '" +
                      options.bind_address +
                      "' without an admin token: set --admin-token or bind "
                      "a loopback address");
  }
  if (options.max_body_bytes == 0 || options.max_header_bytes == 0 ||
      options.threads == 0 || options.keep_alive_seconds <= 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "admin server limits and threads must be positive");
  }
  return Status::Ok();
}

void ConfigureListener(httplib::Server& server,
                       const AdminServerOptions& options) {
  const size_t threads = options.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_socket_options([](int sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.set_payload_max_length(options.max_body_bytes);
  server.set_keep_alive_timeout(options.keep_alive_seconds);
  // The server writes headers and body separately; with Nagle on, a small
  // body waits for the client's delayed ACK (~40 ms on Linux) on every
  // keep-alive request (measured by bench `admin`).
  server.set_tcp_nodelay(true);
}

Result<uint16_t> BindAndServe(httplib::Server& server,
                              const AdminServerOptions& options,
                              std::string_view what, std::thread* thread) {
  const int port =
      options.port == 0
          ? server.bind_to_any_port(options.bind_address)
          : (server.bind_to_port(options.bind_address, options.port)
                 ? options.port
                 : -1);
  if (port <= 0) {
    return Status(ErrorReason::kUnavailable,
                  "cannot bind " + std::string(what) + " to " +
                      options.bind_address + ":" +
                      std::to_string(options.port) +
                      ": address in use or not an address of this host");
  }
  *thread = std::thread([&server] { server.listen_after_bind(); });
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!server.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return static_cast<uint16_t>(port);
}

}  // namespace mooncake_tier::admin
