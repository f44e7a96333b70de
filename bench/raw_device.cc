#include "bench/raw_device.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace mooncake_tier::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

Status ErrnoStatus(std::string_view call, const std::string& path, int err) {
  return Status(ErrorReason::kIoError, std::string(call) + " on " + path +
                                           " failed: " + std::strerror(err));
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

// The temp file of one call, opened with O_DIRECT when the filesystem
// allows it; closed and unlinked when the object goes away.
class TempFile {
 public:
  static Result<std::unique_ptr<TempFile>> Create(const std::string& dir);
  ~TempFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  bool direct() const { return direct_; }
  const std::string& path() const { return path_; }

 private:
  TempFile(int fd, bool direct, std::string path)
      : fd_(fd), direct_(direct), path_(std::move(path)) {}

  const int fd_;
  const bool direct_;
  const std::string path_;
};

// True for filesystems that live in memory: O_DIRECT (which tmpfs accepts
// since Linux 6.6) reaches no device there.
static bool InMemory(const std::string& dir) {
  struct statfs fs {};
  return statfs(dir.c_str(), &fs) == 0 &&
         (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
}

Result<std::unique_ptr<TempFile>> TempFile::Create(const std::string& dir) {
  const std::string pattern = dir + "/mooncake-raw-device-XXXXXX";
  std::string path = pattern;
  const int created = mkstemp(path.data());
  if (created < 0) return ErrnoStatus("mkstemp", pattern, errno);
  close(created);
  bool direct = !InMemory(dir);
  int fd = direct ? open(path.c_str(), O_RDWR | O_CLOEXEC | O_DIRECT) : -1;
  if (!direct || (fd < 0 && errno == EINVAL)) {
    direct = false;
    fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  }
  if (fd < 0) {
    const int err = errno;
    unlink(path.c_str());
    return ErrnoStatus(direct ? "open(O_DIRECT)" : "open", path, err);
  }
  return std::unique_ptr<TempFile>(new TempFile(fd, direct, std::move(path)));
}

namespace {

// How the file is cut: `chunks` pieces of `chunk` bytes over `threads`
// threads; thread t owns chunks [Begin(t), Begin(t + 1)).
struct Layout {
  uint64_t chunk = 0;
  uint64_t chunks = 0;
  int threads = 0;
  uint64_t base = 0;  // file offset of chunk 0

  uint64_t Begin(int t) const { return chunks * t / threads; }
  uint64_t bytes() const { return chunk * chunks; }
};

Result<Layout> MakeLayout(uint64_t chunk_bytes, uint64_t total_bytes,
                          int threads) {
  if (chunk_bytes == 0 || chunk_bytes % kRawDeviceAlignment != 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "raw device chunk of " + std::to_string(chunk_bytes) +
                      " bytes is not a positive multiple of " +
                      std::to_string(kRawDeviceAlignment));
  }
  if (threads < 1) {
    return Status(ErrorReason::kInvalidArgument,
                  "raw device run needs at least one thread");
  }
  Layout layout;
  layout.chunk = chunk_bytes;
  layout.chunks = std::max<uint64_t>(1, total_bytes / chunk_bytes);
  // No thread without a chunk of its own.
  layout.threads = static_cast<int>(std::min<uint64_t>(threads, layout.chunks));
  return layout;
}

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<std::byte[], FreeDeleter>;

Result<AlignedBuffer> AllocateAligned(uint64_t bytes, uint64_t seed) {
  void* memory = nullptr;
  const int rc = posix_memalign(&memory, kRawDeviceAlignment, bytes);
  if (rc != 0) {
    return Status(ErrorReason::kIoError,
                  "posix_memalign of " + std::to_string(bytes) +
                      " bytes failed: " + std::strerror(rc));
  }
  AlignedBuffer buffer(static_cast<std::byte*>(memory));
  // Incompressible content: a device or host that compresses or
  // de-duplicates gains nothing.
  for (uint64_t i = 0; i + 8 <= bytes; i += 8) {
    const uint64_t word = SplitMix64(seed + i);
    std::memcpy(&buffer[i], &word, 8);
  }
  return buffer;
}

enum class Direction { kWrite, kRead };

// Moves `len` bytes at `offset`, resuming after short transfers and EINTR.
Status FullTransfer(const TempFile& file, Direction direction,
                    std::byte* buffer, uint64_t len, uint64_t offset) {
  uint64_t done = 0;
  while (done < len) {
    const ssize_t n =
        direction == Direction::kWrite
            ? pwrite(file.fd(), buffer + done, len - done, offset + done)
            : pread(file.fd(), buffer + done, len - done, offset + done);
    if (n < 0 && errno == EINTR) continue;
    const char* call = direction == Direction::kWrite ? "pwrite" : "pread";
    if (n < 0) return ErrnoStatus(call, file.path(), errno);
    if (n == 0) {
      return Status(ErrorReason::kIoError, std::string(call) + " on " +
                                               file.path() +
                                               " moved nothing at offset " +
                                               std::to_string(offset + done));
    }
    done += static_cast<uint64_t>(n);
  }
  return Status();
}

// Thread t's region, chunk by chunk in order. Before each write the first
// 8 bytes of every 4 KiB are made unique to the chunk, so no two blocks of
// the file are alike.
Status MoveRegion(const TempFile& file, const Layout& layout, int t,
                  Direction direction, std::byte* buffer) {
  for (uint64_t c = layout.Begin(t); c < layout.Begin(t + 1); ++c) {
    if (direction == Direction::kWrite) {
      for (uint64_t at = 0; at < layout.chunk; at += kRawDeviceAlignment) {
        const uint64_t stamp = SplitMix64(c * layout.chunk + at);
        std::memcpy(buffer + at, &stamp, sizeof(stamp));
      }
    }
    MT_RETURN_IF_ERROR(FullTransfer(file, direction, buffer, layout.chunk,
                                    layout.base + c * layout.chunk));
  }
  return Status();
}

// Every thread moves its region, all started together; `finish` runs on
// this thread once they are done. Seconds from the start to the end of
// `finish` (buffers are allocated before the clock starts), or the first
// error of a thread or of `finish`.
Result<double> TimedParallel(const TempFile& file, const Layout& layout,
                             Direction direction,
                             const std::function<Status()>& finish) {
  std::vector<AlignedBuffer> buffers;
  for (int t = 0; t < layout.threads; ++t) {
    MT_ASSIGN_OR_RETURN(AlignedBuffer buffer,
                        AllocateAligned(layout.chunk, t * 0x5851F42Dull));
    buffers.push_back(std::move(buffer));
  }
  std::vector<Status> outcomes(layout.threads);
  std::barrier start(layout.threads + 1);
  std::vector<std::thread> pool;
  for (int t = 0; t < layout.threads; ++t) {
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      outcomes[t] = MoveRegion(file, layout, t, direction, buffers[t].get());
    });
  }
  start.arrive_and_wait();
  const auto begin = SteadyClock::now();
  for (std::thread& thread : pool) thread.join();
  Status finished = finish();
  const double seconds =
      std::chrono::duration<double>(SteadyClock::now() - begin).count();
  for (Status& outcome : outcomes) MT_RETURN_IF_ERROR(outcome);
  MT_RETURN_IF_ERROR(finished);
  return seconds;
}

// Sizes the file (sparse) and writes every region; the time includes the
// closing fdatasync.
Result<double> WriteFile(const TempFile& file, const Layout& layout) {
  if (ftruncate(file.fd(), static_cast<off_t>(layout.bytes())) != 0) {
    return ErrnoStatus("ftruncate", file.path(), errno);
  }
  return TimedParallel(file, layout, Direction::kWrite, [&file] {
    return fdatasync(file.fd()) == 0
               ? Status()
               : ErrnoStatus("fdatasync", file.path(), errno);
  });
}

RawDeviceResult MakeResult(const TempFile& file, const Layout& layout,
                           double seconds) {
  RawDeviceResult result;
  result.bytes = layout.bytes();
  result.seconds = seconds;
  result.gbps =
      seconds > 0 ? static_cast<double>(result.bytes) / seconds / 1e9 : 0;
  result.direct = file.direct();
  return result;
}

}  // namespace

Result<RawDeviceResult> RawDirectWrite(const std::string& dir,
                                       uint64_t chunk_bytes,
                                       uint64_t total_bytes, int threads) {
  MT_ASSIGN_OR_RETURN(const Layout layout,
                      MakeLayout(chunk_bytes, total_bytes, threads));
  MT_ASSIGN_OR_RETURN(std::unique_ptr<TempFile> file, TempFile::Create(dir));
  MT_ASSIGN_OR_RETURN(const double seconds, WriteFile(*file, layout));
  return MakeResult(*file, layout, seconds);
}

Result<RawDeviceResult> RawDirectRead(const std::string& dir,
                                      uint64_t chunk_bytes,
                                      uint64_t total_bytes, int threads) {
  MT_ASSIGN_OR_RETURN(const Layout layout,
                      MakeLayout(chunk_bytes, total_bytes, threads));
  MT_ASSIGN_OR_RETURN(std::unique_ptr<TempFile> file, TempFile::Create(dir));
  MT_RETURN_IF_ERROR(WriteFile(*file, layout).status());
  if (!file->direct()) {
    // Buffered fallback: read from the device, not from what was just
    // written into the page cache.
    const int rc = posix_fadvise(file->fd(), 0, 0, POSIX_FADV_DONTNEED);
    if (rc != 0) return ErrnoStatus("posix_fadvise", file->path(), rc);
  }
  MT_ASSIGN_OR_RETURN(
      const double seconds,
      TimedParallel(*file, layout, Direction::kRead, [] { return Status(); }));
  return MakeResult(*file, layout, seconds);
}

RawReadFile::RawReadFile(std::unique_ptr<TempFile> file, uint64_t size)
    : file_(std::move(file)), size_(size) {}

RawReadFile::~RawReadFile() = default;

Result<std::unique_ptr<RawReadFile>> RawReadFile::Write(const std::string& dir,
                                                        uint64_t total_bytes) {
  constexpr uint64_t kWriteChunk = 4 << 20;
  MT_ASSIGN_OR_RETURN(Layout layout,
                      MakeLayout(kWriteChunk, total_bytes, /*threads=*/1));
  layout.chunks = (total_bytes + kWriteChunk - 1) / kWriteChunk;
  MT_ASSIGN_OR_RETURN(std::unique_ptr<TempFile> file, TempFile::Create(dir));
  MT_RETURN_IF_ERROR(WriteFile(*file, layout).status());
  if (!file->direct()) {
    const int rc = posix_fadvise(file->fd(), 0, 0, POSIX_FADV_DONTNEED);
    if (rc != 0) return ErrnoStatus("posix_fadvise", file->path(), rc);
  }
  return std::unique_ptr<RawReadFile>(
      new RawReadFile(std::move(file), layout.bytes()));
}

Result<RawDeviceResult> RawReadFile::Read(uint64_t offset, uint64_t chunk_bytes,
                                          uint64_t total_bytes, int threads) {
  MT_ASSIGN_OR_RETURN(Layout layout,
                      MakeLayout(chunk_bytes, total_bytes, threads));
  layout.base = offset;
  if (offset % kRawDeviceAlignment != 0 || offset > size_ ||
      layout.bytes() > size_ - offset) {
    return Status(ErrorReason::kInvalidArgument,
                  "raw read of " + std::to_string(layout.bytes()) +
                      " bytes at " + std::to_string(offset) +
                      " is outside the " + std::to_string(size_) +
                      "-byte file or off a 4096-byte boundary");
  }
  MT_ASSIGN_OR_RETURN(
      const double seconds,
      TimedParallel(*file_, layout, Direction::kRead, [] { return Status(); }));
  return MakeResult(*file_, layout, seconds);
}

}  // namespace mooncake_tier::bench
