#include "bench/spawned_store.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

extern char** environ;

namespace mooncake_tier::bench {
namespace {

namespace fs = std::filesystem;

Result<int> PickFreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Status(ErrorReason::kIoError, "socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok =
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  if (!ok) return Status(ErrorReason::kIoError, "no free loopback port");
  return static_cast<int>(ntohs(addr.sin_port));
}

// Runs `args` with stdout and stderr appended to `log`.
Result<pid_t> Spawn(const std::vector<std::string>& args,
                    const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return Status(ErrorReason::kUnavailable,
                  "cannot start " + args[0] + ": " + std::strerror(rc));
  }
  return pid;
}

}  // namespace

std::string DefaultTierdPath() {
#ifdef MOONCAKE_TIERD_PATH
  return MOONCAKE_TIERD_PATH;
#else
  return "";
#endif
}

Result<std::unique_ptr<SpawnedStore>> SpawnedStore::Start(
    const SpawnOptions& options) {
  if (options.tierd_path.empty() || !fs::exists(options.tierd_path)) {
    return Status(ErrorReason::kInvalidArgument,
                  "mooncake-tierd not found at '" + options.tierd_path +
                      "' (build it, or pass --tierd PATH)");
  }
  std::string pattern = options.scratch_dir + "/mooncake-bench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status(ErrorReason::kIoError,
                  "cannot create a temp dir under " + options.scratch_dir);
  }
  const std::string dir = pattern;
  MT_ASSIGN_OR_RETURN(const int port, PickFreePort());
  const std::string master = "127.0.0.1:" + std::to_string(port);
  const std::string ready = dir + "/ready";
  std::vector<std::string> args = {
      options.tierd_path, "standalone",  "--listen",  master,
      "--admin-listen",   "127.0.0.1:0", "--ssd-dir", dir + "/ssd",
      "--ready-file",     ready};
  args.insert(args.end(), options.flags.begin(), options.flags.end());
  MT_ASSIGN_OR_RETURN(const pid_t pid, Spawn(args, dir + "/tierd.log"));
  std::unique_ptr<SpawnedStore> store(new SpawnedStore(pid, dir, master));
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(ready)) {
    int wstatus = 0;
    const bool exited = waitpid(pid, &wstatus, WNOHANG) == pid;
    if (exited || std::chrono::steady_clock::now() > give_up) {
      // The destructor stops what is left and removes the temp dir.
      return Status(ErrorReason::kUnavailable,
                    std::string(exited ? "mooncake-tierd exited before it "
                                         "was ready"
                                       : "mooncake-tierd not ready within "
                                         "60 s") +
                        "; its log ends with:\n" + store->LogTail());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ifstream fields(ready);
  for (std::string line; std::getline(fields, line);) {
    constexpr std::string_view kAdmin = "admin_address=";
    if (line.starts_with(kAdmin)) store->admin_ = line.substr(kAdmin.size());
  }
  return store;
}

SpawnedStore::~SpawnedStore() {
  int wstatus = 0;
  // Already reaped if it exited during Start; kill() then fails harmlessly.
  if (waitpid(pid_, &wstatus, WNOHANG) == 0) kill(pid_, SIGTERM);
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (waitpid(pid_, &wstatus, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &wstatus, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

std::string SpawnedStore::LogTail() const {
  std::ifstream in(dir_ + "/tierd.log");
  std::ostringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  constexpr size_t kTail = 2000;
  return text.size() > kTail ? text.substr(text.size() - kTail) : text;
}

}  // namespace mooncake_tier::bench
