#pragma once

// Faulting a mapping's pages in before anyone needs them.
//
// A first touch of a page costs a fault: in the node, allocating and
// zeroing it; in a client that maps the node's segment, entering it in the
// client's page tables. On a virtual machine even a mapped page costs
// microseconds at its first write from a process: a 64 KiB copy into a
// fresh range took about 165 us, against 2.5 us once its pages had been
// written (docs/design/small-objects.md). Populating ahead takes that off
// the request path.
//
// Nothing here writes a byte of the range: it is safe while other threads
// and processes read and write it.
//
// Thread safety: the functions are; PagePopulator is thread-safe.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"

namespace mooncake_tier {

// Maps every page of [begin, begin + length) writable into this process,
// allocating the memory behind any that has none, as a write would
// (MADV_POPULATE_WRITE), then writes each page once without changing it
// (an atomic OR of 0), which is what makes the first real write cheap on
// a VM with shadow page tables. `begin` must be page-aligned. False when
// the kernel refused (out of memory, a bad range): the pages not
// populated fault on first use.
bool PopulatePages(std::byte* begin, uint64_t length);

// The same for a shared file mapping, but only for the pages the file
// already has (mincore): never allocates, so the memory stays charged to
// whoever allocated it (the node, not its clients). Returns the bytes
// populated.
uint64_t PopulateResidentPages(std::byte* begin, uint64_t length);

// Populates ranges in one background thread, chunk by chunk, in the order
// they were added.
class PagePopulator {
 public:
  enum class Mode { kAllocate, kResidentOnly };
  // Bytes populated by one call: the thread checks for stop and for a
  // range's owner going between chunks.
  static constexpr uint64_t kChunkBytes = uint64_t{64} << 20;

  PagePopulator();
  // Stops after the chunk in hand and joins the thread.
  ~PagePopulator();
  PagePopulator(const PagePopulator&) = delete;
  PagePopulator& operator=(const PagePopulator&) = delete;

  // Populates [begin, begin + length), which must stay mapped until the
  // range is done or this populator is destroyed. `on_done` (may be empty)
  // runs in the thread with the bytes populated and the seconds taken.
  void Add(std::byte* begin, uint64_t length, Mode mode,
           std::function<void(uint64_t bytes, double seconds)> on_done = {});
  // The same, for a range owned by `owner`: `owner` is locked (and held)
  // for each chunk, and the rest of the range is skipped once it expired.
  void Add(std::weak_ptr<const void> owner, std::byte* begin, uint64_t length,
           Mode mode,
           std::function<void(uint64_t bytes, double seconds)> on_done = {});

  struct Stats {
    uint64_t populated_bytes = 0;  // so far, all ranges
    uint64_t pending_ranges = 0;   // added, not finished (the one in hand too)
  };
  Stats stats() const;
  // Waits until every range added is done; false after `timeout_ms`.
  bool WaitIdle(int64_t timeout_ms) const;

 private:
  struct Range {
    bool owned = false;
    std::weak_ptr<const void> owner;
    std::byte* begin = nullptr;
    uint64_t length = 0;
    Mode mode = Mode::kAllocate;
    std::function<void(uint64_t, double)> on_done;
  };
  void Enqueue(Range range);
  void Run();
  // Populates one range; false when stopped meanwhile.
  bool Populate(Range& range);

  mutable Mutex mu_;
  mutable CondVar changed_{&mu_};
  std::deque<Range> ranges_ ABSL_GUARDED_BY(mu_);
  uint64_t in_hand_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t populated_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // started by the first Add
};

}  // namespace mooncake_tier
