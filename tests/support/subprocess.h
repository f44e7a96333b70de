#pragma once

// Child processes for multi-process tests: start a binary with arguments
// and environment, capture its stdout and stderr in files, signal it, wait
// for it with a timeout, and never leak it.
//
// The child inherits this process's environment (plus `env`), so variables
// a test run depends on (UCX_MEM_MMAP_HOOK_MODE under TSAN, TMPDIR, ...)
// reach it. It starts with no signal blocked and default dispositions, in
// its own process group, with stdin on /dev/null and no inherited file
// descriptors beyond 0..2. With kill_on_parent_death it is SIGKILLed if the
// thread that started it exits (the test crashed or timed out), so start
// children from a thread that outlives them (normally the test's main
// thread).
//
// Thread safety: one Subprocess is used by one thread at a time; distinct
// objects are independent.

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mooncake_tier/status.h"
#include "tests/support/temp_dir.h"

namespace mooncake_tier::testing {

struct SubprocessOptions {
  // Path of the executable. REQUIRES: non-empty.
  std::string binary;
  // Arguments after argv[0] (which is `binary`).
  std::vector<std::string> args;
  // Added to the inherited environment, replacing variables of the same
  // name.
  std::vector<std::pair<std::string, std::string>> env;
  // Removed from the inherited environment.
  std::vector<std::string> unset_env;
  // Directory for "<name>.stdout" and "<name>.stderr"; empty: a temporary
  // directory owned (and removed) by the Subprocess.
  std::string output_dir;
  // Prefix of the output files. Default: the binary's file name.
  std::string name;
  // SIGKILL the child when the starting thread exits. Default: true.
  bool kill_on_parent_death = true;
};

// How a process ended.
struct ExitStatus {
  int code = -1;   // exit code when it exited, else -1
  int signal = 0;  // signal that killed it, else 0
  bool exited() const { return signal == 0; }
  // "exit code 0", "killed by signal 9 (Killed)".
  std::string ToString() const;
};

class Subprocess {
 public:
  // Starts the child. IO_ERROR when the output files cannot be created,
  // INVALID_ARGUMENT / IO_ERROR when it cannot be started (a missing binary
  // fails here, not as an exit code).
  static Result<std::unique_ptr<Subprocess>> Start(SubprocessOptions options);
  // Kills (SIGKILL) and reaps the child if it still runs.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }

  // Sends `signal` to the child; false if it already ended (was reaped).
  bool Signal(int signal);
  // SIGKILL.
  bool Kill();
  // Waits until the child ends or `timeout` passes; nullopt on timeout.
  // Once it ended, returns the same status again.
  std::optional<ExitStatus> Wait(std::chrono::milliseconds timeout);
  // Whether the child still runs (reaps it if it ended).
  bool Running();

  const std::string& stdout_path() const { return stdout_path_; }
  const std::string& stderr_path() const { return stderr_path_; }
  std::string ReadStdout() const;
  std::string ReadStderr() const;
  // Polls until the child's stdout holds `text`; false when `timeout`
  // passed first. For output the child writes after an event the caller
  // has already seen (a line printed after its ready file appears).
  bool WaitForStdout(std::string_view text,
                     std::chrono::milliseconds timeout) const;
  // The last `max_bytes` of stdout and stderr, labelled: for assertion
  // messages.
  std::string OutputTail(size_t max_bytes = 4000) const;

 private:
  Subprocess() = default;

  std::unique_ptr<TempDir> owned_dir_;
  std::string name_;
  std::string stdout_path_;
  std::string stderr_path_;
  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
};

// Waits until `path` exists (polling). False when `timeout` passed first.
bool WaitForFile(const std::string& path, std::chrono::milliseconds timeout);

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0,
// read back, closed). Another process may take it before the caller does;
// tests accept that small race. Returns 0 on failure.
int PickFreePort();

// The contents of a file, or "" when it cannot be read.
std::string ReadFileOrEmpty(const std::string& path);

}  // namespace mooncake_tier::testing
