#include "tests/support/run_command.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace mooncake_tier::testing {
namespace {

// An unlinked temp file: only the descriptor names it.
int OpenScratchFile() {
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      std::string(dir != nullptr ? dir : "/tmp") + "/mt-run-command-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd >= 0) unlink(path.c_str());
  return fd;
}

std::string ReadAll(int fd) {
  std::string text;
  char buffer[1 << 16];
  lseek(fd, 0, SEEK_SET);
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

// The child's exit code, or TIMEOUT after killing it.
Result<int> Wait(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + WTERMSIG(status);
    }
    if (done < 0 && errno != EINTR) {
      return Status(ErrorReason::kInternal, std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return Status(ErrorReason::kTimeout, "the command did not finish");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

Result<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout) {
  if (argv.empty()) return Status(ErrorReason::kInvalidArgument, "no argv");
  const int out_fd = OpenScratchFile();
  const int err_fd = OpenScratchFile();
  if (out_fd < 0 || err_fd < 0) {
    if (out_fd >= 0) close(out_fd);
    if (err_fd >= 0) close(err_fd);
    return Status(ErrorReason::kInternal, "cannot create temp files");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr,
                                  args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  Result<int> exit_code =
      spawned == 0 ? Wait(pid, timeout)
                   : Result<int>(Status(ErrorReason::kInternal,
                                        "cannot start " + argv[0] + ": " +
                                            std::strerror(spawned)));
  CommandResult result;
  result.out = ReadAll(out_fd);
  result.err = ReadAll(err_fd);
  close(out_fd);
  close(err_fd);
  if (!exit_code.ok()) return exit_code.status();
  result.exit_code = *exit_code;
  return result;
}

}  // namespace mooncake_tier::testing
