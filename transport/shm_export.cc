#include "transport/shm_export.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "transport/shared_memory_file.h"

namespace mooncake_tier {
namespace {

// The export lock covers byte 0; the file's contents are not involved.
struct flock ExportLockRange(short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 1;
  lock.l_pid = 0;  // required for open-file-description locks
  return lock;
}

}  // namespace

Result<std::unique_ptr<ShmExport>> ShmExport::Create(const std::byte* base,
                                                     uint64_t size) {
  if (HostBootId() == BootId{}) {
    return Status(ErrorReason::kNotApplicable,
                  "this host's boot id cannot be read");
  }
  MT_ASSIGN_OR_RETURN(SharedMemoryFile::Opened opened,
                      SharedMemoryFile::OpenForExport(base, size));
  struct flock lock = ExportLockRange(F_RDLCK);
  if (fcntl(opened.fd, F_OFD_SETLK, &lock) != 0) {
    const Status failed(
        ErrorReason::kIoError,
        std::string("locking the shared segment: ") + std::strerror(errno));
    close(opened.fd);
    return failed;
  }
  return std::unique_ptr<ShmExport>(new ShmExport(opened.fd, opened.locator));
}

ShmExport::~ShmExport() { close(fd_); }

Result<bool> ShmFileIsExported(int fd) {
  struct flock probe = ExportLockRange(F_WRLCK);
  if (fcntl(fd, F_OFD_GETLK, &probe) != 0) {
    return Status(ErrorReason::kIoError,
                  std::string("probing the shared segment's lock: ") +
                      std::strerror(errno));
  }
  return probe.l_type != F_UNLCK;
}

}  // namespace mooncake_tier
