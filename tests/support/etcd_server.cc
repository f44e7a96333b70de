#include "tests/support/etcd_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "httplib.h"

namespace mooncake_tier::testing {
namespace {

constexpr unsigned kCloseRangeCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC

Status IoError(const std::string& what) {
  return Status(ErrorReason::kIoError, what + ": " + std::strerror(errno));
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool EtcdServer::Available() { return ::access(kBinary, X_OK) == 0; }

EtcdServer::EtcdServer() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
      "/mooncake-tier-etcd-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    setup_ = IoError("cannot create a temporary directory");
    return;
  }
  dir_ = pattern;
  log_path_ = dir_ + "/etcd.log";
  setup_ = PickPorts();
}

EtcdServer::~EtcdServer() {
  Kill();
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

Status EtcdServer::PickPorts() {
  // Both sockets stay bound until both ports are read, so they differ.
  // Another process may take a port before etcd binds it; Start() retries.
  std::array<int, 2> fds = {-1, -1};
  std::array<int, 2> ports = {0, 0};
  Status status;
  for (size_t i = 0; i < fds.size() && status.ok(); ++i) {
    fds[i] = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fds[i] < 0 ||
        ::bind(fds[i], reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::getsockname(fds[i], reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      status = IoError("cannot pick a free port");
    } else {
      ports[i] = ntohs(addr.sin_port);
    }
  }
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
  client_port_ = ports[0];
  peer_port_ = ports[1];
  return status;
}

std::string EtcdServer::endpoint() const {
  return "127.0.0.1:" + std::to_string(client_port_);
}

Status EtcdServer::Start(std::chrono::milliseconds deadline) {
  MT_RETURN_IF_ERROR(setup_);
  if (running()) {
    return Status(ErrorReason::kInvalidArgument, "etcd is already running");
  }
  // Only a first start may move to new ports: a restart must come back
  // where its clients look for it.
  const int attempts = started_once_ ? 1 : 3;
  Status status;
  for (int i = 0; i < attempts; ++i) {
    if (i > 0) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_ + "/data", ignored);
      MT_RETURN_IF_ERROR(PickPorts());
    }
    status = Launch(deadline);
    if (status.ok() ||
        status.message().find("address already in use") == std::string::npos) {
      break;
    }
  }
  if (status.ok()) started_once_ = true;
  return status;
}

Status EtcdServer::Launch(std::chrono::milliseconds deadline) {
  const std::string client_url = "http://" + endpoint();
  const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer_port_);
  std::vector<std::string> args = {
      kBinary,
      "--name=test",
      "--data-dir=" + dir_ + "/data",
      "--listen-client-urls=" + client_url,
      "--advertise-client-urls=" + client_url,
      "--listen-peer-urls=" + peer_url,
      "--initial-advertise-peer-urls=" + peer_url,
      "--initial-cluster=test=" + peer_url,
      "--unsafe-no-fsync",
      "--heartbeat-interval=10",
      "--election-timeout=100",
      "--logger=zap",
      "--log-level=error",
  };
  std::vector<char*> argv = Pointers(args);
  const int log = ::open(log_path_.c_str(),
                         O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log < 0 || null < 0) {
    Status error = IoError("cannot open " + log_path_);
    if (log >= 0) ::close(log);
    if (null >= 0) ::close(null);
    return error;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Between fork and exec: async-signal-safe calls only.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(null, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::syscall(SYS_close_range, 3u, ~0u, kCloseRangeCloexec);
    ::execv(argv[0], argv.data());
    static const char kFailed[] = "exec of /usr/bin/etcd failed\n";
    [[maybe_unused]] ssize_t n = ::write(2, kFailed, sizeof(kFailed) - 1);
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(log);
  ::close(null);
  if (pid < 0) {
    errno = fork_errno;
    return IoError("fork");
  }
  pid_ = pid;
  paused_ = false;

  const auto until = std::chrono::steady_clock::now() + deadline;
  while (true) {
    int wstatus = 0;
    if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return Status(ErrorReason::kInternal,
                    "etcd exited during start-up; log tail:\n" + LogTail());
    }
    if (Healthy()) return Status::Ok();
    if (std::chrono::steady_clock::now() >= until) {
      Kill();
      return Status(ErrorReason::kInternal,
                    "etcd not healthy within " +
                        std::to_string(deadline.count()) + " ms; log tail:\n" +
                        LogTail());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool EtcdServer::Healthy() const {
  httplib::Client http("127.0.0.1", client_port_);
  http.set_connection_timeout(std::chrono::milliseconds(200));
  http.set_read_timeout(std::chrono::milliseconds(500));
  httplib::Result result = http.Get("/health");
  return result && result->status == 200 &&
         result->body.find("\"health\":\"true\"") != std::string::npos;
}

bool EtcdServer::SignalAndWait(int signal, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return true;
  ::kill(pid_, signal);
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int wstatus = 0;
    const pid_t done = ::waitpid(pid_, &wstatus, WNOHANG);
    if (done == pid_ || (done < 0 && errno == ECHILD)) {
      pid_ = -1;
      paused_ = false;
      return true;
    }
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void EtcdServer::Kill() {
  // SIGKILL ends a stopped process too. The wait is long only in name: a
  // killed process is reaped within milliseconds.
  SignalAndWait(SIGKILL, std::chrono::seconds(10));
}

void EtcdServer::Stop() {
  if (pid_ <= 0) return;
  if (paused_) Resume();
  if (!SignalAndWait(SIGTERM, std::chrono::seconds(5))) Kill();
}

void EtcdServer::Pause() {
  if (pid_ <= 0 || paused_ || ::kill(pid_, SIGSTOP) != 0) return;
  paused_ = true;
  // kill() returns before every thread has stopped: on a busy host etcd
  // could still answer a request sent right after. Wait until each of
  // its threads is in state 'T'.
  const std::string tasks = "/proc/" + std::to_string(pid_) + "/task";
  auto all_stopped = [&tasks] {
    std::error_code error;
    for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
      std::ifstream in(task.path() / "stat");
      std::string stat((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
      // "pid (comm) S ...": the state follows the last ')'.
      const size_t close = stat.rfind(')');
      if (close == std::string::npos || close + 2 >= stat.size() ||
          (stat[close + 2] != 'T' && stat[close + 2] != 't')) {
        return false;
      }
    }
    return !error;
  };
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!all_stopped() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void EtcdServer::Resume() {
  if (pid_ > 0 && paused_ && ::kill(pid_, SIGCONT) == 0) paused_ = false;
}

std::string EtcdServer::LogTail(size_t max_bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  if (all.size() <= max_bytes) return all;
  return "..." + all.substr(all.size() - max_bytes);
}

}  // namespace mooncake_tier::testing
