#pragma once

// SsdDevice over a directory of a real file system. A batch is submitted to
// io_uring with one submit and its completions are matched by user_data;
// short transfers, -EAGAIN and -EINTR are resubmitted. Each thread uses its
// own ring (created on first use, destroyed at thread exit), so the device
// needs no lock on the data path. Where io_uring is unavailable (or the
// options turn it off) the same batches run as pread/pwrite loops.
//
// With direct_io the files are opened O_DIRECT: every offset, length and
// buffer must be a multiple of 4096 (see AlignedBuffer).
//
// Thread safety: safe to use from any number of threads, as are its files.

#include <memory>
#include <string>
#include <vector>

#include "node/ssd_device.h"

namespace mooncake_tier {

struct UringSsdDeviceOptions {
  // Open files with O_DIRECT (bypass the page cache).
  // Default: false.
  bool direct_io = false;
  // With direct_io, on a file system that refuses O_DIRECT (tmpfs before
  // Linux 6.6, some network file systems): go on without it (direct_io()
  // then says false) instead of failing Open. Default: false.
  bool fall_back_to_buffered = false;
  // Use io_uring; false runs every batch as pread/pwrite calls.
  // Default: true.
  bool use_io_uring = true;
};

class UringSsdDevice final : public SsdDevice {
 public:
  static constexpr uint64_t kDirectIoAlignment = 4096;

  // Uses `directory`, creating it (and its parents) if missing.
  static Result<std::unique_ptr<UringSsdDevice>> Open(
      const std::string& directory, UringSsdDeviceOptions options = {});

  ~UringSsdDevice() override;
  UringSsdDevice(const UringSsdDevice&) = delete;
  UringSsdDevice& operator=(const UringSsdDevice&) = delete;

  Result<std::unique_ptr<SsdFile>> Open(const std::string& name,
                                        bool create) override;
  Result<std::vector<std::string>> List() const override;
  Status Remove(const std::string& name) override;
  Status Sync() override;
  // statvfs of the directory: the blocks available to unprivileged users.
  Result<Space> FreeSpace() const override;
  bool direct_io() const override { return options_.direct_io; }
  uint64_t alignment() const override {
    return options_.direct_io ? kDirectIoAlignment : 1;
  }

  const std::string& directory() const { return directory_; }

 private:
  UringSsdDevice(std::string directory, int dir_fd,
                 UringSsdDeviceOptions options);

  const std::string directory_;
  const int dir_fd_;
  const UringSsdDeviceOptions options_;
};

}  // namespace mooncake_tier
