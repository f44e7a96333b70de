#include "daemon/ready_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mooncake_tier::daemon {
namespace {

Status Errno(const std::string& what, int error) {
  return Status(ErrorReason::kIoError, what + ": " + std::strerror(error));
}

Status WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("write ready file " + path, errno);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

ReadyFile::ReadyFile(std::string path) : path_(std::move(path)) {
  if (!path_.empty()) ::unlink(path_.c_str());  // stale: from an earlier run
}

Status ReadyFile::Publish(
    const std::vector<std::pair<std::string, std::string>>& fields) {
  if (path_.empty()) return Status::Ok();
  std::string contents;
  for (const auto& [key, value] : fields) contents += key + "=" + value + "\n";
  const std::string temp = path_ + ".tmp." + std::to_string(::getpid());
  const int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create ready file " + temp, errno);
  Status written = WriteAll(fd, contents, temp);
  if (written.ok() && ::fsync(fd) != 0) {
    written = Errno("fsync ready file " + temp, errno);
  }
  ::close(fd);
  if (written.ok() && std::rename(temp.c_str(), path_.c_str()) != 0) {
    written = Errno("rename ready file to " + path_, errno);
  }
  if (!written.ok()) {
    ::unlink(temp.c_str());
    return written;
  }
  published_ = true;
  return Status::Ok();
}

void ReadyFile::Withdraw() {
  if (!published_) return;
  ::unlink(path_.c_str());
  published_ = false;
}

}  // namespace mooncake_tier::daemon
