#pragma once

// The client's side of same-host shared memory: node segments mapped into
// this process, by the remote key (envelope) that names them.
//
// Mapping a segment (once, on first use) checks, in order: the locator's
// boot id is this host's; /proc/<pid>/fd/<fd> opens (same user, same pid
// namespace, the node alive); the file opened is named
// "/memfd:" + ShmFileName(token) + " (deleted)" and has the locator's inode
// and size (so a reused pid, another container or another file can never be
// mapped in its place); the node still holds its export lock; the segment
// fits in the file. Any failure means "use UCX" and is remembered for
// kRetryAfter, so it costs nothing on later calls.
//
// A segment found no longer exported (node dead or segment withdrawn) is
// forgotten and remembered as gone: transfers to it are refused
// UNAVAILABLE at once for kRetryAfter, then a fresh mapping is tried (which
// fails over to UCX if the node is gone for good).
//
// Mapped segments are also checked every kSweepInterval (from SweepIfDue,
// which the transport calls on each transfer), so the memory of a node
// that died is let go within about a second of the next transfer to any
// node, not only when its own segment is used again.
//
// At most `max_mappings` segments stay mapped; past that the least recently
// used one is dropped. A dropped mapping is unmapped once the last transfer
// using it has finished (shared ownership).
//
// A new mapping's pages that the node already holds are entered into this
// process's page tables by a background thread (PopulateResidentPages, up
// to kMaxPopulatedBytes): otherwise the first copy into each page pays a
// fault, 10-20 us on a virtual machine, some 250 us for a 64 KiB put. The
// pages the node has not allocated are left alone, so none is charged to
// this process. A node still populating its segment when it was mapped
// holds more a moment later: the sweep passes over the mapping again while
// each pass finds more, at most kMaxPopulatePasses times.
//
// Thread safety: thread-safe; one mutex guards the table, never held
// while copying.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"
#include "base/page_populate.h"
#include "transport/shm_locator.h"
#include "transport/transport.h"

namespace mooncake_tier {

// One mapped segment. Unmapped and closed on destruction.
class ShmMapping {
 public:
  ~ShmMapping();
  ShmMapping(const ShmMapping&) = delete;
  ShmMapping& operator=(const ShmMapping&) = delete;

  // The segment's byte 0 in this process.
  std::byte* segment() const { return segment_; }
  uint64_t segment_size() const { return segment_size_; }
  // Bytes mapped from segment() to the end of the file: the segment and,
  // past segment_size(), what the node keeps behind it (its SSD-read
  // staging area, if any; page rounding otherwise).
  uint64_t reachable_size() const {
    return map_size_ - static_cast<uint64_t>(segment_ - map_);
  }
  // Whether the node still exports the segment (ShmFileIsExported).
  Result<bool> IsExported() const;

 private:
  friend class ShmMappingCache;
  ShmMapping(int fd, std::byte* map, uint64_t map_size, std::byte* segment,
             uint64_t segment_size)
      : fd_(fd),
        map_(map),
        map_size_(map_size),
        segment_(segment),
        segment_size_(segment_size) {}

  const int fd_;
  std::byte* const map_;
  const uint64_t map_size_;
  std::byte* const segment_;
  const uint64_t segment_size_;
};

struct ShmMappingCacheStats {
  uint64_t mapped = 0;           // segments mapped so far
  uint64_t map_failures = 0;     // locators that could not be mapped (UCX used)
  uint64_t gone = 0;             // mapped segments found no longer exported
  uint64_t evicted = 0;          // dropped to stay within max_mappings
  uint64_t live = 0;             // mapped now
  uint64_t populated_bytes = 0;  // entered ahead of use (see above)
};

class ShmMappingCache {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kRetryAfter{10};
  // Remembered failures past this many are all forgotten.
  static constexpr size_t kMaxFailures = 1024;
  static constexpr std::chrono::seconds kSweepInterval{1};
  // Of one mapping, at most this much is populated ahead: 128 MiB of page
  // tables. Larger segments fault in the rest (huge pages avoid both).
  static constexpr uint64_t kMaxPopulatedBytes = uint64_t{64} << 30;
  static constexpr int kMaxPopulatePasses = 64;

  // REQUIRES: max_mappings >= 1.
  explicit ShmMappingCache(size_t max_mappings);

  struct Found {
    // Copy through this; null: see `gone`.
    std::shared_ptr<const ShmMapping> mapping;
    // With no mapping: true when the segment is known to be gone (refuse
    // UNAVAILABLE), false when UCX should carry the transfer.
    bool gone = false;
  };
  // The mapping of `segment`, whose remote key carried `locator`, mapping it
  // on first use.
  Found Find(const SegmentEndpoint& segment, const ShmLocator& locator);
  // `segment` turned out not to be exported any more: forget its mapping
  // and remember it as gone.
  void MarkGone(const SegmentEndpoint& segment) {
    MarkGone(segment.remote_key);
  }
  // At most once per kSweepInterval: MarkGone for every mapped segment no
  // longer exported.
  void SweepIfDue();
  // Forgets every mapping (each unmapped when its users finish).
  void Clear();

  ShmMappingCacheStats stats() const;

 private:
  struct Entry {
    std::shared_ptr<const ShmMapping> mapping;
    uint64_t last_use = 0;
    // Populating ahead (see above): passes started, one in flight, what
    // the last two finished passes found.
    int populate_passes = 0;
    bool populating = false;
    uint64_t populated = 0, populated_before = 0;
  };
  struct Failure {
    Clock::time_point at;
    bool gone = false;
  };

  // Maps outside the table lock; an empty result means "use UCX".
  static Result<std::unique_ptr<ShmMapping>> Map(const SegmentEndpoint& segment,
                                                 const ShmLocator& locator);
  void RememberFailure(const std::string& key, bool gone)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MarkGone(const std::string& remote_key);
  // Starts a populating pass over `entry`'s mapping.
  void Populate(const std::string& key, Entry& entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether another pass may find more.
  static bool WantsAnotherPass(const Entry& entry);

  const size_t max_mappings_;
  mutable Mutex mu_;
  absl::flat_hash_map<std::string, Entry> mappings_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Failure> failures_ ABSL_GUARDED_BY(mu_);
  uint64_t use_clock_ ABSL_GUARDED_BY(mu_) = 0;
  Clock::time_point last_sweep_ ABSL_GUARDED_BY(mu_);
  ShmMappingCacheStats stats_ ABSL_GUARDED_BY(mu_);
  // Declared last: stopped first, while the mappings it touches live.
  PagePopulator populator_;
};

}  // namespace mooncake_tier
