#pragma once

// Raw device throughput: what the block device under a directory does for
// plain O_DIRECT writes and reads, with no store in the way. The baseline
// the scenarios set beside the store's SSD tier (same directory, so the
// same device, in the same run).
//
// Each call creates its own temp file in `dir` (mkstemp), moves
// `total_bytes` (rounded down to whole chunks, at least one chunk) in
// `chunk_bytes` pieces with `threads` threads, and removes the file before
// it returns. Thread t owns a contiguous region of the file (chunks
// [t*n/threads, (t+1)*n/threads)) and walks it in order with pwrite/pread
// at its own offsets, reusing one 4096-aligned buffer (posix_memalign) of
// `chunk_bytes`: memory stays at threads x chunk_bytes.
//
// When the filesystem refuses O_DIRECT (open fails with EINVAL: tmpfs
// before Linux 6.6, some FUSE mounts) or lives in memory (tmpfs, ramfs:
// O_DIRECT would reach no device), the calls use buffered I/O and say so
// with RawDeviceResult::direct = false; such figures are the page cache's
// (plus a flush), not the device's.
//
// Errors: INVALID_ARGUMENT for a chunk that is not a positive multiple of
// 4096 or threads < 1; IO_ERROR naming the call that failed (mkstemp, open,
// pwrite, pread, fdatasync, ...), the path and errno's text.
//
// Thread safety: each call is independent and runs threads of its own;
// calls may run concurrently (each has its own file), though their figures
// then share the device.

#include <cstdint>
#include <memory>
#include <string>

#include "mooncake_tier/status.h"

namespace mooncake_tier::bench {

// O_DIRECT needs buffers, offsets and lengths aligned to the device's
// logical block; 4096 covers every common device.
inline constexpr uint64_t kRawDeviceAlignment = 4096;

struct RawDeviceResult {
  double gbps = 0;     // bytes / seconds / 1e9
  double seconds = 0;  // wall time of the timed phase
  uint64_t bytes = 0;  // bytes moved in the timed phase
  bool direct = true;  // false: buffered I/O (O_DIRECT refused)
};

// Writes a fresh file. The file is first sized with ftruncate (sparse, so
// the device still allocates blocks while timed, as a store's growing files
// do); the timing covers the writes of all threads and the fdatasync that
// follows them (in the buffered fallback that is where the bytes reach the
// device).
Result<RawDeviceResult> RawDirectWrite(const std::string& dir,
                                       uint64_t chunk_bytes,
                                       uint64_t total_bytes, int threads);

// Writes the file (untimed, synced, and in the buffered fallback dropped
// from the page cache with POSIX_FADV_DONTNEED), then reads it back, timed.
// Each thread reads its region in order, chunk by chunk: a store reading
// whole objects reads each object's bytes in order too, and objects put
// together tend to lie together in its append-only files. A random order
// of chunks would give the lower bound for scattered objects; with O_DIRECT
// there is no readahead either way, so only the device's own locality
// differs.
Result<RawDeviceResult> RawDirectRead(const std::string& dir,
                                      uint64_t chunk_bytes,
                                      uint64_t total_bytes, int threads);

class TempFile;

// A file written now and read later, a region at a time: the baseline for
// reads of data written a while before, as a store's SSD objects are by
// the time they are read. A virtual disk's host may keep what was just
// written in its cache: O_DIRECT reads of a file written a moment ago ran
// at about twice the speed of reads of one written weeks before (1.2-1.3
// against 0.6-0.74 GB/s with dd on the development VM), so a file written
// right before it is read may flatter the device.
//
// Thread safety: one thread at a time.
class RawReadFile {
 public:
  // Writes `total_bytes` (rounded up to 4 MiB) of incompressible bytes to
  // a temp file in `dir` and syncs it (in the buffered fallback, drops it
  // from the page cache). The file is removed with the object.
  static Result<std::unique_ptr<RawReadFile>> Write(const std::string& dir,
                                                    uint64_t total_bytes);
  ~RawReadFile();
  RawReadFile(const RawReadFile&) = delete;
  RawReadFile& operator=(const RawReadFile&) = delete;

  // Reads `total_bytes` (whole chunks, at least one) from `offset` as
  // RawDirectRead reads its file, timed. INVALID_ARGUMENT when the range
  // leaves the file or `offset` is off a 4096-byte boundary. Read each
  // region once: a second read comes from the host's cache.
  Result<RawDeviceResult> Read(uint64_t offset, uint64_t chunk_bytes,
                               uint64_t total_bytes, int threads);

 private:
  RawReadFile(std::unique_ptr<TempFile> file, uint64_t size);

  std::unique_ptr<TempFile> file_;
  uint64_t size_ = 0;
};

}  // namespace mooncake_tier::bench
