// mooncake-tierd: the daemon's entry point. Parses the command line
// (daemon/daemon_options.h) and runs the chosen mode
// (daemon/daemon_runner.h). Exit codes: 0 clean shutdown or --help,
// 1 start-up failure, 2 usage error.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "daemon/daemon_options.h"
#include "daemon/daemon_runner.h"
#include "daemon/shutdown_signal.h"

int main(int argc, char** argv) {
  using namespace mooncake_tier::daemon;
  // Before anything can start a thread: every thread inherits the mask.
  ShutdownSignal::Block();
  // Debian's Abseil is built without NDEBUG, so absl::Mutex (gRPC's lock)
  // runs its deadlock detector on every acquisition: a process-wide graph
  // behind one global lock. Our own locks are checked by clang's analysis
  // and TSAN instead; the daemon does not pay for it on every call.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CommandLine command =
      ParseCommandLine(std::vector<std::string>(argv, argv + argc));
  if (!command.options) {
    std::string& text = command.output;
    if (!text.empty() && text.back() != '\n') text += '\n';
    std::fputs(text.c_str(), command.exit_code == 0 ? stdout : stderr);
    return command.exit_code;
  }
  return RunDaemon(*command.options);
}
