#pragma once

// Where recently read objects' DRAM copies are, for as long as the master
// vouches for them: a GetReplicaList that answers with a location grant
// (ObjectReplicas::location_valid_ms) says that the first replica's range
// holds the object's bytes until the grant runs out, whatever happens to
// the object meanwhile (the master hands the range out again only after
// that). A get that finds its key here reads those bytes with no call to
// the master, and keeps them only if the read completed before the grant
// ran out (docs/design/location-cache.md).
//
// Entries are keyed by object key, in power-of-two stripes each with its
// own mutex. The cache is bounded: a full stripe drops an entry (an expired
// one when it meets one, else an arbitrary one) to take a new one.
//
// Thread safety: thread-safe.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "protocol/types.h"

namespace mooncake_tier {

class LocationCache {
 public:
  struct Entry {
    ReplicaDescriptor replica;  // the DRAM copy to read
    uint64_t size = 0;          // the object's size
    // Reads that complete before this (the reader's clock) read the
    // object's bytes.
    TimePoint valid_until;
    // Of the object's group (the master keeps it whole): a hash of the
    // group id, 0 for an object that is no member.
    uint64_t group = 0;
    // When a read of it was last reported to the master (Find).
    TimePoint reported_at = TimePoint::min();
  };

  // A hot key's reads are reported to the master at most this often: its
  // recency and promotion counts need no more, and a client reading one
  // object 100k times a second must not send 100k reports.
  static constexpr Duration kReportEvery = std::chrono::milliseconds(100);

  // Holds at most about `capacity` entries (REQUIRES: > 0); `clock` (the
  // reader's, which the entries' times are on) outlives the cache.
  LocationCache(size_t capacity, const Clock* clock);
  LocationCache(const LocationCache&) = delete;
  LocationCache& operator=(const LocationCache&) = delete;

  // The entry of `key` if its grant lasts past `now`; an expired one is
  // dropped. With `report_due`, says whether this read should be reported
  // (none was within kReportEvery; the entry then counts it as reported).
  std::optional<Entry> Find(std::string_view key, TimePoint now,
                            bool* report_due = nullptr);
  // Records (or replaces) the entry of `key`.
  void Insert(std::string_view key, const Entry& entry);
  // Forgets `key` (the caller removed or rewrote it, or its read failed).
  void Erase(std::string_view key);
  // Forgets every entry.
  void Clear();
  // The Entry::group of a group id (never 0).
  static uint64_t GroupHash(std::string_view group_id);

  struct Stats {
    uint64_t hits = 0;     // Find answered an entry
    uint64_t misses = 0;   // no entry, or an expired one
    uint64_t expired = 0;  // of the misses: the grant had run out
    uint64_t inserted = 0;
    uint64_t dropped = 0;  // made room for another entry
    uint64_t entries = 0;  // now
  };
  Stats stats() const;

 private:
  static constexpr size_t kStripes = 16;
  struct Stripe {
    mutable Mutex mu;
    absl::flat_hash_map<std::string, Entry> entries ABSL_GUARDED_BY(mu);
  };
  Stripe& StripeOf(std::string_view key);

  const size_t per_stripe_;
  const Clock* const clock_;
  std::unique_ptr<Stripe[]> stripes_;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> expired_{0};
  std::atomic<uint64_t> inserted_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace mooncake_tier
