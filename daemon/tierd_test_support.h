#pragma once

// Helpers of the tests that run the mooncake-tierd binary as subprocesses
// (mooncake_tierd_test.cc, tierd_admin_test.cc). REQUIRES: the target
// defines MOONCAKE_TIERD_PATH. Test-only.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/subprocess.h"
#include "tests/support/tierd_process.h"

namespace mooncake_tier::daemon_test {

inline constexpr std::chrono::milliseconds kReady(20000);
inline constexpr std::chrono::milliseconds kExit(10000);

// Starts the binary. Unless the test picks its own admin address, the
// admin server binds a free port, so parallel runs never collide on the
// defaults (9003, 9300).
inline std::unique_ptr<testing::Subprocess> StartTierd(
    const std::string& name, const std::string& dir,
    std::vector<std::string> args) {
  if (std::find(args.begin(), args.end(), "--admin-listen") == args.end()) {
    args.push_back("--admin-listen");
    args.push_back("127.0.0.1:0");
  }
  testing::SubprocessOptions options;
  options.binary = MOONCAKE_TIERD_PATH;
  options.args = std::move(args);
  options.output_dir = dir;
  options.name = name;
  auto started = testing::Subprocess::Start(std::move(options));
  EXPECT_TRUE(started.ok()) << started.status().ToString();
  return started.ok() ? std::move(*started) : nullptr;
}

using testing::ReadyFields;

inline std::string Loopback(int port) {
  return "127.0.0.1:" + std::to_string(port);
}

// Node flags that keep a test small and quick.
inline std::vector<std::string> SmallNode(const std::string& ssd_dir) {
  return {"--dram",
          "64MiB",
          "--ssd-dir",
          ssd_dir,
          "--ssd-capacity",
          "256MiB",
          "--heartbeat-interval",
          "200ms"};
}

inline std::vector<std::string> Concat(std::vector<std::string> a,
                                       const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Sends SIGTERM and expects a clean exit.
inline void StopCleanly(testing::Subprocess& process) {
  ASSERT_TRUE(process.Signal(SIGTERM));
  const std::optional<testing::ExitStatus> status = process.Wait(kExit);
  ASSERT_TRUE(status.has_value()) << "no exit after SIGTERM\n"
                                  << process.OutputTail();
  EXPECT_TRUE(status->exited() && status->code == 0)
      << status->ToString() << "\n"
      << process.OutputTail();
}

}  // namespace mooncake_tier::daemon_test
