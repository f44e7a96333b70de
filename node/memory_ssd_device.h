#pragma once

// The in-memory twin of UringSsdDevice: same contract (SsdDevice), files are
// byte vectors. Unit tests of the SSD store run against it and against the
// real device. Reopen() hands out a second device over the same files, which
// is how a test restarts a store; Sync() is a no-op (nothing is volatile
// beyond what the process holds).
//
// With alignment > 1 it enforces O_DIRECT's rule (direct_io() is then true)
// so the store's aligned paths are exercised without a disk.
//
// Thread safety: safe to use from any number of threads, as are its files.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "node/ssd_device.h"

namespace mooncake_tier {

class MemorySsdDevice final : public SsdDevice {
 public:
  // REQUIRES: alignment is a power of two.
  explicit MemorySsdDevice(uint64_t alignment = 1);
  ~MemorySsdDevice() override;

  // A device over the same files, as reopening the directory would give.
  std::unique_ptr<MemorySsdDevice> Reopen() const;

  // While set, every read and write of the shared files fails with IO_ERROR
  // (result -EIO).
  void FailIoForTest(bool fail);
  // A file system of `bytes` in all (the files' sizes together): a write
  // that would grow past it fails with NO_SPACE (result -ENOSPC), and
  // FreeSpace() reports what is left. UINT64_MAX (the default): no limit.
  void SetSpaceForTest(uint64_t bytes);

  Result<std::unique_ptr<SsdFile>> Open(const std::string& name,
                                        bool create) override;
  Result<std::vector<std::string>> List() const override;
  Status Remove(const std::string& name) override;
  Status Sync() override { return Status::Ok(); }
  Result<Space> FreeSpace() const override;
  bool direct_io() const override { return alignment_ > 1; }
  uint64_t alignment() const override { return alignment_; }

 private:
  struct Files;
  MemorySsdDevice(std::shared_ptr<Files> files, uint64_t alignment);

  const std::shared_ptr<Files> files_;
  const uint64_t alignment_;
};

}  // namespace mooncake_tier
