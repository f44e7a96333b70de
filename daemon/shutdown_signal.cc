#include "daemon/shutdown_signal.h"

#include <signal.h>

#include <cerrno>
#include <ctime>

namespace mooncake_tier::daemon {
namespace {

sigset_t ShutdownSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void ShutdownSignal::Block() {
  const sigset_t set = ShutdownSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

std::optional<int> ShutdownSignal::Wait(std::chrono::milliseconds timeout) {
  const sigset_t set = ShutdownSet();
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(timeout);
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(seconds.count());
  ts.tv_nsec = static_cast<long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(timeout - seconds)
          .count());
  while (true) {
    const int signal = sigtimedwait(&set, nullptr, &ts);
    if (signal > 0) return signal;
    if (errno == EINTR) continue;  // another signal; the budget restarts
    return std::nullopt;           // EAGAIN: nothing within the timeout
  }
}

const char* ShutdownSignal::Name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

}  // namespace mooncake_tier::daemon
