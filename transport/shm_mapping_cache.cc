#include "transport/shm_mapping_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "spdlog/spdlog.h"
#include "transport/shm_export.h"

namespace mooncake_tier {
namespace {

Status NotShared(const std::string& why) {
  return Status(ErrorReason::kNotApplicable, why);
}

Status Errno(const std::string& what) {
  return NotShared(what + ": " + std::strerror(errno));
}

}  // namespace

ShmMapping::~ShmMapping() {
  munmap(map_, map_size_);
  close(fd_);
}

Result<bool> ShmMapping::IsExported() const { return ShmFileIsExported(fd_); }

ShmMappingCache::ShmMappingCache(size_t max_mappings)
    : max_mappings_(max_mappings < 1 ? 1 : max_mappings) {}

Result<std::unique_ptr<ShmMapping>> ShmMappingCache::Map(
    const SegmentEndpoint& segment, const ShmLocator& locator) {
  if (HostBootId() == BootId{} || locator.boot_id != HostBootId()) {
    return NotShared("the node is on another host");
  }
  if (locator.file_offset > locator.file_size ||
      segment.size > locator.file_size - locator.file_offset) {
    return NotShared("the segment does not fit in the shared file");
  }
  const std::string path = "/proc/" + std::to_string(locator.pid) + "/fd/" +
                           std::to_string(locator.fd);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Errno("opening " + path);
  // Everything below looks at the file actually opened, never at the path
  // again: the pid or the descriptor number may have been reused meanwhile.
  auto fail = [fd](Status why) {
    close(fd);
    return why;
  };
  const std::string expected =
      "/memfd:" + ShmFileName(locator.token) + " (deleted)";
  char link[512];
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = readlink(self.c_str(), link, sizeof(link));
  if (n < 0) return fail(Errno("readlink " + self));
  if (std::string_view(link, static_cast<size_t>(n)) != expected) {
    return fail(NotShared(path + " is not the node's segment (token differs)"));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) return fail(Errno("fstat " + path));
  if (!S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_ino) != locator.inode ||
      static_cast<uint64_t>(st.st_size) != locator.file_size) {
    return fail(NotShared(path + " differs from the published inode or size"));
  }
  Result<bool> exported = ShmFileIsExported(fd);
  if (!exported.ok()) return fail(NotShared(exported.status().message()));
  if (!*exported) return fail(NotShared("the segment is no longer exported"));
  void* map = mmap(nullptr, locator.file_size, PROT_READ | PROT_WRITE,
                   MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return fail(Errno("mapping " + path));
  std::byte* base = static_cast<std::byte*>(map);
  return std::unique_ptr<ShmMapping>(new ShmMapping(
      fd, base, locator.file_size, base + locator.file_offset, segment.size));
}

ShmMappingCache::Found ShmMappingCache::Find(const SegmentEndpoint& segment,
                                             const ShmLocator& locator) {
  const std::string& key = segment.remote_key;
  {
    MutexLock lock(&mu_);
    auto it = mappings_.find(key);
    if (it != mappings_.end()) {
      it->second.last_use = ++use_clock_;
      return {it->second.mapping, false};
    }
    auto failed = failures_.find(key);
    if (failed != failures_.end()) {
      if (Clock::now() - failed->second.at < kRetryAfter) {
        return {nullptr, failed->second.gone};
      }
      failures_.erase(failed);
    }
  }
  // Opening and mapping take syscalls: not under the table lock.
  Result<std::unique_ptr<ShmMapping>> mapped = Map(segment, locator);
  std::shared_ptr<const ShmMapping> dropped;  // unmapped after the lock
  MutexLock lock(&mu_);
  if (!mapped.ok()) {
    ++stats_.map_failures;
    RememberFailure(key, /*gone=*/false);
    spdlog::info(
        "same-host shared memory not used for the segment of pid {} "
        "({}); using UCX",
        locator.pid, mapped.status().message());
    return {nullptr, false};
  }
  auto [it, inserted] = mappings_.try_emplace(key);
  it->second.last_use = ++use_clock_;
  if (!inserted) return {it->second.mapping, false};  // another caller won
  it->second.mapping = std::move(*mapped);
  ++stats_.mapped;
  Populate(key, it->second);
  if (mappings_.size() > max_mappings_) {
    auto oldest = mappings_.end();
    for (auto e = mappings_.begin(); e != mappings_.end(); ++e) {
      if (oldest == mappings_.end() ||
          e->second.last_use < oldest->second.last_use) {
        oldest = e;
      }
    }
    dropped = std::move(oldest->second.mapping);
    mappings_.erase(oldest);
    ++stats_.evicted;
  }
  stats_.live = mappings_.size();
  return {mappings_.find(key)->second.mapping, false};
}

void ShmMappingCache::MarkGone(const std::string& remote_key) {
  std::shared_ptr<const ShmMapping> dropped;
  MutexLock lock(&mu_);
  auto it = mappings_.find(remote_key);
  if (it != mappings_.end()) {
    dropped = std::move(it->second.mapping);
    mappings_.erase(it);
    ++stats_.gone;
  }
  RememberFailure(remote_key, /*gone=*/true);
  stats_.live = mappings_.size();
}

void ShmMappingCache::SweepIfDue() {
  std::vector<std::pair<std::string, std::shared_ptr<const ShmMapping>>> all;
  {
    MutexLock lock(&mu_);
    if (mappings_.empty()) return;
    const Clock::time_point now = Clock::now();
    if (now - last_sweep_ < kSweepInterval) return;
    last_sweep_ = now;
    for (const auto& [key, entry] : mappings_) {
      all.emplace_back(key, entry.mapping);
    }
  }
  for (const auto& [key, mapping] : all) {
    Result<bool> exported = mapping->IsExported();
    if (!exported.ok() || !*exported) MarkGone(key);
  }
  MutexLock lock(&mu_);
  for (auto& [key, entry] : mappings_) {
    if (WantsAnotherPass(entry)) Populate(key, entry);
  }
}

bool ShmMappingCache::WantsAnotherPass(const Entry& entry) {
  const uint64_t target =
      std::min(entry.mapping->map_size_, kMaxPopulatedBytes);
  return !entry.populating && entry.populate_passes < kMaxPopulatePasses &&
         entry.populated < target &&
         (entry.populate_passes == 1 ||
          entry.populated > entry.populated_before);
}

void ShmMappingCache::Populate(const std::string& key, Entry& entry) {
  const ShmMapping& m = *entry.mapping;
  entry.populating = true;
  ++entry.populate_passes;
  populator_.Add(
      std::weak_ptr<const void>(entry.mapping), m.map_,
      std::min(m.map_size_, kMaxPopulatedBytes),
      PagePopulator::Mode::kResidentOnly,
      [this, key, mapping = &m](uint64_t bytes, double) {
        MutexLock lock(&mu_);
        auto it = mappings_.find(key);
        if (it == mappings_.end() || it->second.mapping.get() != mapping) {
          return;  // dropped, or mapped again since
        }
        it->second.populating = false;
        it->second.populated_before = it->second.populated;
        it->second.populated = bytes;
      });
}

void ShmMappingCache::Clear() {
  absl::flat_hash_map<std::string, Entry> dropped;
  MutexLock lock(&mu_);
  dropped.swap(mappings_);
  failures_.clear();
  stats_.live = 0;
}

void ShmMappingCache::RememberFailure(const std::string& key, bool gone) {
  if (failures_.size() >= kMaxFailures) failures_.clear();
  failures_[key] = Failure{Clock::now(), gone};
}

ShmMappingCacheStats ShmMappingCache::stats() const {
  ShmMappingCacheStats out;
  {
    MutexLock lock(&mu_);
    out = stats_;
  }
  out.populated_bytes = populator_.stats().populated_bytes;
  return out;
}

}  // namespace mooncake_tier
