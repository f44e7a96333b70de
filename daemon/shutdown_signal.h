#pragma once

// SIGINT and SIGTERM as a request to shut down, and SIGHUP as one to
// reload what can be reloaded (the master's token files), received
// synchronously.
//
// The daemon blocks the three signals in its main thread before it creates any
// other thread (gRPC, UCX and the node's threads inherit the mask), so the
// kernel never runs a handler anywhere; the main thread collects them with
// sigtimedwait. No work happens in a signal handler because there is none.
//
// Thread safety: Block must run in the main thread before any other thread
// exists. Wait may be called from one thread at a time (the main thread).

#include <chrono>
#include <optional>

namespace mooncake_tier::daemon {

class ShutdownSignal {
 public:
  // Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (and so in every
  // thread it creates afterwards) and ignores SIGPIPE (a peer closing a socket
  // must not kill the process).
  static void Block();

  // Waits up to `timeout` for SIGINT, SIGTERM or SIGHUP. Returns the signal
  // number, or nullopt when none arrived in time.
  // REQUIRES: Block() ran.
  static std::optional<int> Wait(std::chrono::milliseconds timeout);

  // "SIGINT", "SIGTERM", "SIGHUP", or "a signal" for any other.
  static const char* Name(int signal);
};

}  // namespace mooncake_tier::daemon
