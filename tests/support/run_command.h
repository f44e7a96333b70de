#pragma once

// Runs a program as a child process (no shell), stdin from /dev/null,
// stdout and stderr captured through temp files, and waits for it.

#include <chrono>
#include <string>
#include <vector>

#include "mooncake_tier/status.h"

namespace mooncake_tier::testing {

struct CommandResult {
  // The exit status; 128 + N when killed by signal N.
  int exit_code = -1;
  std::string out;  // all of stdout
  std::string err;  // all of stderr
};

// Runs argv[0] (a path) with argv[1..]. A child still running after
// `timeout` is killed (SIGKILL) and reported as TIMEOUT; INTERNAL when it
// cannot be started.
Result<CommandResult> RunCommand(
    const std::vector<std::string>& argv,
    std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace mooncake_tier::testing
