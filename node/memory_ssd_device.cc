#include "node/memory_ssd_device.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "core/mutex.h"

namespace mooncake_tier {
namespace {

struct FileData {
  mutable SharedMutex mu;
  std::vector<std::byte> bytes ABSL_GUARDED_BY(mu);
};

}  // namespace

struct MemorySsdDevice::Files {
  Mutex mu;
  absl::flat_hash_map<std::string, std::shared_ptr<FileData>> by_name
      ABSL_GUARDED_BY(mu);
  std::atomic<bool> fail_io{false};
};

namespace {

class MemorySsdFile final : public SsdFile {
 public:
  MemorySsdFile(std::shared_ptr<FileData> data,
                std::shared_ptr<const std::atomic<bool>> fail_io,
                uint64_t alignment)
      : data_(std::move(data)),
        fail_io_(std::move(fail_io)),
        alignment_(alignment) {}

  Status ReadBatch(std::span<IoRequest> requests) override {
    MT_RETURN_IF_ERROR(Check(requests));
    ReaderMutexLock lock(&data_->mu);
    for (IoRequest& r : requests) {
      const uint64_t size = data_->bytes.size();
      const uint64_t n =
          r.offset >= size ? 0 : std::min<uint64_t>(r.len, size - r.offset);
      if (n > 0) std::memcpy(r.buf, data_->bytes.data() + r.offset, n);
      r.result = static_cast<ssize_t>(n);
    }
    return Status::Ok();
  }

  Status WriteBatch(std::span<IoRequest> requests) override {
    MT_RETURN_IF_ERROR(Check(requests));
    WriterMutexLock lock(&data_->mu);
    for (IoRequest& r : requests) {
      if (r.offset + r.len > data_->bytes.size()) {
        data_->bytes.resize(r.offset + r.len);
      }
      if (r.len > 0) std::memcpy(data_->bytes.data() + r.offset, r.buf, r.len);
      r.result = static_cast<ssize_t>(r.len);
    }
    return Status::Ok();
  }

  Status Sync() override { return Status::Ok(); }

  Status Truncate(uint64_t size) override {
    WriterMutexLock lock(&data_->mu);
    data_->bytes.resize(size);
    return Status::Ok();
  }

  Result<uint64_t> Size() const override {
    ReaderMutexLock lock(&data_->mu);
    return static_cast<uint64_t>(data_->bytes.size());
  }

 private:
  Status Check(std::span<IoRequest> requests) const {
    for (IoRequest& r : requests) {
      if (fail_io_->load(std::memory_order_relaxed)) {
        r.result = -EIO;
        return Status(ErrorReason::kIoError, "injected I/O failure");
      }
      if (r.offset % alignment_ != 0 || r.len % alignment_ != 0 ||
          reinterpret_cast<uintptr_t>(r.buf) % alignment_ != 0) {
        r.result = -EINVAL;
        return Status(ErrorReason::kInvalidArgument, "unaligned I/O");
      }
    }
    return Status::Ok();
  }

  const std::shared_ptr<FileData> data_;
  const std::shared_ptr<const std::atomic<bool>> fail_io_;
  const uint64_t alignment_;
};

}  // namespace

MemorySsdDevice::MemorySsdDevice(uint64_t alignment)
    : MemorySsdDevice(std::make_shared<Files>(), alignment) {}

MemorySsdDevice::MemorySsdDevice(std::shared_ptr<Files> files,
                                 uint64_t alignment)
    : files_(std::move(files)), alignment_(alignment) {}

MemorySsdDevice::~MemorySsdDevice() = default;

std::unique_ptr<MemorySsdDevice> MemorySsdDevice::Reopen() const {
  return std::unique_ptr<MemorySsdDevice>(
      new MemorySsdDevice(files_, alignment_));
}

void MemorySsdDevice::FailIoForTest(bool fail) {
  files_->fail_io.store(fail, std::memory_order_relaxed);
}

Result<std::unique_ptr<SsdFile>> MemorySsdDevice::Open(const std::string& name,
                                                       bool create) {
  if (name.empty() || name.find('/') != std::string::npos) {
    return Status(ErrorReason::kInvalidArgument,
                  "bad file name '" + name + "'");
  }
  MutexLock lock(&files_->mu);
  auto it = files_->by_name.find(name);
  if (it == files_->by_name.end()) {
    if (!create) return Status(ErrorReason::kObjectNotFound, "no file " + name);
    it = files_->by_name.emplace(name, std::make_shared<FileData>()).first;
  }
  // The flag lives inside Files; share Files' lifetime with the handle.
  std::shared_ptr<const std::atomic<bool>> fail_io(files_, &files_->fail_io);
  return std::unique_ptr<SsdFile>(
      new MemorySsdFile(it->second, std::move(fail_io), alignment_));
}

Result<std::vector<std::string>> MemorySsdDevice::List() const {
  MutexLock lock(&files_->mu);
  std::vector<std::string> names;
  names.reserve(files_->by_name.size());
  for (const auto& [name, data] : files_->by_name) names.push_back(name);
  return names;
}

Status MemorySsdDevice::Remove(const std::string& name) {
  MutexLock lock(&files_->mu);
  if (files_->by_name.erase(name) == 0) {
    return Status(ErrorReason::kObjectNotFound, "no file " + name);
  }
  return Status::Ok();
}

}  // namespace mooncake_tier
