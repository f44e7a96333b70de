#pragma once

// Runs mooncake-tierd in one of its modes until SIGINT or SIGTERM.
//
// Start-up: master (serving gRPC), then node (registering from its
// heartbeat thread; standalone points it at the master it runs beside).
// Once serving (master: listening; node: registered; standalone: both) it
// publishes the ready file and prints one line to stdout. On the first
// signal it withdraws the ready file and shuts down on a separate thread,
// node first, then master, while the main thread keeps waiting for signals:
// a second one ends the process at once with exit code 1.
//
// Thread safety: call once, from the main thread, after
// ShutdownSignal::Block() and before any other thread was created.

#include "daemon/daemon_options.h"

namespace mooncake_tier::daemon {

// Returns the process exit code: 0 after a clean shutdown, 1 when start-up
// failed (port in use, SSD directory unusable, invalid configuration, ready
// file not writable), with one line on stderr saying why.
int RunDaemon(const DaemonOptions& options);

}  // namespace mooncake_tier::daemon
