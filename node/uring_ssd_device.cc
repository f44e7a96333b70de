#include "node/uring_ssd_device.h"

#include <fcntl.h>
#include <liburing.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace mooncake_tier {
namespace {

constexpr unsigned kRingEntries = 64;

Status ErrnoStatus(std::string_view what, int err) {
  // A full file system is a state the store handles (pressure), not a
  // device failure.
  const bool full = err == ENOSPC || err == EDQUOT;
  return Status(full ? ErrorReason::kNoSpace : ErrorReason::kIoError,
                std::string(what) + ": " + std::strerror(err));
}

// The calling thread's io_uring, created on first use and torn down when the
// thread exits. Null when the kernel refuses a ring.
class ThreadRing {
 public:
  static ThreadRing& Get() {
    thread_local ThreadRing ring;
    return ring;
  }

  io_uring* ring() { return ok_ ? &ring_ : nullptr; }

  // After a failure the ring may hold prepared but unsubmitted entries that
  // point at a caller's buffers; this thread stops using io_uring.
  void Disable() {
    if (!ok_) return;
    io_uring_queue_exit(&ring_);
    ok_ = false;
    spdlog::error("io_uring failed on this thread; using pread/pwrite");
  }

 private:
  ThreadRing() {
    const int rc = io_uring_queue_init(kRingEntries, &ring_, 0);
    ok_ = rc == 0;
    static std::atomic<bool> warned{false};
    if (!ok_ && !warned.exchange(true)) {
      spdlog::warn(
          "io_uring unavailable ({}); SSD I/O falls back to pread/pwrite",
          std::strerror(-rc));
    }
  }
  ~ThreadRing() {
    if (ok_) io_uring_queue_exit(&ring_);
  }

  io_uring ring_{};
  bool ok_ = false;
};

bool Retryable(int err) { return err == EAGAIN || err == EINTR; }

#if defined(__SANITIZE_THREAD__)
#define MT_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MT_THREAD_SANITIZER 1
#endif
#endif

#if defined(MT_THREAD_SANITIZER)
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
extern "C" void AnnotateIgnoreWritesBegin(const char* file, int line);
extern "C" void AnnotateIgnoreWritesEnd(const char* file, int line);
// A ring's memory is mapped by io_uring_setup behind ThreadSanitizer's back,
// so a new thread's ring at the address of an exited thread's ring looks
// like a race. Only the owning thread ever touches a ring; hide it.
class ScopedRingAccess {
 public:
  ScopedRingAccess() {
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
  }
  ~ScopedRingAccess() {
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  }
};
#else
class ScopedRingAccess {};
#endif

// Progress of one batch: what each request has moved so far and which
// requests still need (re)submission.
class BatchState {
 public:
  BatchState(std::span<IoRequest> requests, bool write)
      : requests_(requests), write_(write), done_(requests.size(), 0) {
    for (size_t i = 0; i < requests.size(); ++i) {
      requests[i].result = 0;
      if (requests[i].len > 0) pending_.push_back(i);
    }
  }

  bool HasPending() const { return !pending_.empty(); }
  size_t PopPending() {
    const size_t i = pending_.back();
    pending_.pop_back();
    return i;
  }
  char* NextBuf(size_t i) const {
    return static_cast<char*>(requests_[i].buf) + done_[i];
  }
  // Capped so that one transfer fits io_uring's 32-bit length; the rest is
  // resubmitted like a short transfer.
  size_t NextLen(size_t i) const {
    return std::min<size_t>(requests_[i].len - done_[i], size_t{1} << 30);
  }
  uint64_t NextOffset(size_t i) const { return requests_[i].offset + done_[i]; }

  // Accounts for one completed transfer of `res` bytes (or -errno).
  void Complete(size_t i, ssize_t res) {
    IoRequest& r = requests_[i];
    if (res < 0 && Retryable(static_cast<int>(-res))) {
      pending_.push_back(i);
    } else if (res < 0) {
      r.result = res;
      if (first_error_ == 0) first_error_ = static_cast<int>(-res);
    } else if (res == 0) {
      // End of file for a read; a write that moves nothing would spin.
      r.result = write_ ? -EIO : static_cast<ssize_t>(done_[i]);
      if (write_ && first_error_ == 0) first_error_ = EIO;
    } else {
      done_[i] += static_cast<size_t>(res);
      if (done_[i] < r.len) {
        pending_.push_back(i);
      } else {
        r.result = static_cast<ssize_t>(done_[i]);
      }
    }
  }

  Status ToStatus() const {
    if (first_error_ == 0) return Status::Ok();
    return ErrnoStatus(write_ ? "write batch" : "read batch", first_error_);
  }

 private:
  std::span<IoRequest> requests_;
  const bool write_;
  std::vector<size_t> done_;
  std::vector<size_t> pending_;
  int first_error_ = 0;
};

void RunWithSyscalls(int fd, BatchState& state, bool write) {
  while (state.HasPending()) {
    const size_t i = state.PopPending();
    const ssize_t n = write ? ::pwrite(fd, state.NextBuf(i), state.NextLen(i),
                                       static_cast<off_t>(state.NextOffset(i)))
                            : ::pread(fd, state.NextBuf(i), state.NextLen(i),
                                      static_cast<off_t>(state.NextOffset(i)));
    state.Complete(i, n < 0 ? -errno : n);
  }
}

// Submits every pending request (up to the ring size at a time) with one
// io_uring_submit_and_wait per round and reaps all completions available.
Status RunWithRing(io_uring* ring, int fd, BatchState& state, bool write) {
  [[maybe_unused]] ScopedRingAccess ring_access;
  unsigned in_flight = 0;
  while (state.HasPending() || in_flight > 0) {
    while (state.HasPending() && in_flight < kRingEntries) {
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      if (sqe == nullptr) break;
      const size_t i = state.PopPending();
      if (write) {
        io_uring_prep_write(sqe, fd, state.NextBuf(i),
                            static_cast<unsigned>(state.NextLen(i)),
                            state.NextOffset(i));
      } else {
        io_uring_prep_read(sqe, fd, state.NextBuf(i),
                           static_cast<unsigned>(state.NextLen(i)),
                           state.NextOffset(i));
      }
      io_uring_sqe_set_data64(sqe, i);
      ++in_flight;
    }
    const int rc = io_uring_submit_and_wait(ring, 1);
    if (rc < 0 && !Retryable(-rc) && rc != -EBUSY) {
      // Requests already in the kernel still own the caller's buffers:
      // drain them before giving up.
      io_uring_cqe* cqe = nullptr;
      while (in_flight > 0 && io_uring_wait_cqe(ring, &cqe) == 0) {
        io_uring_cqe_seen(ring, cqe);
        --in_flight;
      }
      return ErrnoStatus("io_uring_submit", -rc);
    }
    io_uring_cqe* cqe = nullptr;
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_for_each_cqe(ring, head, cqe) {
      state.Complete(static_cast<size_t>(io_uring_cqe_get_data64(cqe)),
                     cqe->res);
      ++seen;
    }
    io_uring_cq_advance(ring, seen);
    in_flight -= seen;
  }
  return Status::Ok();
}

class UringSsdFile final : public SsdFile {
 public:
  UringSsdFile(int fd, std::string name, const UringSsdDeviceOptions& options)
      : fd_(fd), name_(std::move(name)), options_(options) {}
  ~UringSsdFile() override { ::close(fd_); }

  Status ReadBatch(std::span<IoRequest> requests) override {
    return Run(requests, /*write=*/false);
  }
  Status WriteBatch(std::span<IoRequest> requests) override {
    return Run(requests, /*write=*/true);
  }
  Status Sync() override {
    if (::fdatasync(fd_) != 0) return ErrnoStatus("fdatasync " + name_, errno);
    return Status::Ok();
  }
  Status Truncate(uint64_t size) override {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      return ErrnoStatus("ftruncate " + name_, errno);
    }
    return Status::Ok();
  }
  Result<uint64_t> Size() const override {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return ErrnoStatus("fstat " + name_, errno);
    return static_cast<uint64_t>(st.st_size);
  }

 private:
  Status CheckAlignment(std::span<IoRequest> requests) const {
    if (!options_.direct_io) return Status::Ok();
    constexpr uint64_t a = UringSsdDevice::kDirectIoAlignment;
    for (IoRequest& r : requests) {
      if (r.offset % a != 0 || r.len % a != 0 ||
          reinterpret_cast<uintptr_t>(r.buf) % a != 0) {
        r.result = -EINVAL;
        return Status(ErrorReason::kInvalidArgument,
                      "O_DIRECT I/O on " + name_ + " is not 4096-aligned");
      }
    }
    return Status::Ok();
  }

  Status Run(std::span<IoRequest> requests, bool write) {
    MT_RETURN_IF_ERROR(CheckAlignment(requests));
    BatchState state(requests, write);
    ThreadRing& thread_ring = ThreadRing::Get();
    io_uring* ring = options_.use_io_uring ? thread_ring.ring() : nullptr;
    if (ring != nullptr) {
      Status status = RunWithRing(ring, fd_, state, write);
      if (!status.ok()) {
        thread_ring.Disable();
        return status;
      }
    } else {
      RunWithSyscalls(fd_, state, write);
    }
    return state.ToStatus();
  }

  const int fd_;
  const std::string name_;
  const UringSsdDeviceOptions options_;
};

bool ValidFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}  // namespace

Result<std::unique_ptr<UringSsdDevice>> UringSsdDevice::Open(
    const std::string& directory, UringSsdDeviceOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) {
    return Status(ErrorReason::kIoError,
                  "create directory " + directory + ": " + ec.message());
  }
  const int dir_fd =
      ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return ErrnoStatus("open directory " + directory, errno);
  if (options.direct_io) {
    // Ask the file system once, with a scratch file, rather than failing at
    // the first data file.
    const char* probe = ".direct-io-probe";
    const int fd =
        ::openat(dir_fd, probe, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);
    const int err = fd < 0 ? errno : 0;
    if (fd >= 0) ::close(fd);
    ::unlinkat(dir_fd, probe, 0);
    if (err == EINVAL && options.fall_back_to_buffered) {
      spdlog::warn(
          "the file system of {} refuses O_DIRECT: SSD I/O goes through the "
          "page cache",
          directory);
      options.direct_io = false;
    } else if (err != 0) {
      ::close(dir_fd);
      return ErrnoStatus("O_DIRECT in " + directory, err);
    }
  }
  return std::unique_ptr<UringSsdDevice>(
      new UringSsdDevice(directory, dir_fd, options));
}

UringSsdDevice::UringSsdDevice(std::string directory, int dir_fd,
                               UringSsdDeviceOptions options)
    : directory_(std::move(directory)), dir_fd_(dir_fd), options_(options) {}

UringSsdDevice::~UringSsdDevice() { ::close(dir_fd_); }

Result<std::unique_ptr<SsdFile>> UringSsdDevice::Open(const std::string& name,
                                                      bool create) {
  if (!ValidFileName(name)) {
    return Status(ErrorReason::kInvalidArgument,
                  "bad file name '" + name + "'");
  }
  int flags = O_RDWR | O_CLOEXEC;
  if (create) flags |= O_CREAT;
  if (options_.direct_io) flags |= O_DIRECT;
  const int fd = ::openat(dir_fd_, name.c_str(), flags, 0644);
  if (fd < 0 && errno == ENOENT && !create) {
    return Status(ErrorReason::kObjectNotFound, "no file " + name);
  }
  if (fd < 0) return ErrnoStatus("open " + directory_ + "/" + name, errno);
  return std::unique_ptr<SsdFile>(new UringSsdFile(fd, name, options_));
}

Result<std::vector<std::string>> UringSsdDevice::List() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(directory_, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) names.push_back(it->path().filename());
  }
  if (ec) {
    return Status(ErrorReason::kIoError,
                  "list " + directory_ + ": " + ec.message());
  }
  return names;
}

Status UringSsdDevice::Remove(const std::string& name) {
  if (!ValidFileName(name)) {
    return Status(ErrorReason::kInvalidArgument,
                  "bad file name '" + name + "'");
  }
  if (::unlinkat(dir_fd_, name.c_str(), 0) != 0) {
    if (errno == ENOENT) {
      return Status(ErrorReason::kObjectNotFound, "no file " + name);
    }
    return ErrnoStatus("unlink " + directory_ + "/" + name, errno);
  }
  return Status::Ok();
}

Result<SsdDevice::Space> UringSsdDevice::FreeSpace() const {
  struct statvfs fs {};
  if (::fstatvfs(dir_fd_, &fs) != 0) {
    return ErrnoStatus("statvfs " + directory_, errno);
  }
  // Blocks kept for root (f_bfree - f_bavail) are no room of ours.
  const uint64_t reserved = fs.f_bfree - std::min(fs.f_bfree, fs.f_bavail);
  const uint64_t blocks =
      fs.f_blocks - std::min<uint64_t>(fs.f_blocks, reserved);
  return Space{static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize,
               blocks * fs.f_frsize};
}

Status UringSsdDevice::Sync() {
  if (::fsync(dir_fd_) != 0) return ErrnoStatus("fsync " + directory_, errno);
  return Status::Ok();
}

}  // namespace mooncake_tier
