#include "daemon/ssd_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace mooncake_tier::daemon {
namespace {

Status Errno(const std::string& what, int error) {
  return Status(ErrorReason::kIoError, what + ": " + std::strerror(error));
}

// The pid recorded in the lock file, or "unknown".
std::string HolderPid(int fd) {
  char buffer[32] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  if (n <= 0) return "unknown";
  std::string pid(buffer, static_cast<size_t>(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) {
    pid.pop_back();
  }
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

Result<std::unique_ptr<SsdDirLock>> SsdDirLock::Acquire(
    const std::string& directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) {
    return Status(ErrorReason::kIoError, "cannot create SSD directory " +
                                             directory + ": " + ec.message());
  }
  const std::string path = directory + "/" + kFileName;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot open " + path, errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string holder = HolderPid(fd);
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return Status(ErrorReason::kUnavailable,
                    "SSD directory " + directory +
                        " is in use by another process (pid " + holder + ")");
    }
    return Errno("cannot lock " + path, error);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) !=
                                     static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(fd);
    return Errno("cannot write " + path, error);
  }
  return std::unique_ptr<SsdDirLock>(new SsdDirLock(fd));
}

SsdDirLock::~SsdDirLock() { ::close(fd_); }  // closing releases the flock

}  // namespace mooncake_tier::daemon
