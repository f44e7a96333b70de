#include "transport/shared_memory_file.h"

#include <fcntl.h>
#include <linux/memfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "base/mutex.h"

namespace mooncake_tier {
namespace {

constexpr uint64_t kHugePage = uint64_t{2} << 20;
constexpr uint64_t kPage = 4096;

uint64_t RoundUp(uint64_t n, uint64_t unit) {
  return (n + unit - 1) / unit * unit;
}

Status Errno(ErrorReason reason, const std::string& what) {
  return Status(reason, what + ": " + std::strerror(errno));
}

// The live SharedMemoryFiles of this process, so that an exporter given an
// address can find the file behind it. Small (one per DRAM segment).
struct Table {
  Mutex mu;
  std::vector<const SharedMemoryFile*> files ABSL_GUARDED_BY(mu);
};

Table& LiveFiles() {
  static Table* table = new Table();  // never destroyed: used at exit
  return *table;
}

// Creates, sizes, seals and maps one memfd; the caller handles fallbacks.
struct Mapped {
  int fd = -1;
  std::byte* base = nullptr;
  uint64_t mapped = 0;
};

Result<Mapped> MapNewFile(const std::string& name, uint64_t size,
                          bool hugetlb) {
  unsigned flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
  if (hugetlb) flags |= MFD_HUGETLB | MFD_HUGE_2MB;
  const int fd = memfd_create(name.c_str(), flags);
  if (fd < 0) return Errno(ErrorReason::kIoError, "memfd_create");
  Mapped out;
  out.fd = fd;
  out.mapped = RoundUp(size, hugetlb ? kHugePage : kPage);
  if (ftruncate(fd, static_cast<off_t>(out.mapped)) != 0) {
    Status failed = Errno(ErrorReason::kNoSpace, "sizing the memory file");
    close(fd);
    return failed;
  }
  // A process that maps the file must never see it shrink under it (a
  // write past the end is SIGBUS), nor resize it itself.
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    Status failed = Errno(ErrorReason::kIoError, "sealing the memory file");
    close(fd);
    return failed;
  }
  // Without MAP_NORESERVE: for hugetlb pages that makes mmap reserve them
  // now (and fail when there are too few) instead of a SIGBUS at first
  // touch. Normal shared memory is never reserved up front anyway.
  void* p =
      mmap(nullptr, out.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    Status failed =
        Errno(ErrorReason::kNoSpace, "mapping " + std::to_string(out.mapped) +
                                         " bytes of shared memory");
    close(fd);
    return failed;
  }
  out.base = static_cast<std::byte*>(p);
  return out;
}

}  // namespace

Result<std::unique_ptr<SharedMemoryFile>> SharedMemoryFile::Create(
    uint64_t size, bool huge_pages) {
  if (size == 0) return Status(ErrorReason::kInvalidSize, "size is 0");
  MT_ASSIGN_OR_RETURN(const ShmToken token, NewShmToken());
  const std::string name = ShmFileName(token);
  Result<Mapped> mapped = Status(ErrorReason::kNotApplicable, "not tried");
  bool hugetlb = false;
  if (huge_pages) {
    mapped = MapNewFile(name, size, /*hugetlb=*/true);
    hugetlb = mapped.ok();
  }
  if (!mapped.ok()) {
    mapped = MapNewFile(name, size, /*hugetlb=*/false);
    if (!mapped.ok()) return mapped.status();
    if (huge_pages) madvise(mapped->base, mapped->mapped, MADV_HUGEPAGE);
  }
  struct stat st {};
  if (fstat(mapped->fd, &st) != 0) {
    Status failed = Errno(ErrorReason::kIoError, "fstat of the memory file");
    munmap(mapped->base, mapped->mapped);
    close(mapped->fd);
    return failed;
  }
  std::unique_ptr<SharedMemoryFile> file(
      new SharedMemoryFile(mapped->fd, mapped->base, size, mapped->mapped,
                           hugetlb, token, static_cast<uint64_t>(st.st_ino)));
  Table& table = LiveFiles();
  MutexLock lock(&table.mu);
  table.files.push_back(file.get());
  return file;
}

SharedMemoryFile::SharedMemoryFile(int fd, std::byte* base, uint64_t size,
                                   uint64_t mapped, bool hugetlb,
                                   ShmToken token, uint64_t inode)
    : fd_(fd),
      base_(base),
      size_(size),
      mapped_(mapped),
      hugetlb_(hugetlb),
      token_(token),
      inode_(inode) {}

SharedMemoryFile::~SharedMemoryFile() {
  {
    Table& table = LiveFiles();
    MutexLock lock(&table.mu);
    std::erase(table.files, this);
  }
  munmap(base_, mapped_);
  close(fd_);
}

Result<SharedMemoryFile::Opened> SharedMemoryFile::OpenForExport(
    const std::byte* base, uint64_t size) {
  Table& table = LiveFiles();
  // Held while opening, so the file cannot be closed (and its descriptor
  // number reused) in between.
  MutexLock lock(&table.mu);
  for (const SharedMemoryFile* file : table.files) {
    if (base < file->base_ || base >= file->base_ + file->mapped_) continue;
    const uint64_t offset = static_cast<uint64_t>(base - file->base_);
    if (size > file->mapped_ - offset) break;  // the range leaves the file
    // A new open file description: the exporter's lock and descriptor are
    // its own, independent of fd_.
    const std::string path = "/proc/self/fd/" + std::to_string(file->fd_);
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return Errno(ErrorReason::kIoError, "reopening " + path);
    Opened out;
    out.fd = fd;
    out.locator.boot_id = HostBootId();
    out.locator.pid = static_cast<uint32_t>(getpid());
    out.locator.fd = fd;
    out.locator.token = file->token_;
    out.locator.inode = file->inode_;
    out.locator.file_size = file->mapped_;
    out.locator.file_offset = offset;
    return out;
  }
  return Status(ErrorReason::kNotApplicable,
                "the range is not in shared memory of this process");
}

}  // namespace mooncake_tier
