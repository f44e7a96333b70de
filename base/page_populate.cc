#include "base/page_populate.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>
#include <vector>

namespace mooncake_tier {
namespace {

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack it
#endif

uint64_t PageSize() {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Writes each page without changing it: one atomic OR of 0 into its first
// byte. Atomic, so a concurrent writer's byte is never lost; inline
// assembly on x86, where the sanitizers need not see it.
void TouchPages(std::byte* begin, uint64_t length) {
  const uint64_t page = PageSize();
  for (uint64_t at = 0; at < length; at += page) {
    auto* byte = reinterpret_cast<unsigned char*>(begin + at);
#if defined(__x86_64__)
    asm volatile("lock orb $0, %0" : "+m"(*byte) : : "memory");
#else
    __atomic_fetch_or(byte, 0, __ATOMIC_RELAXED);
#endif
  }
}

}  // namespace

bool PopulatePages(std::byte* begin, uint64_t length) {
  if (length == 0) return true;
  // The kernel's half: every page allocated and mapped writable. EINVAL:
  // a kernel before 5.14; the touches below fault the pages in instead.
  if (madvise(begin, length, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
    return false;  // ENOMEM, EFAULT, EHWPOISON
  }
  // The hypervisor's half: on a VM with shadow page tables the first write
  // to each page of a mapping still exits to the host, about 4.7 us a page
  // (75 us for a 64 KiB copy) after the kernel mapped it. Measured
  // 2026-12-04 on the development VM; docs/design/small-objects.md.
  TouchPages(begin, length);
  return true;
}

uint64_t PopulateResidentPages(std::byte* begin, uint64_t length) {
  const uint64_t page = PageSize();
  const uint64_t pages = (length + page - 1) / page;
  if (pages == 0) return 0;
  std::vector<unsigned char> resident(pages);
  if (mincore(begin, length, resident.data()) != 0) return 0;
  uint64_t populated = 0;
  uint64_t run = 0;
  while (run < pages) {
    if ((resident[run] & 1) == 0) {
      ++run;
      continue;
    }
    uint64_t end = run;
    while (end < pages && (resident[end] & 1) != 0) ++end;
    const uint64_t bytes = std::min(end * page, length) - run * page;
    if (PopulatePages(begin + run * page, bytes)) populated += bytes;
    run = end;
  }
  return populated;
}

PagePopulator::PagePopulator() = default;

PagePopulator::~PagePopulator() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    changed_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

void PagePopulator::Add(std::byte* begin, uint64_t length, Mode mode,
                        std::function<void(uint64_t, double)> on_done) {
  Enqueue({false, {}, begin, length, mode, std::move(on_done)});
}

void PagePopulator::Add(std::weak_ptr<const void> owner, std::byte* begin,
                        uint64_t length, Mode mode,
                        std::function<void(uint64_t, double)> on_done) {
  Enqueue({true, std::move(owner), begin, length, mode, std::move(on_done)});
}

void PagePopulator::Enqueue(Range range) {
  MutexLock lock(&mu_);
  if (stop_) return;
  ranges_.push_back(std::move(range));
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  changed_.SignalAll();
}

PagePopulator::Stats PagePopulator::stats() const {
  MutexLock lock(&mu_);
  return {populated_bytes_, ranges_.size() + in_hand_};
}

bool PagePopulator::WaitIdle(int64_t timeout_ms) const {
  MutexLock lock(&mu_);
  return changed_.WaitFor(std::chrono::milliseconds(timeout_ms), [&] {
    mu_.AssertHeld();
    return ranges_.empty() && in_hand_ == 0;
  });
}

void PagePopulator::Run() {
  for (;;) {
    Range range;
    {
      MutexLock lock(&mu_);
      while (ranges_.empty() && !stop_) changed_.Wait();
      if (stop_) return;
      range = std::move(ranges_.front());
      ranges_.pop_front();
      in_hand_ = 1;
    }
    const bool finished = Populate(range);
    MutexLock lock(&mu_);
    in_hand_ = 0;
    changed_.SignalAll();
    if (!finished) return;
  }
}

bool PagePopulator::Populate(Range& range) {
  const auto start = std::chrono::steady_clock::now();
  uint64_t populated = 0;
  for (uint64_t at = 0; at < range.length; at += kChunkBytes) {
    {
      MutexLock lock(&mu_);
      if (stop_) return false;
    }
    std::shared_ptr<const void> held;
    if (range.owned) {
      held = range.owner.lock();
      if (held == nullptr) break;  // unmapped meanwhile: nothing to do
    }
    const uint64_t bytes = std::min(kChunkBytes, range.length - at);
    uint64_t done = 0;
    if (range.mode == Mode::kAllocate) {
      done = PopulatePages(range.begin + at, bytes) ? bytes : 0;
    } else {
      done = PopulateResidentPages(range.begin + at, bytes);
    }
    populated += done;
    MutexLock lock(&mu_);
    populated_bytes_ += done;
  }
  if (range.on_done) {
    const std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    range.on_done(populated, took.count());
  }
  return true;
}

}  // namespace mooncake_tier
