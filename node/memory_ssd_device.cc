#include "node/memory_ssd_device.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"

namespace mooncake_tier {

// One file's bytes. Outside the anonymous namespace: MemorySsdDevice::Files
// holds it.
struct MemorySsdFileData {
  mutable SharedMutex mu;
  std::vector<std::byte> bytes ABSL_GUARDED_BY(mu);
};

// What the files of one device share: the injected failures and the
// file system's size (bytes of every file together).
struct SharedSpace {
  std::atomic<bool> fail_io{false};
  std::atomic<uint64_t> limit{UINT64_MAX};
  std::atomic<uint64_t> used{0};
};

struct MemorySsdDevice::Files {
  Mutex mu;
  absl::flat_hash_map<std::string, std::shared_ptr<MemorySsdFileData>> by_name
      ABSL_GUARDED_BY(mu);
  SharedSpace space;
};

namespace {

class MemorySsdFile final : public SsdFile {
 public:
  MemorySsdFile(std::shared_ptr<MemorySsdFileData> data,
                std::shared_ptr<SharedSpace> space, uint64_t alignment)
      : data_(std::move(data)),
        space_(std::move(space)),
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
    Status status;
    for (IoRequest& r : requests) {
      if (r.offset + r.len > data_->bytes.size()) {
        const uint64_t grow = r.offset + r.len - data_->bytes.size();
        if (!Grow(grow)) {
          r.result = -ENOSPC;
          status = Status(ErrorReason::kNoSpace,
                          "write batch: No space left on device");
          continue;
        }
        data_->bytes.resize(r.offset + r.len);
      }
      if (r.len > 0) std::memcpy(data_->bytes.data() + r.offset, r.buf, r.len);
      r.result = static_cast<ssize_t>(r.len);
    }
    return status;
  }

  Status Sync() override { return Status::Ok(); }

  Status Truncate(uint64_t size) override {
    WriterMutexLock lock(&data_->mu);
    if (size > data_->bytes.size() && !Grow(size - data_->bytes.size())) {
      return Status(ErrorReason::kNoSpace,
                    "ftruncate: No space left on device");
    }
    if (size < data_->bytes.size()) {
      space_->used.fetch_sub(data_->bytes.size() - size);
    }
    data_->bytes.resize(size);
    return Status::Ok();
  }

  Result<uint64_t> Size() const override {
    ReaderMutexLock lock(&data_->mu);
    return static_cast<uint64_t>(data_->bytes.size());
  }

 private:
  // Books `bytes` more of the shared space; false when it would not fit.
  bool Grow(uint64_t bytes) {
    uint64_t used = space_->used.load();
    do {
      if (used + bytes > space_->limit.load()) return false;
    } while (!space_->used.compare_exchange_weak(used, used + bytes));
    return true;
  }

  Status Check(std::span<IoRequest> requests) const {
    for (IoRequest& r : requests) {
      if (space_->fail_io.load(std::memory_order_relaxed)) {
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

  const std::shared_ptr<MemorySsdFileData> data_;
  const std::shared_ptr<SharedSpace> space_;
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
  files_->space.fail_io.store(fail, std::memory_order_relaxed);
}

void MemorySsdDevice::SetSpaceForTest(uint64_t bytes) {
  files_->space.limit.store(bytes);
}

Result<SsdDevice::Space> MemorySsdDevice::FreeSpace() const {
  const uint64_t limit = files_->space.limit.load();
  const uint64_t used = files_->space.used.load();
  if (limit == UINT64_MAX) return Space{};
  return Space{limit > used ? limit - used : 0, limit};
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
    it = files_->by_name.emplace(name, std::make_shared<MemorySsdFileData>())
             .first;
  }
  // The space lives inside Files; share Files' lifetime with the handle.
  std::shared_ptr<SharedSpace> space(files_, &files_->space);
  return std::unique_ptr<SsdFile>(
      new MemorySsdFile(it->second, std::move(space), alignment_));
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
  auto it = files_->by_name.find(name);
  if (it == files_->by_name.end()) {
    return Status(ErrorReason::kObjectNotFound, "no file " + name);
  }
  {
    // Its space is back at once (a handle still open keeps the bytes for
    // reading, as an unlinked file's, but no longer counts).
    ReaderMutexLock data_lock(&it->second->mu);
    files_->space.used.fetch_sub(it->second->bytes.size());
  }
  files_->by_name.erase(it);
  return Status::Ok();
}

}  // namespace mooncake_tier
