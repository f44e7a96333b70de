#include "tests/support/subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace mooncake_tier::testing {
namespace {

constexpr unsigned kCloseRangeCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC

// Polls `done` every 10 ms until it holds or `timeout` passes.
template <typename Predicate>
bool PollUntil(Predicate done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

Status Errno(const std::string& what, int error) {
  return Status(ErrorReason::kIoError, what + ": " + std::strerror(error));
}

// The inherited environment with `unset` removed and `set` applied, as
// "NAME=value" strings.
std::vector<std::string> ChildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& set,
    const std::vector<std::string>& unset) {
  std::vector<std::string> env;
  auto replaced = [&](const std::string& entry) {
    const std::string name = entry.substr(0, entry.find('='));
    for (const std::string& u : unset) {
      if (u == name) return true;
    }
    for (const auto& [key, value] : set) {
      if (key == name) return true;
    }
    return false;
  };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (!replaced(*e)) env.emplace_back(*e);
  }
  for (const auto& [key, value] : set) env.push_back(key + "=" + value);
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void ExecChild(const SubprocessOptions& options, pid_t parent,
                            int in, int out, int err, int report,
                            char* const* argv, char* const* envp) {
  ::setpgid(0, 0);
  if (options.kill_on_parent_death) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent is already gone
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  // Everything else the test had open stays behind at exec.
  ::syscall(SYS_close_range, 3u, ~0u, kCloseRangeCloexec);
  ::execve(argv[0], argv, envp);
  const int error = errno;
  [[maybe_unused]] ssize_t n = ::write(report, &error, sizeof(error));
  ::_exit(127);
}

}  // namespace

std::string ExitStatus::ToString() const {
  if (exited()) return "exit code " + std::to_string(code);
  return "killed by signal " + std::to_string(signal) + " (" +
         strsignal(signal) + ")";
}

Result<std::unique_ptr<Subprocess>> Subprocess::Start(
    SubprocessOptions options) {
  if (options.binary.empty()) {
    return Status(ErrorReason::kInvalidArgument, "no binary to start");
  }
  std::unique_ptr<Subprocess> p(new Subprocess());
  std::string dir = options.output_dir;
  if (dir.empty()) {
    p->owned_dir_ = std::make_unique<TempDir>();
    dir = p->owned_dir_->path();
  }
  p->name_ = options.name.empty()
                 ? std::filesystem::path(options.binary).filename().string()
                 : options.name;
  p->stdout_path_ = dir + "/" + p->name_ + ".stdout";
  p->stderr_path_ = dir + "/" + p->name_ + ".stderr";

  std::vector<std::string> args = {options.binary};
  args.insert(args.end(), options.args.begin(), options.args.end());
  std::vector<std::string> env =
      ChildEnvironment(options.env, options.unset_env);
  std::vector<char*> argv = Pointers(args);
  std::vector<char*> envp = Pointers(env);

  constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  const int out = ::open(p->stdout_path_.c_str(), kFlags, 0644);
  const int err = ::open(p->stderr_path_.c_str(), kFlags, 0644);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int report[2] = {-1, -1};
  Status ready = Status::Ok();
  if (out < 0 || err < 0 || in < 0) {
    ready = Errno("cannot open output files in " + dir, errno);
  } else if (::pipe2(report, O_CLOEXEC) != 0) {
    ready = Errno("pipe", errno);
  }
  pid_t pid = -1;
  if (ready.ok()) {
    const pid_t parent = ::getpid();
    pid = ::fork();
    if (pid == 0) {
      ExecChild(options, parent, in, out, err, report[1], argv.data(),
                envp.data());
    }
    if (pid < 0) ready = Errno("fork", errno);
  }
  for (int fd : {out, err, in, report[1]}) {
    if (fd >= 0) ::close(fd);
  }
  if (ready.ok()) {
    int exec_error = 0;
    ssize_t n;
    do {
      n = ::read(report[0], &exec_error, sizeof(exec_error));
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof(exec_error))) {
      ::waitpid(pid, nullptr, 0);
      ready = Errno("cannot execute " + options.binary, exec_error);
    }
  }
  if (report[0] >= 0) ::close(report[0]);
  if (!ready.ok()) return ready;
  p->pid_ = pid;
  return p;
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !status_) {
    ::kill(-pid_, SIGKILL);  // its process group: grandchildren too
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool Subprocess::Signal(int signal) {
  if (pid_ <= 0 || status_) return false;
  return ::kill(pid_, signal) == 0;
}

bool Subprocess::Kill() { return Signal(SIGKILL); }

std::optional<ExitStatus> Subprocess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!status_) {
    int raw = 0;
    const pid_t r = ::waitpid(pid_, &raw, WNOHANG);
    if (r == pid_) {
      ExitStatus s;
      if (WIFEXITED(raw)) s.code = WEXITSTATUS(raw);
      if (WIFSIGNALED(raw)) s.signal = WTERMSIG(raw);
      status_ = s;
      break;
    }
    if (r < 0 && errno != EINTR) {
      status_ = ExitStatus{};  // reaped elsewhere: status unknown
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status_;
}

bool Subprocess::Running() {
  return !Wait(std::chrono::milliseconds(0)).has_value();
}

std::string Subprocess::ReadStdout() const {
  return ReadFileOrEmpty(stdout_path_);
}

std::string Subprocess::ReadStderr() const {
  return ReadFileOrEmpty(stderr_path_);
}

std::string Subprocess::OutputTail(size_t max_bytes) const {
  auto tail = [max_bytes](std::string s) {
    return s.size() > max_bytes ? "..." + s.substr(s.size() - max_bytes) : s;
  };
  return "--- " + name_ + " stdout:\n" + tail(ReadStdout()) + "\n--- " + name_ +
         " stderr:\n" + tail(ReadStderr());
}

bool Subprocess::WaitForStdout(std::string_view text,
                               std::chrono::milliseconds timeout) const {
  return PollUntil([&] { return ReadStdout().find(text) != std::string::npos; },
                   timeout);
}

bool WaitForFile(const std::string& path, std::chrono::milliseconds timeout) {
  return PollUntil([&] { return ::access(path.c_str(), F_OK) == 0; }, timeout);
}

int PickFreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace mooncake_tier::testing
