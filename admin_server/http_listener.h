#pragma once

// What the master's AdminServer and a node's NodeAdminServer share about
// their HTTP listener (cpp-httplib): option checks, socket and limit
// settings, and bind-then-serve on a thread of their own.
//
// Thread safety: call from the owner's thread, before and while starting.

#include <cstdint>
#include <string_view>
#include <thread>

#include "admin_server/admin_server.h"
#include "mooncake_tier/status.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace mooncake_tier::admin {

// INVALID_ARGUMENT for a non-loopback address without a token, or a zero
// limit or thread count. `what` names the server in the message ("the
// admin API", "the node's admin port").
Status CheckListenerOptions(const AdminServerOptions& options,
                            std::string_view what);

// Thread pool, body limit, keep-alive, TCP_NODELAY and a listening socket
// without SO_REUSEPORT (cpp-httplib's default sets it, which lets a second
// process bind a port already served and take half of its requests).
void ConfigureListener(httplib::Server& server,
                       const AdminServerOptions& options);

// Binds options.bind_address:options.port (0: a free port) and serves on
// `*thread` until server.stop(); returns the bound port once the server
// accepts. UNAVAILABLE, naming `what` and the address, when the bind fails.
Result<uint16_t> BindAndServe(httplib::Server& server,
                              const AdminServerOptions& options,
                              std::string_view what, std::thread* thread);

}  // namespace mooncake_tier::admin
